"""Conformance of a trivial Python port (the adapter template, over the protocol),
OLD commit vs this tree, in one run: ops/s of each ``conform`` phase and of the whole
run (AD-BATCHED). Each side runs ``run_conform`` in its own process (``sides.py``),
rounds alternating old/new; figures are medians over the rounds. The headline is by
the wall clock: the batched-ops phase's ops/s and the whole ``conform`` run's (every
op of every phase over the run's seconds, adapter start included), with the load
average before and after.

"ops/s, 1 core each" divides the ops by the larger of the driver's and the adapter's
CPU seconds: what the code does when each side has a core (the shared machine's load
stretches the wall clock, not the CPU time).

    .venv/bin/python benchmarks/port_conform_bench.py [--rounds 3] [--max-examples 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sides import emit_row, old_tree, ran_as_worker, run_side, side_parser, use_tree  # noqa: E402

#: the base commit of issue 21's point 5 (fast port conformance)
DEFAULT_OLD = "1cf0631"


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def worker(args: argparse.Namespace) -> None:
    """The whole run, then each phase alone (for its CPU seconds on each side)."""
    use_tree(args.root)
    from creditflow.adapters.registry import adapter_factory
    from creditflow.conformance.differential.conform import PHASES, ConformOptions, run_conform

    def conform(phases: tuple[str, ...]) -> Any:
        with tempfile.TemporaryDirectory() as out:
            cpu0, child0 = time.process_time(), _children_cpu()
            result = run_conform(
                adapter_factory("python-template"),
                ConformOptions(
                    max_examples=args.max_examples,
                    seed=args.seed,
                    out_dir=Path(out),
                    phases=phases,
                ),
            )
            return result, time.process_time() - cpu0, _children_cpu() - child0

    result, driver, adapter = conform(PHASES)
    phases = {p.name: {"ops": p.ops, "seconds": p.seconds} for p in result.phases}
    for name in PHASES:
        alone, phase_driver, phase_adapter = conform((name,))
        phases[name]["cpu"] = max(phase_driver, phase_adapter)
        phases[name]["cpu_ops"] = alone.ops
    emit_row(
        {
            "verdict": result.verdict,
            "ops": result.ops,
            "seconds": result.seconds,
            "driver_cpu": driver,
            "adapter_cpu": adapter,
            "phases": phases,
        }
    )


def main() -> None:
    parser = side_parser(__doc__, old=DEFAULT_OLD)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    old = old_tree(args.old)
    options = ["--max-examples", str(args.max_examples), "--seed", str(args.seed)]
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    print(
        f"# old {args.old} vs work tree, {args.rounds} rounds, conform --adapter python-template "
        f"--max-examples {args.max_examples} --seed {args.seed}; load {os.getloadavg()[0]:.1f}"
    )
    for r in range(args.rounds):
        for side, root in (("old", old), ("new", None)):
            (row,) = run_side(root, "benchmarks/port_conform_bench.py", options)
            runs[side].append(row)
            per_phase = ", ".join(
                f"{name} {p['ops'] / p['seconds']:,.0f}" for name, p in row["phases"].items()
            )
            print(
                f"round {r + 1} {side}: {row['verdict']}, {row['ops']:,} ops in "
                f"{row['seconds']:.1f} s ({row['ops'] / row['seconds']:,.0f} ops/s; {per_phase})",
                flush=True,
            )

    def median(side: str, value: Callable[[dict], float]) -> float:
        return statistics.median(value(row) for row in runs[side])

    print(f"\n{'median ops/s':44} {'old':>9} {'new':>9} {'new/old':>8}")
    names = list(runs["new"][0]["phases"])
    for name in names:
        for label, value in (
            ("wall clock", lambda r, n=name: r["phases"][n]["ops"] / r["phases"][n]["seconds"]),
            ("1 core each", lambda r, n=name: r["phases"][n]["cpu_ops"] / r["phases"][n]["cpu"]),
        ):
            rates = {
                side: median(side, value) if name in runs[side][0]["phases"] else None
                for side in ("old", "new")
            }
            old_rate = f"{rates['old']:>9,.0f}" if rates["old"] else f"{'-':>9}"
            ratio = f"{rates['new'] / rates['old']:>8.2f}" if rates["old"] else f"{'':>8}"
            print(f"{'phase ' + name + ', ' + label:44} {old_rate} {rates['new']:>9,.0f} {ratio}")
    rows = [
        ("whole run, wall clock", lambda r: r["ops"] / r["seconds"]),
        ("whole run, 1 core each", lambda r: r["ops"] / max(r["driver_cpu"], r["adapter_cpu"])),
    ]
    for label, value in rows:
        o, n = median("old", value), median("new", value)
        print(f"{label:44} {o:>9,.0f} {n:>9,.0f} {n / o:>8.2f}")
    batched = "batched-ops"
    rounds = f"median of {args.rounds} rounds"
    if batched in runs["new"][0]["phases"]:
        rate = median(
            "new", lambda r: r["phases"][batched]["ops"] / r["phases"][batched]["seconds"]
        )
        print(f"\nbatched-ops phase by the wall clock ({rounds}): {rate:,.0f} ops/s")
    whole = {side: median(side, lambda r: r["ops"] / r["seconds"]) for side in runs}
    seconds = median("new", lambda r: r["seconds"])
    print(
        f"whole conform run by the wall clock ({rounds}, adapter start included): "
        f"{whole['new']:,.0f} ops/s, {seconds:.1f} s a run (old {whole['old']:,.0f} ops/s)"
    )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print(
        "ops per run: old "
        + ", ".join(f"{r['ops']:,}" for r in runs["old"])
        + "; new "
        + ", ".join(f"{r['ops']:,}" for r in runs["new"])
        + "; verdicts "
        + ", ".join(sorted({r["verdict"] for side in runs.values() for r in side}))
    )


if __name__ == "__main__":
    main()
