"""The ``amqp`` adapters side by side in one run (AD-AMQ-*): per adapter, the time to
start it (hello and the unknown-op probe) and the median time per op over a fixed
script (reset, begin, attach, then rounds of flow 2 / transfer / transfer / settle 2),
rounds interleaving the adapters. Figures are medians and ratios to the reference.

    .venv/bin/python benchmarks/amqp_adapters_bench.py [--rounds 5] [--cycles 100]
"""

from __future__ import annotations

import argparse
import statistics
import time

from creditflow.adapters.registry import amqp_adapter_factory

ADAPTERS = ("amqp-reference", "proton", "rhea")
SETTINGS = {
    "amqp-reference": {"window": 4, "threshold": 2},
    "proton": {"max_frame_size": 512, "incoming_capacity": 2048},
    "rhea": {"credit_window": 0, "session_buffer_size": 16},
}


def one_round(name: str, cycles: int) -> tuple[float, float]:
    """(start seconds, seconds per op) for one adapter."""
    t0 = time.perf_counter()
    adapter = amqp_adapter_factory(name)()
    start = time.perf_counter() - t0
    try:
        adapter.step({"op": "reset", "settings": SETTINGS[name]})
        adapter.step({"op": "begin", "session": "S"})
        adapter.step({"op": "attach", "session": "S", "link": "L"})
        ops = [
            {"op": "flow", "link": "L", "credit": 2},
            {"op": "transfer", "link": "L"},
            {"op": "transfer", "link": "L"},
            {"op": "settle", "link": "L", "count": 2},
        ]
        t0 = time.perf_counter()
        for _ in range(cycles):
            for op in ops:
                adapter.step(op)
        per_op = (time.perf_counter() - t0) / (cycles * len(ops))
    finally:
        adapter.close()
    return start, per_op


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cycles", type=int, default=100)
    args = ap.parse_args()
    starts: dict[str, list[float]] = {n: [] for n in ADAPTERS}
    per_op: dict[str, list[float]] = {n: [] for n in ADAPTERS}
    for _ in range(args.rounds):
        for name in ADAPTERS:
            s, p = one_round(name, args.cycles)
            starts[name].append(s)
            per_op[name].append(p)
    base = statistics.median(per_op["amqp-reference"])
    print(f"{'adapter':16} {'start ms':>9} {'ms/op':>8} {'× reference':>12}")
    for name in ADAPTERS:
        s, p = statistics.median(starts[name]), statistics.median(per_op[name])
        print(f"{name:16} {s * 1e3:9.0f} {p * 1e3:8.2f} {p / base:12.1f}")


if __name__ == "__main__":
    main()
