"""Explorer throughput and time-to-verdict (issue 2's benchmark).

Runs `check` end to end (graph load, exploration, deadlock analysis, counterexample
search) on fanout {3,1} and {4,1} with 20 publishes and on rabbitmq-publish with small
credits, with the reductions on (the default) and, for the ratio, off.

    .venv/bin/python benchmarks/explorer_bench.py [--skip-unreduced]
"""

from __future__ import annotations

import argparse
import platform
import time

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec

CASES = [
    ("fanout", CreditSpec(3, 1), 20),
    ("fanout", CreditSpec(4, 1), 20),
    ("rabbitmq-publish", CreditSpec(2, 1), 20),
    ("rabbitmq-publish", CreditSpec(3, 1), 12),
    ("cycle3", CreditSpec(2, 1), 6),
]


def run(name: str, spec: CreditSpec, publishes: int, reduced: bool) -> dict:
    started = time.perf_counter()
    graph = load_preset(name)
    _, result = check_graph(
        graph,
        CheckOptions(credit=spec, publishes=publishes, symmetry=reduced, reduce=reduced),
    )
    seconds = time.perf_counter() - started
    verdict = "holds" if not result.findings else ",".join(sorted(result.findings))
    return {
        "states": result.n_states,
        "transitions": result.transitions,
        "seconds": seconds,
        "rate": result.n_states / seconds,
        "verdict": verdict,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--skip-unreduced",
        action="store_true",
        help="only run with the reductions (the unreduced runs take minutes)",
    )
    args = parser.parse_args()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {time.strftime('%Y-%m-%d')}"
    )
    header = (
        f"{'case':32} {'mode':9} {'states':>10} {'transitions':>12} "
        f"{'seconds':>8} {'states/s':>9}  verdict"
    )
    print(header)
    for name, spec, publishes in CASES:
        modes = [True] if args.skip_unreduced else [True, False]
        rows = {}
        for reduced in modes:
            r = run(name, spec, publishes, reduced)
            rows[reduced] = r
            mode = "reduced" if reduced else "full"
            print(
                f"{name + ' ' + str(spec) + ' x' + str(publishes):32} {mode:9} "
                f"{r['states']:>10,} {r['transitions']:>12,} {r['seconds']:>8.2f} "
                f"{r['rate']:>9,.0f}  {r['verdict']}",
                flush=True,
            )
        if len(rows) == 2:
            print(
                f"{'':32} {'ratio':9} {rows[False]['states'] / rows[True]['states']:>10.1f}x "
                f"states, {rows[False]['seconds'] / rows[True]['seconds']:.1f}x time-to-verdict"
            )


if __name__ == "__main__":
    main()
