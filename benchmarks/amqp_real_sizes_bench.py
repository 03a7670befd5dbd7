"""AMQP stall shapes at real sizes: breadth-first search vs the directed runs of
AMQ-DIRECTED-RUN, side by side in one process and one run.

For each case: breadth first within ``--max-states`` (seconds, states, verdict, length)
and ``check_amqp``'s route (the bounded search, then directed runs: seconds, verdict,
length, whether the length is the shortest), with the peak RSS at the end.

    .venv/bin/python benchmarks/amqp_real_sizes_bench.py [--max-states 20000] [--big]

``--big`` adds the session window of 65,535 never renewed (about 25 s for the route).
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from creditflow.conformance.families.amqp.checking import check_amqp, search
from creditflow.conformance.inputs.amqp_topologies import topology_from_dict

ROOT = Path(__file__).resolve().parents[1]


def _doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((ROOT / "spec/graphs/amqp" / f"{name}.json").read_text())
    return doc


def _nodes(doc: dict[str, Any]) -> dict[str, Any]:
    return {n["id"]: n for n in doc["nodes"]}


def never(w: int) -> dict[str, Any]:
    d = _doc("session-window-never-renewed")
    n = _nodes(d)
    n["receiver-session"]["window"]["window"] = w
    n["sender"]["publishes"] = w + 1
    return d


def ring(slots: int) -> dict[str, Any]:
    d = _doc("ring-one-held")
    n = _nodes(d)
    n["receiver-session"]["window"]["slots"] = slots
    n["receiver"]["credit"].update(window=10_000, threshold=5_000)
    n["sender"]["publishes"] = slots + 2
    return d


def real_link(name: str, credit: int) -> dict[str, Any]:
    d = _doc(name)
    n = _nodes(d)
    n["receiver"]["credit"].update(window=credit, threshold=credit // 2)
    n["sender"]["publishes"] = 2 * credit
    for s in ("sender-session", "receiver-session"):
        n[s]["window"].update(window=65_535, threshold=32_767)
    return d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-states", type=int, default=20_000)
    ap.add_argument("--big", action="store_true")
    args = ap.parse_args()
    cases: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("never-renewed W=64", lambda: never(64)),
        ("never-renewed W=2048", lambda: never(2048)),
        ("ring 2,048 slots, one held", lambda: ring(2048)),
        ("credit 10,000 as delta", lambda: real_link("credit-as-delta", 10_000)),
        ("threshold reset, credit 10,000", lambda: real_link("threshold-reset-by-grant", 10_000)),
    ]
    if args.big:
        cases.append(("never-renewed W=65,535", lambda: never(65_535)))
    print(f"{'case':34} {'BFS s':>7} {'states':>8} {'BFS':>20} | {'route s':>7} {'route':>28}")
    for label, make in cases:
        t = topology_from_dict(make(), label)
        t0 = time.perf_counter()
        r = search(t, args.max_states)
        bfs_s = time.perf_counter() - t0
        if r.violation is not None:
            bfs = f"{r.violation.prop[9:]} {len(r.violation.steps)} (shortest)"
        else:
            bfs = "complete, none" if r.complete else "budget, undecided"
        t0 = time.perf_counter()
        c = check_amqp(t, None, True, max_states=args.max_states)
        route_s = time.perf_counter() - t0
        v = c.search.violation
        route = (
            f"{v.prop[9:]} {len(v.steps)} ({'shortest' if c.shortest else 'a witness'})"
            if v is not None
            else f"exit {c.exit_code}"
        )
        print(f"{label:34} {bfs_s:7.2f} {r.states:8,} {bfs:>20} | {route_s:7.2f} {route:>28}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak RSS {rss} MB")


if __name__ == "__main__":
    main()
