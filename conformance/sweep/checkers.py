"""Per-case checkers of a sweep, pluggable by name (SW-CHECKER).

A checker takes the fully specified graph of one case (credits, supplies and variant
applied) and its :class:`CaseBudget`, and returns a :class:`CheckerOutcome`. It must
call ``budget.tick(states)`` now and then (the wall-clock budget is enforced there when
no alarm signal is available) and bound any long native call itself (a Z3 solver:
``timeout`` = :meth:`CaseBudget.remaining` in ms).

Names: ``explore`` (the explicit-state explorer, :func:`explore_checker`) and ``prove``
(Z3, :func:`prove_checker`) are built in (:data:`BUILTIN`). Any other checker is a
plug-in (IN-PLUGIN): an installed entry point of ``creditflow.checkers``, or a
``package.module:function`` approved on the command line (``--plugin package.module``);
a sweep file alone never makes creditflow import anything. An approved plug-in is
imported on the driver (to validate) and on every executor (so it must be installed
there).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.inputs.plugins import CHECKER_GROUP, installed
from creditflow.conformance.sweep.named_functions import import_named_function
from creditflow.conformance.symbolic.prove import ProveOptions, exit_code, prove_graph
from creditflow.conformance.traces.network import network_trace
from creditflow.model.network.graph import FlowGraph


class CheckerError(ValueError):
    """A checker name that cannot be resolved; the message says why."""


class CaseTimeout(BaseException):
    """SW-BUDGET: the case ran out of its wall-clock budget. A ``BaseException`` so that
    a checker's own ``except Exception`` cannot swallow it."""


@dataclass
class CaseBudget:
    """SW-BUDGET of one case: ``max_states`` and an absolute ``deadline``
    (``time.monotonic()``). ``states`` is the progress reported so far."""

    max_states: int
    deadline: float
    states: int = 0

    def tick(self, states: int) -> None:
        """Record progress; raise :class:`CaseTimeout` once past the deadline."""
        self.states = states
        if time.monotonic() > self.deadline:
            raise CaseTimeout

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class CheckerOutcome:
    """What a checker decided about one case (the verdict columns of SW-ROW)."""

    complete: bool
    deadlock: bool | None
    conservation: bool | None
    #: states explored (None for a checker that explores none, as Z3)
    states: int | None
    transitions: int | None = None
    deadlock_kind: str | None = None
    blocked_forever: list[str] = field(default_factory=list)
    violated: list[str] = field(default_factory=list)
    shortest_counterexample: int | None = None
    exit_code: int | None = None
    #: the ITF document of the primary counterexample, if any (SW-TRACE)
    trace: dict[str, Any] | None = None
    #: SW-AMQP-CLAIM: what the verdict claims (``supply``, ``directed-witness``,
    #: ``budget``, ``every-supply``) and the claim in words; ``None`` for checkers that
    #: state none (their scope is ``complete`` and the budget)
    claim_scope: str | None = None
    claim: str | None = None


Checker = Callable[[FlowGraph, CaseBudget], CheckerOutcome]


def explore_checker(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    """SW-CHECKER ``explore``: :func:`~creditflow.conformance.explore.check.check_graph` and
    :func:`~creditflow.conformance.explore.check.summary`, with the shortest counterexample as an
    ITF trace (TRACE-ITF)."""

    system, result = check_graph(
        graph,
        CheckOptions(max_states=budget.max_states),
        progress=lambda found, done: budget.tick(found),
    )
    report = summary(system, result)
    primary = result.primary()
    trace = None
    if primary is not None:
        trace = network_trace(
            system,
            primary,
            source=graph.name,
            description=f"creditflow sweep counterexample for {primary.property_id} "
            f"({primary.kind}) on {graph.name}",
        )
    return CheckerOutcome(
        complete=report.complete,
        deadlock=report.deadlock,
        conservation=report.conservation,
        states=report.states,
        transitions=report.transitions,
        deadlock_kind=report.deadlock_kind,
        blocked_forever=list(report.blocked_forever),
        violated=sorted(pid for pid, holds in report.properties.items() if holds is False),
        shortest_counterexample=report.shortest_counterexample_length,
        exit_code=report.exit_code,
        trace=trace,
    )


#: Z3's per-query timeout never exceeds this, whatever remains of the case's budget.
PROVE_QUERY_SECONDS = 60.0


def prove_checker(graph: FlowGraph, budget: CaseBudget) -> CheckerOutcome:
    """SW-CHECKER ``prove``: :func:`~creditflow.conformance.symbolic.prove.prove_graph` (Z3-PROVE)
    on the case's graph. Every solver query is bounded by what remains of the case's
    wall-clock budget (a native call the alarm cannot interrupt); a property is decided
    when it is ``proved`` or ``violated``; a bounded search or a solver that gave up
    leaves it undecided (``incomplete``). A counterexample is replayed through the model
    by ``prove`` itself and written as the explorer's are (TRACE-ITF)."""

    budget.tick(0)
    seconds = max(1.0, min(PROVE_QUERY_SECONDS, budget.remaining()))
    report = prove_graph(graph, ProveOptions(timeout_s=seconds, shorten_s=min(5.0, seconds)))
    budget.tick(0)

    def decided(pid: str) -> bool | None:
        verdict = report.verdicts.get(pid)
        if verdict is None or verdict.status not in ("proved", "violated"):
            return None
        return verdict.status == "proved"

    holds_deadlock_free = decided("PROP-NO-DEADLOCK")
    primary = report.primary()
    deadlock = report.counterexamples.get("PROP-NO-DEADLOCK")
    trace = None
    if primary is not None:
        trace = network_trace(
            primary.system,
            primary.finding,
            source=graph.name,
            description=f"creditflow sweep counterexample (Z3) for "
            f"{primary.finding.property_id} ({primary.finding.kind}) on {graph.name}",
        )
    return CheckerOutcome(
        complete=all(
            v.status in ("proved", "violated", "not-checked") for v in report.verdicts.values()
        ),
        deadlock=None if holds_deadlock_free is None else not holds_deadlock_free,
        conservation=decided("PROP-CONSERVATION"),
        states=None,
        deadlock_kind=deadlock.finding.kind if deadlock else None,
        blocked_forever=list(deadlock.finding.processes) if deadlock else [],
        violated=sorted(pid for pid, v in report.verdicts.items() if v.status == "violated"),
        shortest_counterexample=primary.finding.length if primary else None,
        exit_code=exit_code(report),
        trace=trace,
    )


#: SW-CHECKER: built-in names and where they live.
BUILTIN: dict[str, str] = {
    "explore": "creditflow.conformance.sweep.checkers:explore_checker",
    "prove": "creditflow.conformance.sweep.checkers:prove_checker",
    # SW-AMQP: the checker of AMQP families (takes an AmqpInput, not a FlowGraph)
    "amqp": "creditflow.conformance.sweep.amqp:amqp_checker",
}

_registered: dict[str, Checker] = {}


def register_checker(name: str, checker: Checker) -> None:
    """Register ``checker`` under ``name`` in this process. Executors do not see it:
    for a real sweep, name it as ``package.module:function`` instead."""
    _registered[name] = checker


def is_registered(name: str) -> bool:
    """Whether code in this process registered ``name`` (an approval by code, IN-PLUGIN)."""
    return name in _registered


def resolve_checker(name: str) -> Checker:
    """SW-CHECKER: the checker called ``name`` (built in, an installed entry point of
    ``creditflow.checkers``, or ``module:function``), imported; :class:`CheckerError` if
    there is none. Whether a sweep file may name it is decided before, without importing
    (IN-PLUGIN, :func:`creditflow.conformance.inputs.plugins.check_plugin`)."""
    if name in _registered:
        return _registered[name]
    target = BUILTIN.get(name) or installed(CHECKER_GROUP).get(name, name)
    if ":" not in target:
        raise CheckerError(
            f"unknown checker {name!r} (built in: {', '.join(BUILTIN)}; "
            "or name a function as package.module:function)"
        )
    checker = import_named_function(target, f"checker {name!r}", CheckerError)
    _registered[name] = checker
    return checker
