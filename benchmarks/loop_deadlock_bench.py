"""Issue 21's cyclic broker, OLD commit vs this tree: ``check``'s deadlock verdict, its
length, whether it is certified shortest, states, seconds and peak memory.

The graph: the sweep's broker family (SW-BROKER) with 2 readers × 2 channels × 3 queues,
one mirror of queue0 fed by channel0.0 with 3.10.8's double debit, one msg_store, and
one shovel-like loop: queue1 republishes into channel1.0; credit ``{2,1}``, 3 publishes
per reader. Both sides run ``check``'s :func:`check_graph` with EXP-ONLINE, as
``creditflow check`` does, each in its own process (``sides.py``), so that each peak
resident size is that side's own.

    .venv/bin/python benchmarks/loop_deadlock_bench.py [--max-states 5000000] [--old COMMIT]
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sides import add_side_options, emit_row, old_tree, ran_as_worker, run_side, use_tree  # noqa: E402

if TYPE_CHECKING:
    from creditflow.model.network.graph import FlowGraph


def broker_with_a_loop() -> FlowGraph:
    """The FlowGraph of the case (as ``tests/test_deadlock_online.py`` builds it)."""
    from creditflow.conformance.sweep.families import FAMILY_KINDS
    from creditflow.model.network.graph import flow_graph_from_networkx

    kind = FAMILY_KINDS["broker"]
    params = {**kind.defaults(), "readers": 2, "channels_per_reader": 2, "queues": 3}
    g = kind.build(params, random.Random(0))
    g.add_node("queue0.mirror0", role="rabbit_mirror_queue_slave")
    g.add_edge("channel0.0", "queue0.mirror0", sends_per_message=2)
    g.add_edge("queue1", "channel1.0")
    g.graph.update(name="broker-loop", credit=[1, 1])
    return flow_graph_from_networkx(g, name="broker-loop")


def worker(args: argparse.Namespace) -> None:
    use_tree(args.root)
    from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
    from creditflow.model.credit.spec import CreditSpec

    graph = broker_with_a_loop()  # not timed: the graph is the input
    started = time.perf_counter()
    options = CheckOptions(
        credit=CreditSpec(2, 1), publishes=3, max_states=args.max_states, stop_at_deadlock=True
    )
    system, result = check_graph(graph, options)
    row = summary(system, result)
    row = row.to_json() if hasattr(row, "to_json") else row  # an old side: a dict
    seconds = time.perf_counter() - started
    deadlock = result.deadlock
    emit_row(
        {
            "kind": row["deadlock_kind"],
            "length": row["shortest_counterexample_length"],
            # the old side has no shortest_certified: its "not proven shortest" note
            "certified": row.get(
                "shortest_certified",
                deadlock is not None and "not proven shortest" not in deadlock.detail,
            ),
            "blocked_forever": row["blocked_forever"],
            "states": row["states"],
            "seconds": seconds,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-states", type=int, default=5_000_000)
    add_side_options(parser)
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    common = ["--max-states", str(args.max_states)]
    rows = {
        side: run_side(root, "benchmarks/loop_deadlock_bench.py", common)[0]
        for side, root in (("old", old_tree(args.old)), ("new", None))
    }
    print(f"# broker 2r×2c×3q + mirror + loop, {{2,1}}, p3; budget {args.max_states}")
    print(f"{'side':4} {'kind':16} {'len':>3} {'certified':>9} {'states':>9} {'s':>7} {'GB':>5}")
    for side, row in rows.items():
        print(
            f"{side:4} {row['kind'] or '-':16} {row['length'] or '-':>3} "
            f"{'yes' if row['certified'] else 'no':>9} {row['states']:>9} "
            f"{row['seconds']:7.2f} {row['peak_gb']:5.2f}"
        )
    old, new = rows["old"], rows["new"]
    print(
        f"time ratio old/new {old['seconds'] / max(new['seconds'], 1e-9):.1f}x, "
        f"peak memory ratio {old['peak_gb'] / max(new['peak_gb'], 1e-9):.1f}x, "
        f"states ratio {old['states'] / max(new['states'], 1):.0f}x"
    )


if __name__ == "__main__":
    main()
