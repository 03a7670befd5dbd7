"""Time to a deadlock verdict on seeded random cyclic graphs, OLD commit vs this tree.

Each graph (:func:`random_cyclic_graph`): 3-6 processes on a directed cycle, one source,
a random credit spec and supply; even graphs with every process checking blocked and
random chords, odd ones RabbitMQ-faithful (only the source checks).
Both sides run ``check``'s :func:`check_graph` with the same options on the same graphs,
each side in its own
process (``sides.py``), and report per graph: exit code, deadlock kind, who is blocked
forever, the shortest counterexample's length, states, seconds. The summary compares
verdicts and lengths and prints the end-to-end time ratio.

    .venv/bin/python benchmarks/deadlock_bench.py [--graphs 40] [--seed 13] [--old a32994f]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sides import add_side_options, emit_row, old_tree, ran_as_worker, run_side, use_tree  # noqa: E402


def random_cyclic_graph(rng: random.Random, name: str, faithful: bool = False):
    """A seeded random strongly connected process graph: a directed cycle through every
    process, one source, a random credit spec and supply. Either every process checks
    blocked (NET-ALL-CHECK) and random chords are added, or (``faithful``) only the
    source checks, as RabbitMQ's reader, and there are no chords (a fan-out inside a
    cycle whose processes do not check would copy messages forever). Either way there
    is no sink, so the protocol is finite for the old checker too (no consumed counter)."""
    import networkx as nx

    n = rng.randint(3, 6)
    nodes = [f"p{i}" for i in range(n)]
    g = nx.DiGraph()
    for v in nodes:
        g.add_node(v, checks_blocked=not faithful)
    order = nodes[:]
    rng.shuffle(order)
    for a, b in zip(order, order[1:] + order[:1], strict=True):
        g.add_edge(a, b)
    for _ in range(0 if faithful else rng.randint(0, 2)):
        a, b = rng.sample(nodes, 2)
        g.add_edge(a, b)
    source = order[0]
    g.nodes[source]["source"] = True
    g.nodes[source]["checks_blocked"] = True
    g.nodes[source]["publishes"] = rng.randint(2, 8)
    initial = rng.randint(1, 4)
    g.graph.update(name=name, credit=[initial, rng.randint(1, initial)])
    return g


def worker(args: argparse.Namespace) -> None:
    use_tree(args.root)
    from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
    from creditflow.model.network.graph import flow_graph_from_networkx

    rng = random.Random(args.seed)
    graphs = [
        random_cyclic_graph(rng, f"g{i:02d}", faithful=i % 2 == 1) for i in range(args.graphs)
    ]
    total = 0.0
    for g in graphs:
        started = time.perf_counter()
        graph = flow_graph_from_networkx(g, name=g.graph["name"])
        online = {"stop_at_deadlock": True} if hasattr(CheckOptions, "stop_at_deadlock") else {}
        system, result = check_graph(graph, CheckOptions(max_states=args.max_states, **online))
        row = summary(system, result)
        row = row.to_json() if hasattr(row, "to_json") else row  # an old side: a dict
        seconds = time.perf_counter() - started
        total += seconds
        emit_row(
            {
                "graph": g.graph["name"],
                "exit_code": row["exit_code"],
                "kind": row["deadlock_kind"],
                "blocked_forever": row["blocked_forever"],
                "length": row["shortest_counterexample_length"],
                "states": row["states"],
                "complete": row["complete"],
                "seconds": seconds,
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--graphs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-states", type=int, default=300_000)
    add_side_options(parser)
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    common = [
        "--graphs",
        str(args.graphs),
        "--seed",
        str(args.seed),
        "--max-states",
        str(args.max_states),
    ]
    walls = {}
    rows = {}
    for side, root in (("old", old_tree(args.old)), ("new", None)):
        started = time.perf_counter()
        rows[side] = run_side(root, "benchmarks/deadlock_bench.py", common)
        walls[side] = time.perf_counter() - started
    print(
        f"# {args.graphs} random cyclic graphs, seed {args.seed}, budget {args.max_states} "
        f"states; old = {args.old}"
    )
    print(
        f"{'graph':6} {'old exit':>8} {'new exit':>8} {'len old/new':>11} "
        f"{'states old':>10} {'states new':>10} {'s old':>7} {'s new':>7}  same"
    )
    same_all = True
    decided = {"old": 0, "new": 0}
    exact = 0
    t_exact = {"old": 0.0, "new": 0.0}
    for old, new in zip(rows["old"], rows["new"], strict=True):
        for side, row in (("old", old), ("new", new)):
            decided[side] += row["exit_code"] != 4
        # the old checker's verdict and length are exact only when its search completed
        both = old["complete"] and new["exit_code"] != 4
        same = (old["exit_code"], old["length"], old["kind"], old["blocked_forever"]) == (
            new["exit_code"],
            new["length"],
            new["kind"],
            new["blocked_forever"],
        )
        if both:
            exact += 1
            same_all &= same
            t_exact["old"] += old["seconds"]
            t_exact["new"] += new["seconds"]
        print(
            f"{old['graph']:6} {old['exit_code']:>8} {new['exit_code']:>8} "
            f"{str(old['length']) + '/' + str(new['length']):>11} {old['states']:>10} "
            f"{new['states']:>10} {old['seconds']:7.2f} {new['seconds']:7.2f}  "
            f"{'yes' if same else ('-' if not both else 'NO')}"
        )
    print(
        f"decided: old {decided['old']}/{args.graphs}, new {decided['new']}/{args.graphs} "
        f"(old 'decided' includes deadlocks found by incomplete searches)"
    )
    print(
        f"on the {exact} graphs the old search completes: verdicts, kinds, blocked-forever "
        f"sets and lengths identical: {same_all}; time old {t_exact['old']:.2f} s, "
        f"new {t_exact['new']:.2f} s, ratio {t_exact['old'] / max(t_exact['new'], 1e-9):.2f}x"
    )
    print(
        f"end to end (every graph, process start included): old {walls['old']:.2f} s, "
        f"new {walls['new']:.2f} s, ratio {walls['old'] / walls['new']:.2f}x"
    )
    if not same_all:
        sys.exit(1)


if __name__ == "__main__":
    main()
