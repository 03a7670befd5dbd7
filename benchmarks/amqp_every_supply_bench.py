"""AMQP "every supply" at real sizes (Z3-AMQ-EVERY-SUPPLY): the proof for every supply
side by side with breadth-first search of one supply, in one process and one run.

For each publish, link or consume (without drains) case: breadth first over supply
``--supply`` within ``--max-states`` (seconds, states, whether it finished), then the
proof (seconds, what it proved, the invariant's size), their ratio, and the peak RSS at
the end.

    .venv/bin/python benchmarks/amqp_every_supply_bench.py [--supply 400] [--max-states 20000]
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace
from typing import Literal

from creditflow.conformance.families.amqp.checking import search
from creditflow.conformance.families.amqp.supply_encoding import prove_every_supply
from creditflow.conformance.inputs.amqp_topologies import load_amqp_preset
from creditflow.model.amqp.policies import (
    CreditWindow,
    RabbitLinkCredit,
    RabbitSessionWindow,
    WindowFixed,
)
from creditflow.model.amqp.topology import Topology


def case(window: int, credit: int) -> Topology:
    t = load_amqp_preset("rabbitmq4-publish")
    return replace(
        t,
        name=f"publish W={window:,} C={credit:,}",
        broker_window=RabbitSessionWindow(window),
        broker_credit=RabbitLinkCredit(credit),
    )


def link_case(
    window: int, credit: int, encoding: Literal["absolute", "delta"] = "absolute"
) -> Topology:
    t = load_amqp_preset("credit-as-delta")
    w = WindowFixed(window, window // 2)
    pol = CreditWindow(credit, credit // 2, encoding=encoding)
    return replace(
        t,
        name=f"link W={window:,} credit={credit:,} {encoding}",
        sender_window=w,
        receiver=t.receiver._replace(window=w, credit=pol),
    )


def consume_case(window: int, credit: int, queue_credit: int) -> Topology:
    t = load_amqp_preset("rabbitmq4-consume")
    w = WindowFixed(window, window // 2)
    assert t.relay is not None
    return replace(
        t,
        name=f"consume W={window:,} credit={credit:,} Q={queue_credit}",
        receiver=t.receiver._replace(window=w, credit=CreditWindow(credit, credit // 2), drains=0),
        relay=replace(t.relay, max_queue_credit=queue_credit),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--supply", type=int, default=400)
    ap.add_argument("--max-states", type=int, default=20_000)
    args = ap.parse_args()
    cases = [case(400, 170), case(65_535, 10_000), case(2**31 - 1, 10_000), case(2_048, 2)]
    cases += [link_case(65_535, 10_000), link_case(65_535, 10_000, "delta")]
    cases += [consume_case(2_048, 100, 256), consume_case(65_535, 10_000, 256)]
    print(
        f"{'case':34} {'BFS s':>7} {'states':>7} {'BFS':>9} | {'proof s':>7} "
        f"{'lemmas':>6} {'open':>16} | {'ratio':>6}"
    )
    for t in cases:
        started = time.perf_counter()
        r = search(replace(t, supply=args.supply), args.max_states)
        bfs_s = time.perf_counter() - started
        bfs = "violated" if r.violation else "complete" if r.complete else "budget"
        started = time.perf_counter()
        proof = prove_every_supply(t)
        proof_s = time.perf_counter() - started
        assert proof is not None
        left = ",".join(p.removeprefix("PROP-AMQ-") for p in proof.open) or "-"
        print(
            f"{t.name:34} {bfs_s:7.2f} {r.states:7,} {bfs:>9} | {proof_s:7.2f} "
            f"{len(proof.lemmas):6} {left:>16} | {bfs_s / proof_s:6.2f}"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
