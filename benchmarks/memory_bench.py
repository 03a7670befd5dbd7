"""Explorer memory per stored state (EXP-STORE), OLD commit vs this tree, in one run.

Each case runs ``check``'s :func:`check_graph` in its own process on each side
(``sides.py``), rounds alternating old/new; the figures are medians over the rounds.
Peak memory is the process's peak resident set (``ru_maxrss``); "base" is the peak
after the imports and a tiny check, before the case; bytes per state are the peak
divided by the stored states (and, in brackets, without the base).

Cases: the issue's fanout ``{4,1}`` × 20 without reductions, full search (4,419,534
states), and the issue's broker topology (2 readers × 2 channels × 3 queues, a mirror)
with symmetry, cut at a budget, the wide-state case the default budget is sized by.

    .venv/bin/python benchmarks/memory_bench.py [--rounds 3] [--old COMMIT] [--quick]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling_bench import build  # noqa: E402
from sides import emit_row, old_tree, ran_as_worker, run_side, side_parser, use_tree  # noqa: E402

#: the base commit of issue 21's work
DEFAULT_OLD = "2ed868b"
#: (label, scaling_bench builder spec, symmetry and reductions, state budget)
CASES = [
    ("fanout {4,1} p20 full", ("preset", "fanout", (4, 1), 20), False, 5_000_000),
    ("fanout {3,1} p20 full", ("preset", "fanout", (3, 1), 20), False, 5_000_000),
    (
        "broker 2r×2c×3q+mirror {2,1} p3 @1M",
        ("broker", 2, 2, 3, True, (2, 1), 3),
        True,
        1_000_000,
    ),
]
QUICK = {1}


def _peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def worker(args: argparse.Namespace) -> None:
    use_tree(args.root)
    from creditflow.conformance.explore.check import CheckOptions, check_graph
    from creditflow.model.credit.spec import CreditSpec

    label, spec, reduced, budget = CASES[args.case]
    graph, credit, publishes = build(spec)
    warm, _, _ = build(("preset", "fanout", (2, 1), 2))
    check_graph(warm, CheckOptions(symmetry=False, reduce=False))
    base = _peak_bytes()
    started = time.perf_counter()
    _, result = check_graph(
        graph,
        CheckOptions(
            credit=CreditSpec(*credit),
            publishes=publishes,
            symmetry=reduced,
            reduce=reduced,
            max_states=budget,
        ),
    )
    seconds = time.perf_counter() - started
    verdict = "holds" if not result.findings else ",".join(sorted(result.findings))
    emit_row(
        {
            "case": label,
            "states": result.n_states,
            "transitions": result.transitions,
            "complete": result.complete,
            "verdict": verdict,
            "lengths": {pid: f.length for pid, f in sorted(result.findings.items())},
            "seconds": seconds,
            "peak": _peak_bytes(),
            "base": base,
        }
    )


def main() -> None:
    parser = side_parser(__doc__, old=DEFAULT_OLD)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the small fanout case only")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    cases = [k for k in range(len(CASES)) if not args.quick or k in QUICK]
    old = old_tree(args.old)
    runs: dict[tuple[int, str], list[dict]] = {}
    print(f"# old {args.old} vs work tree, {args.rounds} rounds, {time.strftime('%Y-%m-%d %H:%M')}")
    for r in range(args.rounds):
        for k in cases:
            for side, root in (("old", old), ("new", None)):
                (row,) = run_side(root, "benchmarks/memory_bench.py", ["--case", str(k)])
                runs.setdefault((k, side), []).append(row)
                print(
                    f"round {r + 1} {side:3} {row['case']:36} {row['states']:>10,} states "
                    f"{row['peak'] / 1e6:8.1f} MB peak {row['seconds']:7.2f} s  {row['verdict']}",
                    flush=True,
                )
    print(
        f"\n{'case':36} {'states':>10} {'same':>5} {'peak MB old':>11} {'new':>7} {'new/old':>7}"
        f" {'B/state old':>11} {'new':>13} {'s old':>7} {'s new':>7} {'new/old':>7}"
    )
    for k in cases:
        old_rows, new_rows = runs[(k, "old")], runs[(k, "new")]
        same = all(
            (o["states"], o["transitions"], o["complete"], o["verdict"], o["lengths"])
            == (n["states"], n["transitions"], n["complete"], n["verdict"], n["lengths"])
            for o in old_rows
            for n in new_rows
        )
        states = new_rows[0]["states"]

        def median(rows: list[dict], key: str) -> float:
            return statistics.median(row[key] for row in rows)

        peak_old, peak_new = median(old_rows, "peak"), median(new_rows, "peak")
        base_new = median(new_rows, "base")
        s_old, s_new = median(old_rows, "seconds"), median(new_rows, "seconds")
        print(
            f"{CASES[k][0]:36} {states:>10,} {str(same):>5} {peak_old / 1e6:>11.1f} "
            f"{peak_new / 1e6:>7.1f} {peak_new / peak_old:>7.2f} {peak_old / states:>11.0f} "
            f"{peak_new / states:>5.0f} ({(peak_new - base_new) / states:>4.0f}) "
            f"{s_old:>7.2f} {s_new:>7.2f} {s_new / s_old:>7.2f}"
        )


if __name__ == "__main__":
    main()
