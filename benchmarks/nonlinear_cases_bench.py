"""Issue 20's class 7 ("work and memory that are not linear"), every case through the
real CLI, side by side for two checkouts in one run: seconds, peak RSS and exit code of
each case, each in a process of its own with a 60 s limit (and a 700 MB address-space
limit for the large trace).

    .venv/bin/python benchmarks/nonlinear_cases_bench.py OLD_PYTHON NEW_PYTHON

where each PYTHON is the interpreter of a virtualenv with creditflow installed
(editable) from the checkout to measure (e.g. /work/main/.venv/bin/python).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_SECONDS = 60


def random_graph(n: int) -> dict:
    rng = random.Random(1)
    pairs = {(rng.randrange(i), i) for i in range(1, n)}
    while len(pairs) < 2 * n:
        a, b = sorted(rng.sample(range(n), 2))
        pairs.add((a, b))
    nodes: list[dict] = [{"id": f"n{i}"} for i in range(n)]
    nodes[0]["source"] = True
    edges = [{"source": f"n{a}", "target": f"n{b}"} for a, b in sorted(pairs)]
    return {"graph": {"credit": [1, 1]}, "nodes": nodes, "edges": edges}


def chain(n: int) -> dict:
    nodes: list[dict] = [{"id": f"n{i}"} for i in range(n)]
    nodes[0]["source"] = True
    edges = [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(n - 1)]
    return {"graph": {"credit": [1, 1]}, "nodes": nodes, "edges": edges}


def actors(name: str, nodes: list[dict], edges: list[tuple[str, str]], **graph: int) -> dict:
    return {
        "directed": True,
        "multigraph": False,
        "graph": {"name": name, "limit": 2, **graph},
        "nodes": nodes,
        "edges": [{"source": a, "target": b} for a, b in edges],
    }


PICTURE = """
import sys, time
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.inputs.graphs import load_graph_file
from creditflow.conformance.traces.pictures import deadlock_dot, write_picture
system = CheckedNetwork(load_graph_file(sys.argv[1]))
dot, svg = write_picture(deadlock_dot(system, system.network.initial()), sys.argv[2])
print("svg" if svg else "dot only")
"""


def inputs(folder: Path) -> list[tuple[str, list[str], int | None]]:
    """(case, argv after the interpreter, address-space limit in MB)."""
    w = lambda name, doc: str(_write(folder / name, doc))  # noqa: E731
    cf = ["-m", "creditflow.conformance.cli"]
    rng = random.Random(1)
    pairs = {(rng.randrange(i), i) for i in range(1, 3_000)}
    while len(pairs) < 6_000:
        a, b = sorted(rng.sample(range(3_000), 2))
        pairs.add((a, b))
    dot = 'digraph r {\n  credit="2,1";\n  n0 [source=true];\n'
    dot += "".join(f"  n{a} -> n{b};\n" for a, b in sorted(pairs)) + "}\n"
    (folder / "r3000.dot").write_text(dot)
    (folder / "picture.py").write_text(PICTURE)
    star = [{"id": "hub", "reads": 4}] + [{"id": f"s{i}"} for i in range(2_000)]
    achain = [{"id": "a0", "reads": 1}] + [{"id": f"a{i}"} for i in range(1, 3_000)]
    hops = [{"id": "a", "reads": 1}, {"id": "b"}]
    paging = {
        "name": "sizes",
        "settings": {"msg_store_credit_disc_bound": [10, 5]},
        "queue": {"durable": True},
        "steps": [{"op": "publish", "count": 100_000, "sizes": [100, 5000, 0, 70000]}],
    }
    trace = folder / "big.itf.json"
    _big_trace(trace, folder)
    return [
        (
            "check random 10,000/20,000",
            [*cf, "check", w("r.json", random_graph(10_000)), "--max-states", "1000"],
            None,
        ),
        (
            "check chain 10,000",
            [*cf, "check", w("c.json", chain(10_000)), "--max-states", "1000"],
            None,
        ),
        (
            "picture of a 3,000/6,000 DOT graph",
            [str(folder / "picture.py"), str(folder / "r3000.dot"), str(folder / "p.dot")],
            None,
        ),
        (
            "accounts max_hops 10^6",
            [
                *cf,
                "accounts",
                "check",
                w("h.json", actors("h", hops, [("a", "b"), ("b", "a")], max_hops=10**6)),
                "--max-states",
                "1000",
            ],
            None,
        ),
        (
            "accounts 3,000-actor chain",
            [
                *cf,
                "accounts",
                "check",
                w("ac.json", actors("c", achain, [(f"a{i}", f"a{i + 1}") for i in range(2_999)])),
                "--max-states",
                "1000",
            ],
            None,
        ),
        (
            "accounts 2,000-sink star",
            [
                *cf,
                "accounts",
                "check",
                w("as.json", actors("s", star, [("hub", f"s{i}") for i in range(2_000)])),
                "--max-states",
                "1000",
            ],
            None,
        ),
        ("paging 100,000-message size pattern", [*cf, "paging", w("p.json", paging)], None),
        (
            f"replay a {trace.stat().st_size / 1e6:.0f} MB trace, 700 MB limit",
            [*cf, "replay", str(trace), "--adapter", "reference"],
            700,
        ),
    ]


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _big_trace(path: Path, folder: Path) -> None:
    """A ~50 MB network trace: a check counterexample's states repeated (it is refused
    as a trace once read; what is measured is reading it)."""
    small = folder / "cycle2.itf.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "creditflow.conformance.cli",
            "check",
            "cycle2",
            "--trace-out",
            str(small),
        ],
        capture_output=True,
        cwd=folder,
    )
    doc = json.loads(small.read_text())
    states = doc["states"]
    doc["states"] = [{**states[i % len(states)], "#meta": {"index": i}} for i in range(26_000)]
    path.write_text(json.dumps(doc, indent=1))


def measure(python: str, argv: list[str], limit_mb: int | None, cwd: Path) -> str:
    """Run one case; its seconds, peak RSS (``wait4``) and exit code."""

    def limits() -> None:
        if limit_mb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))

    err_path = cwd / "stderr.txt"
    started = time.perf_counter()
    with open(err_path, "wb") as err_file:
        proc = subprocess.Popen(
            [python, *argv],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            preexec_fn=limits,
        )
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > LIMIT_SECONDS:
                proc.kill()
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                return f"> {LIMIT_SECONDS} s (killed)"
            time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    err = err_path.read_text(errors="replace")
    tb = ", Traceback" if "Traceback" in err else ""
    mem = ", MemoryError" if "MemoryError" in err else ""
    return f"{seconds:.1f} s, {usage.ru_maxrss / 1024:,.0f} MB, exit {proc.returncode}{tb}{mem}"


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"# old: {old}\n# new: {new}")
        print("| case | old | new |\n|---|---|---|", flush=True)
        for name, argv, limit in inputs(folder):
            was, now = measure(old, argv, limit, folder), measure(new, argv, limit, folder)
            print(f"| {name} | {was} | {now} |", flush=True)


if __name__ == "__main__":
    main()
