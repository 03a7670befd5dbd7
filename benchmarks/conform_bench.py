"""Throughput of differential checking (AD-PIPELINE): steps/s of the model alone, and
of model + implementation compared after every op, against the real RabbitMQ module in
an Erlang VM (batched and lockstep), the model as a protocol subprocess, and the model
in-process. ``make bench`` runs it; figures are printed as ratios from one run.

The workload is realistic and bounded: a seeded random run of the ``rabbitmq-publish``
preset (reader -> channel -> queue -> msg_store) with credit {20,10} on every edge, so
that processes block, defer and get bumped often, projected to per-process ops
(TRACE-PROJECTION), plus a ``state`` query every 50 ops.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.projection import step_ops
from creditflow.conformance.differential.protocol import DEFAULT_SPEC, Op
from creditflow.conformance.differential.session import DifferentialRun
from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec


def workload(n_ops: int, seed: int = 1) -> list[Op]:
    graph = load_preset("rabbitmq-publish").with_credit(CreditSpec(20, 10)).with_publishes(10**9)
    net = CreditNetwork(graph)
    rng = random.Random(seed)
    state, ops = net.initial(), []
    while len(ops) < n_ops:
        action = rng.choice(list(net.enabled(state)))
        ops += step_ops(graph, net.decode(action))
        state = net.apply(state, action)
        if len(ops) % 50 == 0:
            ops.append(Op("state", rng.choice(graph.node_names)))
    return ops[:n_ops]


def model_alone(ops: Sequence[Op]) -> Rate:
    model = ProcessModel(DEFAULT_SPEC)
    apply = model.apply
    cpu0, started = time.process_time(), time.perf_counter()
    for op in ops:
        apply(op)
    return Rate(len(ops), time.perf_counter() - started, time.process_time() - cpu0, 0.0)


def _child_cpu(adapter: object) -> float:
    """CPU seconds (user + system) the adapter's process has used, from /proc."""
    proc = getattr(adapter, "_proc", None)
    if proc is None:
        return 0.0
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Rate:
    """Steps/s by the wall clock, and the CPU microseconds per step of each side."""

    steps: int
    wall: float
    driver_cpu: float
    adapter_cpu: float

    @property
    def per_second(self) -> float:
        return self.steps / self.wall

    @property
    def cpu_bound(self) -> float:
        """Steps/s if each side had a core of its own: the slower side's CPU time (on a
        shared, loaded machine the wall clock understates what the code can do)."""
        return self.steps / max(self.driver_cpu, self.adapter_cpu, 1e-9)


def differential(adapter_name: str, ops: Sequence[Op], batch: int) -> Rate:
    with adapter_factory(adapter_name)() as adapter:
        run = DifferentialRun(adapter, DEFAULT_SPEC)
        cpu0, child0, started = time.process_time(), _child_cpu(adapter), time.perf_counter()
        assert run.check_stream(ops, batch) is None
        wall = time.perf_counter() - started
        return Rate(len(ops), wall, time.process_time() - cpu0, _child_cpu(adapter) - child0)


def best(measure: Callable[[], Rate], repeat: int) -> Rate:
    """The fastest of ``repeat`` runs (other load on the machine only slows runs down)."""
    return max((measure() for _ in range(repeat)), key=lambda r: r.per_second)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    ops = workload(args.ops)
    kinds = {k: sum(1 for op in ops if op.kind == k) for k in ("send", "ack", "bump", "state")}
    print(
        f"workload: {len(ops):,} ops of rabbitmq-publish, "
        + ", ".join(f"{k} {v / len(ops):.0%}" for k, v in kinds.items())
        + f"; best of {args.repeat}; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    few = ops[: len(ops) // 10]
    rows = [
        ("model alone (ProcessModel.apply)", best(lambda: model_alone(ops), args.repeat), 500_000),
        (
            f"model vs real RabbitMQ credit_flow, batches of {args.batch}",
            best(lambda: differential("rabbitmq", ops, args.batch), args.repeat),
            50_000,
        ),
        (
            "model vs real RabbitMQ credit_flow, lockstep (batch 1)",
            best(lambda: differential("rabbitmq", few, 1), args.repeat),
            None,
        ),
        (
            f"model vs model as a protocol subprocess, batches of {args.batch}",
            best(lambda: differential("reference-process", ops, args.batch), args.repeat),
            None,
        ),
        (
            "model vs model in-process",
            best(lambda: differential("reference", ops, args.batch), args.repeat),
            None,
        ),
    ]
    base = rows[1][1].per_second
    print(
        f"{'':58} {'steps/s':>9} {'target':>11} {'ratio':>6} {'us/step driver':>15} "
        f"{'adapter':>8} {'steps/s, 1 core each':>21}"
    )
    for name, rate, target in rows:
        met = (
            ""
            if target is None
            else (f"{target:,}" + (" ok" if rate.per_second >= target else " MISS"))
        )
        us = 1e6 / rate.steps
        adapter = f"{rate.adapter_cpu * us:8.1f}" if rate.adapter_cpu else f"{'':8}"
        bound = f"{rate.cpu_bound:21,.0f}"
        print(
            f"{name:58} {rate.per_second:9,.0f} {met:>11} {rate.per_second / base:5.2f}x "
            f"{rate.driver_cpu * us:15.1f} {adapter} {bound}"
        )


if __name__ == "__main__":
    main()
