"""Throughput of the accounts and alarm explorers and of accounts conformance checking.

    .venv/bin/python benchmarks/accounts_bench.py

Prints, from one run: states/s of the accounts explorer with and without the
interchangeable-actor symmetry (and the state-count ratio), states/s of the alarm
explorer, and conformance steps/s against the in-process reference adapter and the
same reference as a subprocess speaking JSON Lines (the protocol's cost).
"""

from __future__ import annotations

import functools
import platform
import sys
import time

from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.families.accounts.conform import conform
from creditflow.conformance.families.accounts.explore import AccountsOptions, check_actor_graph
from creditflow.conformance.families.accounts.protocol import (
    ReferenceAccountsAdapter,
    SubprocessAccountsAdapter,
)
from creditflow.conformance.inputs.actor_graphs import load_actor_graph
from creditflow.model.accounts.graph import seed_example
from creditflow.model.alarms.rules import AlarmConfig, ConnectionSpec
from creditflow.model.alarms.system import CheckedAlarms

print = functools.partial(print, flush=True)  # noqa: A001


def timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def main() -> None:
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    print("## accounts explorer (AC properties + deadlock)")
    for graph in (
        seed_example(fanout=3, limit=2, reads=4),
        seed_example(fanout=5, limit=2, reads=4),
    ):
        (system, sym), t_sym = timed(lambda g=graph: check_actor_graph(g, AccountsOptions()))
        (_, plain), t_plain = timed(
            lambda g=graph: check_actor_graph(
                g, AccountsOptions(symmetry=False, max_states=2_000_000)
            )
        )
        print(
            f"{graph.name:14} symmetry: {sym.n_states:>9,} states {t_sym:7.2f} s "
            f"({sym.n_states / t_sym:>7,.0f}/s) | none: {plain.n_states:>9,} states "
            f"{t_plain:7.2f} s ({plain.n_states / t_plain:>7,.0f}/s) | "
            f"{plain.n_states / sym.n_states:.1f}x fewer states, "
            f"{t_plain / t_sym:.1f}x faster"
        )
    print("## alarm explorer")
    config = AlarmConfig(
        (
            ConnectionSpec("pub", publishes=3),
            ConnectionSpec("con", consumes=True),
            ConnectionSpec("p2", node=1, publishes=1, empty_body=True, capability=False),
        ),
        nodes=("a", "b"),
        disk=True,
        node_down=True,
    )
    result, t = timed(lambda: explore(CheckedAlarms(config)))
    print(
        f"2 nodes, 3 connections: {result.n_states:,} states {t:.2f} s "
        f"({result.n_states / t:,.0f}/s)"
    )
    print("## accounts conformance (crash-timer, 300 runs x <= 60 steps)")
    graph = load_actor_graph("crash-timer")
    ref, t_ref = timed(lambda: conform(ReferenceAccountsAdapter(), graph, runs=300))
    sub = SubprocessAccountsAdapter(
        [sys.executable, "-m", "creditflow.adapters.reference.accounts"]
    )
    try:
        sub.hello()
        over, t_sub = timed(lambda: conform(sub, graph, runs=300))
    finally:
        sub.close()
    print(
        f"in-process: {ref.steps / t_ref:,.0f} steps/s | subprocess: "
        f"{over.steps / t_sub:,.0f} steps/s | protocol costs {t_sub / t_ref:.1f}x"
    )


if __name__ == "__main__":
    main()
