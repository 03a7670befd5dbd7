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
import random
import time
from collections.abc import Sequence

from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential import DifferentialRun
from creditflow.conformance.graph_io import load_preset
from creditflow.conformance.process_model import ProcessModel
from creditflow.conformance.projection import step_ops
from creditflow.conformance.protocol import DEFAULT_SPEC, Op
from creditflow.model.credit_spec import CreditSpec
from creditflow.model.network import CreditNetwork


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


def model_alone(ops: Sequence[Op]) -> float:
    model = ProcessModel(DEFAULT_SPEC)
    apply = model.apply
    started = time.perf_counter()
    for op in ops:
        apply(op)
    return len(ops) / (time.perf_counter() - started)


def differential(adapter_name: str, ops: Sequence[Op], batch: int) -> float:
    with adapter_factory(adapter_name)() as adapter:
        run = DifferentialRun(adapter, DEFAULT_SPEC)
        started = time.perf_counter()
        assert run.check_stream(ops, batch) is None
        return len(ops) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=2000)
    args = parser.parse_args()
    ops = workload(args.ops)
    kinds = {k: sum(1 for op in ops if op.kind == k) for k in ("send", "ack", "bump", "state")}
    print(f"workload: {len(ops):,} ops of rabbitmq-publish, "
          + ", ".join(f"{k} {v / len(ops):.0%}" for k, v in kinds.items()))
    rows = [
        ("model alone (ProcessModel.apply)", model_alone(ops), 500_000),
        (f"model vs real RabbitMQ credit_flow, batches of {args.batch}",
         differential("rabbitmq", ops, args.batch), 50_000),
        ("model vs real RabbitMQ credit_flow, lockstep (batch 1)",
         differential("rabbitmq", ops[: len(ops) // 10], 1), None),
        (f"model vs model as a protocol subprocess, batches of {args.batch}",
         differential("reference-process", ops, args.batch), None),
        ("model vs model in-process", differential("reference", ops, args.batch), None),
    ]
    base = rows[1][1]
    print(f"{'':62} {'steps/s':>10} {'target':>9} {'vs rabbitmq batched':>20}")
    for name, rate, target in rows:
        met = "" if target is None else (f"{target:,}" + (" ok" if rate >= target else " MISS"))
        print(f"{name:62} {rate:10,.0f} {met:>9} {rate / base:19.2f}x")


if __name__ == "__main__":
    main()
