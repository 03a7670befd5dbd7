"""Work before exploration grows linearly with the graph (IN-WORK).

Generates chains and stars of 1,000 and 10,000 processes, writes them as node-link
JSON, and times each phase `check` runs before its search — read and validate the file
(input layer), build the network and its properties, look for symmetry — plus a
search of 200 states, side by side in one run. A linear phase shows a ratio near 10
between the two sizes; a quadratic one near 100.

    .venv/bin/python benchmarks/big_graph_bench.py

``--sides`` instead runs `check`'s own path (read, build, a search of 200 states) on
random graphs with twice as many edges as nodes and on chains, the OLD commit against
this tree, each case in a process of its own, and prints seconds and peak RSS side by
side (issue 20: PROP-NOTHING-LOST's per-action table was quadratic in the edges). The
largest cases run on the new side only (the old one needs gigabytes there).

    .venv/bin/python benchmarks/big_graph_bench.py --sides [--old COMMIT]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sides import old_tree, use_tree  # noqa: E402


def chain(n: int) -> dict:
    nodes = [{"id": f"n{i}"} for i in range(n)]
    nodes[0]["source"] = True
    return {
        "graph": {"credit": [1, 1]},
        "nodes": nodes,
        "edges": [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(n - 1)],
    }


def star(n: int) -> dict:
    nodes = [{"id": "hub", "source": True}] + [{"id": f"l{i}"} for i in range(n - 1)]
    return {
        "graph": {"credit": [1, 1]},
        "nodes": nodes,
        "edges": [{"source": "hub", "target": f"l{i}"} for i in range(n - 1)],
    }


def random_graph(n: int) -> dict:
    """``n`` processes, ``2 n`` edges: a random tree from the source plus random forward
    edges (acyclic)."""
    rng = random.Random(1)
    pairs = {(rng.randrange(i), i) for i in range(1, n)}
    while len(pairs) < 2 * n:
        a, b = sorted(rng.sample(range(n), 2))
        pairs.add((a, b))
    nodes = [{"id": f"n{i}"} for i in range(n)]
    nodes[0]["source"] = True
    return {
        "graph": {"credit": [1, 1]},
        "nodes": nodes,
        "edges": [{"source": f"n{a}", "target": f"n{b}"} for a, b in sorted(pairs)],
    }


#: (shape, processes, run on the old side too)
SIDE_CASES = [
    ("random", 1_000, True),
    ("random", 2_000, True),
    ("random", 4_000, True),
    ("chain", 4_000, True),
    ("random", 10_000, False),
    ("chain", 10_000, False),
]


def side_worker(root: str | None, shape: str, n: int) -> None:
    """One case in this process: `check`'s path, its seconds and the peak RSS."""
    use_tree(root)  # before any creditflow import: the old side imports the old tree
    from creditflow.conformance.explore.check import CheckOptions, check_graph
    from creditflow.conformance.inputs.graphs import load_graph_file

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{shape}{n}.json"
        path.write_text(json.dumps(random_graph(n) if shape == "random" else chain(n)))
        started = time.perf_counter()
        graph = load_graph_file(path)
        _, result = check_graph(graph, CheckOptions(max_states=200))
        seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    edges = len(graph.edges)
    source = sys.modules["creditflow.conformance.explore.check"].__file__
    row = {"case": f"{shape} {n:,}/{edges:,}", "seconds": seconds, "mb": peak_mb}
    print(json.dumps({**row, "source": source}))


def run_case(root: Path | None, shape: str, n: int) -> dict:
    command = [sys.executable, __file__, "--case", shape, str(n)]
    if root is not None:
        command += ["--root", str(root)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return {"seconds": float("nan"), "mb": float("nan"), "error": done.stderr[-200:]}
    return json.loads(done.stdout.splitlines()[-1])


def sides(old: str) -> None:
    root = old_tree(old)
    print(f"# {platform.python_implementation()} {platform.python_version()}; old = {old}")
    print(f"{'case (nodes/edges)':22} {'s old':>8} {'s new':>8} {'MB old':>8} {'MB new':>8}")
    for shape, n, on_old in SIDE_CASES:
        new = run_case(None, shape, n)
        was = run_case(root, shape, n) if on_old else {"seconds": float("nan"), "mb": float("nan")}
        print(
            f"{new.get('case', shape):22} {was['seconds']:8.2f} {new['seconds']:8.2f} "
            f"{was['mb']:8.0f} {new['mb']:8.0f}",
            flush=True,
        )


def phases(path: Path) -> dict[str, float]:
    from creditflow.conformance.explore.compiled import CompiledNetwork
    from creditflow.conformance.explore.explorer import explore
    from creditflow.conformance.explore.symmetry import network_symmetry
    from creditflow.conformance.inputs.graphs import load_graph_file

    out = {}
    t = time.perf_counter()
    graph = load_graph_file(path)
    out["read+validate"] = time.perf_counter() - t
    t = time.perf_counter()
    system = CompiledNetwork(graph)
    out["build"] = time.perf_counter() - t
    t = time.perf_counter()
    symmetry = network_symmetry(system.network)
    out["symmetry"] = time.perf_counter() - t
    t = time.perf_counter()
    explore(system, max_states=200, symmetry=symmetry)
    out["200 states"] = time.perf_counter() - t
    return out


def main() -> None:
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in (chain, star):
            rows = {}
            for n in (1_000, 10_000):
                path = Path(tmp) / f"{shape.__name__}{n}.json"
                path.write_text(json.dumps(shape(n)))
                rows[n] = phases(path)
            print(f"\n{shape.__name__}: seconds at 1,000 / 10,000 processes, ratio")
            for phase in rows[1_000]:
                a, b = rows[1_000][phase], rows[10_000][phase]
                print(f"  {phase:14} {a:8.3f} {b:8.3f}  x{b / a if a else float('nan'):6.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sides", action="store_true", help="old commit vs this tree")
    parser.add_argument("--old", default="2ed868b", help="the baseline commit (--sides)")
    parser.add_argument("--case", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        side_worker(args.root, args.case[0], int(args.case[1]))
    elif args.sides:
        sides(args.old)
    else:
        main()
