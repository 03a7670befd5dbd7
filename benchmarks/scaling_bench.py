"""Explorer scaling, OLD commit vs this tree: graph size × credit × publishes → states,
seconds, verdict, each case run by ``check``'s :func:`check_graph` on both sides (each
side in its own process, ``sides.py``), with the ratios.

Cases: the sweep's broker family (SW-BROKER) growing from 1 reader × 1 channel × 1
queue to the issue's 2 readers × 2 channels × 3 queues with one mirror edge, the
fan-out and publish-path presets at growing credit and supply, and the 2-cycle feeding
a sink (finite only without the consumed counters, EXP-FINITE). The new side settles a
budget-bound case with Z3 as ``check`` does (EXP-SETTLE); its verdict then says so.

    .venv/bin/python benchmarks/scaling_bench.py [--max-states 5000000] [--quick]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sides import add_side_options, emit_row, old_tree, ran_as_worker, run_side, use_tree  # noqa: E402

#: (label, builder args) — builders below; the last broker case is the issue's topology
CASES = [
    ("broker 1r×1c×1q {2,1} p3", ("broker", 1, 1, 1, False, (2, 1), 3)),
    ("broker 1r×2c×2q {2,1} p3", ("broker", 1, 2, 2, False, (2, 1), 3)),
    ("broker 2r×1c×2q {2,1} p3", ("broker", 2, 1, 2, False, (2, 1), 3)),
    ("broker 2r×2c×3q+mirror {2,1} p3", ("broker", 2, 2, 3, True, (2, 1), 3)),
    ("fanout {3,1} p10", ("preset", "fanout", (3, 1), 10)),
    ("fanout {3,1} p20", ("preset", "fanout", (3, 1), 20)),
    ("rabbitmq-publish {2,1} p20", ("preset", "rabbitmq-publish", (2, 1), 20)),
    ("rabbitmq-publish {3,1} p12", ("preset", "rabbitmq-publish", (3, 1), 12)),
    ("cycle3 {2,1} p6", ("preset", "cycle3", (2, 1), 6)),
    ("2-cycle feeding a sink {2,1} p3", ("cycle-sink", (2, 1), 3)),
]
QUICK = {0, 1, 4, 6, 8, 9}


def build(spec: tuple):
    """The FlowGraph of one case and its credit and supply."""
    import networkx as nx

    from creditflow.conformance.inputs.graphs import load_preset
    from creditflow.model.network.graph import flow_graph_from_networkx

    if spec[0] == "preset":
        _, name, credit, publishes = spec
        return load_preset(name), credit, publishes
    if spec[0] == "cycle-sink":
        _, credit, publishes = spec
        g = nx.DiGraph(name="cycle-sink", credit=[1, 1])
        g.add_node("A", source=True, publishes=1)
        g.add_edges_from([("A", "B"), ("B", "A"), ("B", "C")])
        return flow_graph_from_networkx(g), credit, publishes
    from creditflow.conformance.sweep.families import FAMILY_KINDS

    _, readers, channels, queues, mirror, credit, publishes = spec
    kind = FAMILY_KINDS["broker"]
    g = kind.build(
        {**kind.defaults(), "readers": readers, "channels_per_reader": channels, "queues": queues},
        random.Random(0),
    )
    if mirror:  # one mirror of queue0, fed by one channel, with 3.10.8's double debit
        channel = next(iter(sorted(v for v in g if v.startswith("channel"))))
        g.add_node("queue0.mirror0", role="rabbit_mirror_queue_slave")
        g.add_edge(channel, "queue0.mirror0", sends_per_message=2)
    g.graph.update(name="broker", credit=[1, 1])
    return flow_graph_from_networkx(g, name="broker"), credit, publishes


def worker(args: argparse.Namespace) -> None:
    use_tree(args.root)
    from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
    from creditflow.model.credit.spec import CreditSpec

    online = {"stop_at_deadlock": True} if hasattr(CheckOptions, "stop_at_deadlock") else {}
    try:  # EXP-SETTLE, as `creditflow check` does it (the new side only)
        from creditflow.conformance.symbolic.settle import settle_open_check
    except ImportError:
        settle_open_check = None
    for i, (label, spec) in enumerate(CASES):
        if args.quick and i not in QUICK:
            continue
        graph, credit, publishes = build(spec)  # not timed: the graph is the input
        started = time.perf_counter()
        options = CheckOptions(
            credit=CreditSpec(*credit), publishes=publishes, max_states=args.max_states, **online
        )
        system, result = check_graph(graph, options)
        row = summary(system, result)
        if settle_open_check is not None:
            row = settle_open_check(row, graph, options)
        row = row.to_json() if hasattr(row, "to_json") else row  # an old side: a dict
        seconds = time.perf_counter() - started
        verdict = {0: "holds", 4: "incomplete", 10: "deadlock", 12: "violation"}.get(
            row["exit_code"], str(row["exit_code"])
        )
        if row.get("settled", {}).get("proved"):
            verdict += " (proved, EXP-SETTLE)"
        emit_row(
            {
                "case": label,
                "nodes": len(graph.nodes),
                "edges": len(graph.edges),
                "states": row["states"],
                "seconds": seconds,
                "verdict": verdict,
                "length": row["shortest_counterexample_length"],
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-states", type=int, default=5_000_000)
    parser.add_argument("--quick", action="store_true", help="the small cases only")
    add_side_options(parser)
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    common = ["--max-states", str(args.max_states)] + (["--quick"] if args.quick else [])
    rows = {
        side: run_side(root, "benchmarks/scaling_bench.py", common)
        for side, root in (("old", old_tree(args.old)), ("new", None))
    }
    print(f"# budget {args.max_states} states; old = {args.old}")
    print(
        f"{'case':34} {'n/e':>5} {'states old':>10} {'states new':>10} {'s old':>8} "
        f"{'s new':>8} {'time ratio':>10}  verdict old / new (length)"
    )
    for old, new in zip(rows["old"], rows["new"], strict=True):
        print(
            f"{old['case']:34} {old['nodes']:>2}/{old['edges']:<2} {old['states']:>10} "
            f"{new['states']:>10} {old['seconds']:8.2f} {new['seconds']:8.2f} "
            f"{old['seconds'] / max(new['seconds'], 1e-9):9.2f}x  {old['verdict']} "
            f"({old['length']}) / {new['verdict']} ({new['length']})"
        )


if __name__ == "__main__":
    main()
