"""Checkers and replay functions that misbehave on purpose, for the sweep tests.

Spark's Python workers import this module by name (``tests.sweep_plugins:…``, with the
repository root on PYTHONPATH), exactly as they would a user's plug-in.
"""

from __future__ import annotations

import os
import signal
import time

from creditflow.conformance.sweep.checkers import CaseBudget, CheckerOutcome, explore_checker
from creditflow.model.network.graph import FlowGraph


def crash_on_cycles(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    """Kills its worker process on a graph with a cycle; explores the others."""
    if not graph.is_dag():
        os._exit(3)
    return explore_checker(graph, budget)


def raise_on_cycles(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    if not graph.is_dag():
        raise RuntimeError(f"refusing {graph.name}")
    return explore_checker(graph, budget)


def spin(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    """Never finishes, in Python: the alarm (or ``tick``) must stop it."""
    states = 0
    while True:
        states += 1
        if states % 1000 == 0:
            budget.tick(states)


def spin_on_cycles(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    if not graph.is_dag():
        return spin(graph, budget)
    return explore_checker(graph, budget)


def deaf_on_cycles(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    """On a graph with a cycle, blocks SIGALRM and sleeps (like a long native call):
    only the watchdog's hard kill ends it."""
    if not graph.is_dag():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
    return explore_checker(graph, budget)


def replay_or_crash(path: str) -> object:
    """The network replay, except that a file named ``crash…`` kills the worker and one
    named ``boom…`` raises an unexpected error."""
    from creditflow.conformance.traces.network import replay_network_trace

    name = os.path.basename(path)
    if name.startswith("crash"):
        os._exit(4)
    if name.startswith("boom"):
        raise KeyError("adapter lost its connection")
    return replay_network_trace(path)
