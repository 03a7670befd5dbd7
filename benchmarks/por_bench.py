"""Partial-order reduction (EXP-POR), OLD commit vs this tree, in one run.

Each case runs ``check``'s :func:`check_graph` (symmetry and the safe-action reduction
on, stopping at the first certain deadlock, as ``creditflow check --publishes N`` does)
in its own process on each side (``sides.py``), rounds alternating old/new; the new side
adds ``partial_order=True``. Reported: states stored, seconds, completeness, verdicts and
counterexample lengths (which must be the same wherever both sides complete).

Cases: issue 21's broker family (readers × channels × queues, one msg_store, ``{2,1}``;
``--big`` adds the issue's own topology with a mirror of queue0, 3.10.8's double debit),
the fanout preset, and two deadlocking presets (a violation is searched again without
EXP-POR for its shortest run, so there the new side costs more).

    .venv/bin/python benchmarks/por_bench.py [--rounds 1] [--old COMMIT] [--big]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling_bench import build  # noqa: E402
from sides import emit_row, old_tree, ran_as_worker, run_side, side_parser, use_tree  # noqa: E402

#: the base commit of this change
DEFAULT_OLD = "1cf0631"
#: (label, scaling_bench builder spec, state budget)
CASES = [
    ("fanout {4,1} p8", ("preset", "fanout", (4, 1), 8), 2_000_000),
    ("fanout {2,1} p20", ("preset", "fanout", (2, 1), 20), 2_000_000),
    ("broker 1r×2c×2q {2,1} p2", ("broker", 1, 2, 2, False, (2, 1), 2), 2_000_000),
    ("broker 2r×1c×2q {2,1} p2", ("broker", 2, 1, 2, False, (2, 1), 2), 2_000_000),
    ("broker 2r×2c×2q {2,1} p1", ("broker", 2, 2, 2, False, (2, 1), 1), 2_000_000),
    ("broker 2r×2c×3q {2,1} p1 @300k", ("broker", 2, 2, 3, False, (2, 1), 1), 300_000),
    ("stalled-queue {2,1} p10", ("preset", "stalled-queue", (2, 1), 10), 2_000_000),
    ("cycle3 {2,1} p3", ("preset", "cycle3", (2, 1), 3), 2_000_000),
    ("broker 2r×2c×3q+mirror {2,1} p1 @3M", ("broker", 2, 2, 3, True, (2, 1), 1), 3_000_000),
]
BIG = {8}


def worker(args: argparse.Namespace) -> None:
    use_tree(args.root)
    from creditflow.conformance.explore.check import CheckOptions, check_graph
    from creditflow.model.credit.spec import CreditSpec

    label, spec, budget = CASES[args.case]
    graph, credit, publishes = build(spec)
    extra = {"partial_order": True} if args.por else {}
    started = time.perf_counter()
    _, result = check_graph(
        graph,
        CheckOptions(
            credit=CreditSpec(*credit),
            publishes=publishes,
            max_states=budget,
            stop_at_deadlock=True,
            **extra,
        ),
    )
    seconds = time.perf_counter() - started
    emit_row(
        {
            "case": label,
            "states": result.n_states,
            "complete": result.complete or result.stopped_at_deadlock,
            "verdict": ",".join(sorted(result.findings)) or "holds",
            "lengths": {pid: [f.kind, f.length] for pid, f in sorted(result.findings.items())},
            "seconds": seconds,
        }
    )


def main() -> None:
    parser = side_parser(__doc__, old=DEFAULT_OLD)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--big", action="store_true", help="add the issue's mirrored broker")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--por", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    cases = [k for k in range(len(CASES)) if args.big or k not in BIG]
    old = old_tree(args.old)
    runs: dict[tuple[int, str], list[dict]] = {}
    print(f"# old {args.old} vs work tree + EXP-POR, {args.rounds} round(s), {time.ctime()}")
    for r in range(args.rounds):
        for k in cases:
            for side, root, flags in (("old", old, []), ("new", None, ["--por"])):
                (row,) = run_side(root, "benchmarks/por_bench.py", ["--case", str(k), *flags])
                runs.setdefault((k, side), []).append(row)
                print(
                    f"round {r + 1} {side:3} {row['case']:38} {row['states']:>10,} states "
                    f"{row['seconds']:8.2f} s complete={row['complete']} {row['verdict']} "
                    f"{row['lengths']}",
                    flush=True,
                )
    print(
        f"\n{'case':38} {'states old':>10} {'new':>10} {'old/new':>8} "
        f"{'s old':>8} {'s new':>8} {'old/new':>8}  same verdicts and lengths"
    )
    for k in cases:
        old_rows, new_rows = runs[(k, "old")], runs[(k, "new")]
        o, n = old_rows[0], new_rows[0]
        both = o["complete"] and n["complete"]
        same = (o["verdict"], o["lengths"]) == (n["verdict"], n["lengths"]) if both else None
        s_old = statistics.median(row["seconds"] for row in old_rows)
        s_new = statistics.median(row["seconds"] for row in new_rows)
        mark = {True: "yes", False: "NO", None: "(not both complete)"}[same]
        print(
            f"{CASES[k][0]:38} {o['states']:>10,}{'' if o['complete'] else '+'} "
            f"{n['states']:>10,}{'' if n['complete'] else '+'} {o['states'] / n['states']:>8.2f} "
            f"{s_old:>8.2f} {s_new:>8.2f} {s_old / s_new:>8.2f}  {mark}"
        )


if __name__ == "__main__":
    main()
