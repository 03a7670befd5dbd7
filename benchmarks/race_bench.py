"""Issue 31 points 3 and 10 (SCOPE-RACE): time to a verdict by default (the proofs raced
against the search) against the search alone (``--no-prove``) and the proof alone
(``creditflow prove``, same question), side by side in one run, as ratios.

Cases: random directed G(n,p) graphs with ``{3,2}`` and 1 publish a source, asked
``--publishes 1`` (the issue's bounded question; seeds whose answer is a deadlock are
the point), and the issue's fault graph (2 readers -> 2 channels -> 3 queues, queue0
may crash, the channels ignore DOWN), asked the default question. Each run is its own
``creditflow`` process (:func:`realsettings_bench.run_check`), stopped after
``--limit`` seconds; ``--old COMMIT`` adds that commit's default.

    .venv/bin/python benchmarks/race_bench.py [--seeds 0 1 2] [--limit 120] [--old e637b4e]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

import networkx as nx
from realsettings_bench import REPO, run_check, run_stopped_after
from sides import old_tree


def gnp_file(folder: Path, n: int, p: float, seed: int) -> Path:
    """A directed G(n,p) graph (no self loops), ``{3,2}``, sources = nodes without
    inputs (node 0 if none), 1 publish each."""
    g = nx.gnp_random_graph(n, p, seed=seed, directed=True)
    g = nx.relabel_nodes(g, {i: f"p{i}" for i in g.nodes})
    sources = [v for v in g.nodes if g.in_degree(v) == 0] or ["p0"]
    for v in sources:
        g.nodes[v].update(source=True, publishes=1)
    g.graph.update(name=f"gnp-{n}-{p}-{seed}", credit=[3, 2])
    path = folder / f"gnp-{n}-{p}-{seed}.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    return path


def fault_file(folder: Path) -> Path:
    """Issue 31 point 3's graph: the broker family, 2 readers x 1 channel x 3 queues."""
    from creditflow.conformance.sweep.families import FAMILY_KINDS

    kind = FAMILY_KINDS["broker"]
    params = {**kind.defaults(), "readers": 2, "channels_per_reader": 1, "queues": 3}
    g = kind.build(params, random.Random(0))
    g.nodes["queue0"]["may_crash"] = True
    for channel in ("channel0", "channel1"):
        g.nodes[channel]["on_peer_down"] = "ignore"
    g.graph.update(name="fault-broker", credit=[2, 1])
    path = folder / "fault-broker.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    return path


def run_prove(args: list[str], limit: float, folder: Path) -> dict:
    """One ``creditflow prove`` in its own process group: seconds, exit code, result."""
    trace = ["--trace-out", str(folder / "p.itf.json")]
    command = [sys.executable, "-m", "creditflow.conformance.cli", "prove", *args, "--json", *trace]
    run = run_stopped_after(command, limit, cwd=tempfile.gettempdir())
    if run.stdout is None:
        return {"seconds": None, "exit": None, "claim": f"no answer within {limit:g} s"}
    report = json.loads(run.stdout) if run.stdout.strip().startswith("{") else {}
    cex = report.get("counterexample") or {}
    return {
        "seconds": round(run.seconds, 2),
        "exit": run.exit,
        "claim": report.get("claim") or report.get("result"),
        "length": cex.get("length") if isinstance(cex, dict) else None,
    }


def _prove_args(cargs: list[str]) -> list[str]:
    """``check``'s arguments for ``prove`` (which has no --max-states)."""
    out, skip = [], False
    for a in cargs:
        if skip:
            skip = False
        elif a == "--max-states":
            skip = True
        else:
            out.append(a)
    return out


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--graphs",
        nargs="*",
        default=["6:0.25:2", "6:0.25:6", "6:0.35:0", "6:0.25:5"],
        help="G(n,p) graphs as N:P:SEED (the defaults deadlock with 1 publish)",
    )
    parser.add_argument(
        "--max-states", type=int, default=20_000, help="the search's budget on G(n,p) cases"
    )
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument("--old", help="also this commit's default")
    parser.add_argument("--no-fault", action="store_true")
    args = parser.parse_args()
    old = old_tree(args.old) if args.old else None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = []
        for spec in args.graphs:
            n, p, seed = spec.split(":")
            budget = ["--publishes", "1", "--max-states", str(args.max_states)]
            cases.append((gnp_file(folder, int(n), float(p), int(seed)), budget))
        if not args.no_fault:
            cases.append((fault_file(folder), []))
        print(
            "| case | question | default s | --no-prove s | prove s | old default s "
            "| default / fastest alone | verdicts (exit, length) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for path, question in cases:
            cargs = [str(path), *question]
            default = run_check(None, cargs, args.limit, folder)
            search = run_check(None, [*cargs, "--no-prove"], args.limit, folder)
            proof = run_prove(_prove_args(cargs), args.limit, folder)
            previous = run_check(old, cargs, args.limit, folder) if old else None
            alone = [s for s in (search["seconds"], proof["seconds"]) if s is not None]
            verdicts = "; ".join(
                f"{name} {r['exit']}/{r.get('length')}"
                for name, r in (
                    ("default", default),
                    ("search", search),
                    ("prove", proof),
                    ("old", previous),
                )
                if r is not None
            )
            print(
                f"| {path.stem} | {' '.join(question) or 'every supply'} | {default['seconds']} "
                f"| {search['seconds']} | {proof['seconds']} "
                f"| {previous['seconds'] if previous else '-'} "
                f"| {ratio(default['seconds'], min(alone) if alone else None)} | {verdicts} |",
                flush=True,
            )


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "benchmarks"))
    main()
