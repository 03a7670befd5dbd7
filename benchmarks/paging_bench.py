"""Paging model throughput, explorer speed on paging, and (with ``--broker``) the cost of
observing a real broker: ``rabbitmqctl eval`` against the long-lived Erlang session.

    .venv/bin/python benchmarks/paging_bench.py [--messages 20000] [--broker]

Figures are printed as ratios from one run (no timed tests).
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

from creditflow.conformance.explore.explorer import explore
from creditflow.model.paging import operations as paging
from creditflow.model.paging.profile import DEFAULT_PROFILE
from creditflow.model.paging.state import Config, initial_state
from creditflow.model.paging.system import SMALL_BOUNDS, PagingSystem


def model_figures(n: int) -> dict[str, float]:
    cfg = Config(DEFAULT_PROFILE, durable=False)
    t0 = time.perf_counter()
    st = paging.basic_publish(cfg, initial_state(), 5000, count=n).state
    t1 = time.perf_counter()
    st = paging.set_ram_duration_target(cfg, st, 0).state
    step = paging.settle(cfg, st)
    t2 = time.perf_counter()
    st = paging.set_ram_duration_target(cfg, step.state, None).state
    st = paging.basic_get(cfg, st, False, count=n).state
    t3 = time.perf_counter()
    assert st.len == 0
    # one operation per call (a fresh state each time) on a queue of n / 10 messages
    small = paging.basic_publish(cfg, initial_state(), 5000, count=n // 10).state
    t4 = time.perf_counter()
    for _ in range(200):
        paging.publish(cfg, small, 5000)
    t5 = time.perf_counter()
    return {
        "publish": (t1 - t0) / n,
        "page_all": t2 - t1,
        "passes": len(step.report.passes),
        "fetch": (t3 - t2) / n,
        "single": (t5 - t4) / 200,
    }


def explorer_figures() -> tuple[int, float]:
    profile = SMALL_BOUNDS.profile.with_settings(segment_entries=1)
    system = PagingSystem(SMALL_BOUNDS._replace(publishes=2, profile=profile))
    t0 = time.perf_counter()
    result = explore(system)
    return result.n_states, time.perf_counter() - t0


def broker_figures() -> dict[str, float]:
    from creditflow.adapters.rabbitmq.broker import PrivateBroker
    from creditflow.adapters.rabbitmq.erlang import ErlangSession
    from creditflow.adapters.rabbitmq.paging import compare_on_broker
    from creditflow.conformance.inputs.paging_scenarios import load_scenario

    with tempfile.TemporaryDirectory() as workdir, PrivateBroker(Path(workdir)) as broker:
        t0 = time.perf_counter()
        for _ in range(5):
            broker.eval("1 + 1.")
        ctl = (time.perf_counter() - t0) / 5
        with ErlangSession(broker) as session:
            t1 = time.perf_counter()
            for _ in range(50):
                session.eval("1 + 1.")
            sess = (time.perf_counter() - t1) / 50
        t2 = time.perf_counter()
        comparison = compare_on_broker(broker, load_scenario("large-tight-credit"))
        scenario = time.perf_counter() - t2
        assert comparison.agrees
    return {"ctl": ctl, "session": sess, "scenario": scenario}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--broker", action="store_true", help="also time a real broker")
    args = parser.parse_args()
    print(f"# paging benchmark, {platform.python_implementation()} {platform.python_version()}")
    m = model_figures(args.messages)
    print(f"model, {args.messages} x 5000 B transient, 3.10.8 defaults:")
    print(f"  publish      {m['publish'] * 1e6:8.1f} us/message (one batch)")
    print(
        f"  target 0 + settle (all paged, {m['passes']} passes): {m['page_all']:.2f} s "
        f"= {m['page_all'] / args.messages * 1e6:.1f} us/message "
        f"({m['page_all'] / args.messages / m['publish']:.1f}x a publish)"
    )
    print(f"  fetch        {m['fetch'] * 1e6:8.1f} us/message (one batch)")
    print(
        f"  one publish as its own call on a {args.messages // 10}-message queue: "
        f"{m['single'] * 1e6:.0f} us ({m['single'] / m['publish']:.0f}x a batched one: "
        f"each call copies the state)"
    )
    states, seconds = explorer_figures()
    print(
        f"explorer, SMALL_BOUNDS with 2 publishes: {states:,} states in {seconds:.2f} s "
        f"= {states / seconds:,.0f} states/s"
    )
    if args.broker:
        b = broker_figures()
        print("broker (Debian RabbitMQ 3.10.8, private node):")
        print(f"  rabbitmqctl eval {b['ctl'] * 1e3:8.1f} ms/call")
        print(
            f"  erlang session   {b['session'] * 1e3:8.2f} ms/call "
            f"({b['ctl'] / b['session']:.0f}x faster)"
        )
        print(f"  large-tight-credit on the broker and compared: {b['scenario']:.1f} s")


if __name__ == "__main__":
    main()
