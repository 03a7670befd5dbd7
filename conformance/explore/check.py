"""``creditflow check``: explore a process graph and summarise the verdicts.

:func:`check_graph` returns the exploration result; :func:`summary` turns it into
a typed :class:`~creditflow.conformance.explore.results.CheckResult`
(OUT-TYPED-RESULT), which the CLI renders and the sweeps read.
"""

from __future__ import annotations

from dataclasses import dataclass

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.counterexamples import deadlock_kind
from creditflow.conformance.explore.explorer import (
    DEFAULT_MAX_STATES,
    NO_DEADLOCK,
    ExplorationResult,
    Progress,
    explore,
)
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import CONSERVATION, MAILBOX_BOUND
from creditflow.conformance.explore.results import NO_MAILBOX_BOUND, CheckResult
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph


@dataclass(frozen=True)
class CheckOptions:
    """What to check: overrides of the graph (``credit``, ``publishes``, NET-ALL-CHECK,
    NET-FAULT-BOUND) and how (budget, PROP-MAILBOX-BOUND, reductions)."""

    credit: CreditSpec | None = None
    publishes: int | None = None
    all_check_blocked: bool = False
    #: NET-FAULT-BOUND: the most crashes per run (``None``: the graph's own bound)
    max_crashes: int | None = None
    mailbox_bound: int | None = None
    max_states: int = DEFAULT_MAX_STATES
    symmetry: bool = True
    reduce: bool = True
    #: EXP-ONLINE: stop at the first certain deadlock (``creditflow check`` does unless
    #: ``--full-search``); by default every state is explored and every property decided
    stop_at_deadlock: bool = False
    #: EXP-POR: decide with the stubborn-set reduced graph first (networks without faults)
    partial_order: bool = False


def prepare_graph(graph: FlowGraph, options: CheckOptions) -> FlowGraph:
    if options.credit is not None:
        graph = graph.with_credit(options.credit)
    if options.publishes is not None:
        graph = graph.with_publishes(options.publishes)
    if options.all_check_blocked:
        graph = graph.with_all_checking()
    if options.max_crashes is not None:
        graph = graph.with_max_crashes(options.max_crashes)
    return graph


def check_graph(
    graph: FlowGraph, options: CheckOptions = CheckOptions(), progress: Progress | None = None
) -> tuple[CheckedNetwork, ExplorationResult]:
    """Explore ``graph`` (after the overrides in ``options``)."""
    # EXP-FINITE: the explored states carry no consumed counters
    system = CompiledNetwork(
        prepare_graph(graph, options), mailbox_bound=options.mailbox_bound, count_consumed=False
    )
    symmetry = network_symmetry(system.network) if options.symmetry else None
    result = explore(
        system,
        max_states=options.max_states,
        symmetry=symmetry,
        reduce=options.reduce,
        stop_at_deadlock=options.stop_at_deadlock,
        progress=progress,
        partial_order=options.partial_order,
    )
    return system, result


def exit_code(result: ExplorationResult) -> int:
    if NO_DEADLOCK in result.findings:
        return exit_codes.DEADLOCK
    if result.findings:
        return exit_codes.VIOLATION
    if not result.complete:
        return exit_codes.INCOMPLETE
    return exit_codes.OK


def summary(system: CheckedNetwork, result: ExplorationResult) -> CheckResult:
    """The verdicts and figures of one exploration (OUT-TYPED-RESULT)."""
    primary = result.primary()
    deadlock = result.deadlock
    decided = result.complete
    # SCOPE-NOT-CHECKED: without a bound PROP-MAILBOX-BOUND was not asked, so not "holds"
    unasked = {MAILBOX_BOUND: NO_MAILBOX_BOUND} if system.properties.mailbox_bound is None else {}
    return CheckResult(
        graph=system.graph.name,
        complete=result.complete,
        stopped_at_deadlock=result.stopped_at_deadlock,
        deadlock=deadlock is not None if decided or deadlock else None,
        deadlock_kind=deadlock_kind(deadlock),
        blocked_forever=tuple(deadlock.processes) if deadlock else (),
        blocked_forever_drawn=tuple(deadlock.final_processes) if deadlock else (),
        conservation=CONSERVATION not in result.findings
        if decided or CONSERVATION in result.findings
        else None,
        properties={
            pid: (holds if decided or not holds else None)
            for pid, holds in result.holds.items()
            if pid not in unasked
        },
        not_checked=unasked,
        states=result.n_states,
        transitions=result.transitions,
        seconds=round(result.seconds, 4),
        states_per_second=round(result.n_states / result.seconds) if result.seconds else None,
        reduced=result.reduced,
        # EXP-POR: whether the reduced search ran (EXP-POR-BUDGET: not always the one that answered)
        partial_order=result.partial_order,
        symmetry_order=result.symmetry_order,
        shortest_counterexample_length=primary.length if primary else None,
        # EXP-SHORTEST: whether that length is certified as the least one
        shortest_certified=primary.shortest if primary else None,
        counterexample_lengths={pid: f.length for pid, f in sorted(result.findings.items())},
        exit_code=exit_code(result),
    )
