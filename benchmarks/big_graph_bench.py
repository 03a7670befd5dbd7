"""Work before exploration grows linearly with the graph (IN-WORK).

Generates chains and stars of 1,000 and 10,000 processes, writes them as node-link
JSON, and times each phase `check` runs before its search — read and validate the file
(input layer), build the network and its properties, look for symmetry — plus a
search of 200 states, side by side in one run. A linear phase shows a ratio near 10
between the two sizes; a quadratic one near 100.

    .venv/bin/python benchmarks/big_graph_bench.py
"""

from __future__ import annotations

import json
import platform
import tempfile
import time
from pathlib import Path

from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.conformance.inputs.graphs import load_graph_file


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


def phases(path: Path) -> dict[str, float]:
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
    main()
