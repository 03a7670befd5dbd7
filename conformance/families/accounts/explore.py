"""``creditflow accounts check``: explore an actor graph, decide the AC properties and
PROP-NO-DEADLOCK, and measure each account's largest debt against its bounds.

:func:`check_actor_graph` returns the system and the exploration result;
:func:`accounts_summary` turns them into a typed result (OUT-TYPED-RESULT) for the CLI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from creditflow.conformance.explore.check import exit_code
from creditflow.conformance.explore.counterexamples import deadlock_kind
from creditflow.conformance.explore.explorer import (
    DEFAULT_MAX_STATES,
    ExplorationResult,
    Progress,
    explore,
)
from creditflow.conformance.explore.results import AccountBound, AccountsCheckResult
from creditflow.model.accounts.graph import ActorGraph
from creditflow.model.accounts.system import CheckedAccounts


@dataclass(frozen=True)
class AccountsOptions:
    """Overrides of the graph (``limit``, ``reads``) and how to search."""

    limit: int | None = None
    reads: int | None = None
    naive_bound: bool = False
    max_states: int = DEFAULT_MAX_STATES
    symmetry: bool = True


def prepare_actor_graph(graph: ActorGraph, options: AccountsOptions) -> ActorGraph:
    if options.limit is not None:
        graph = graph.with_limit(options.limit)
    if options.reads is not None:
        graph = graph.with_reads(options.reads)
    return graph


def check_actor_graph(
    graph: ActorGraph,
    options: AccountsOptions = AccountsOptions(),
    progress: Progress | None = None,
) -> tuple[CheckedAccounts, ExplorationResult]:
    """Explore every interleaving of ``graph`` (EXP-BFS) with the AC properties."""
    system = CheckedAccounts(
        prepare_actor_graph(graph, options),
        naive_bound=options.naive_bound,
        symmetry=options.symmetry,
    )
    result = explore(
        system, max_states=options.max_states, symmetry=system.symmetry, progress=progress
    )
    return system, result


def max_debts(system: CheckedAccounts, result: ExplorationResult) -> list[int]:
    """The largest debt each account reaches over the explored states."""
    n = len(system.model.account_names)
    best = [0] * n
    for state in cast("Sequence[tuple[Any, int]]", result.graph.states):  # (model, bits)
        for a, d in enumerate(state[0].debt):
            if d > best[a]:
                best[a] = d
    return best


def accounts_summary(system: CheckedAccounts, result: ExplorationResult) -> AccountsCheckResult:
    """Verdicts, figures and, per account, the largest debt reached vs the bounds
    (AC-OVERSHOOT: ``tight`` when reached), as a typed result (OUT-TYPED-RESULT)."""
    primary = result.primary()
    decided = result.complete
    reached = max_debts(system, result)
    return AccountsCheckResult(
        graph=system.graph.name,
        limit=system.graph.limit,
        complete=result.complete,
        properties={
            pid: (holds if decided or not holds else None) for pid, holds in result.holds.items()
        },
        accounts={
            b.account: AccountBound(
                max_debt=m,
                bound=b.bound,
                tight=m == b.bound if decided else None,
                naive_bound=b.naive,
            )
            for b, m in zip(system.properties.bounds, reached, strict=True)
        },
        deadlock_kind=deadlock_kind(result.deadlock),
        blocked_forever=tuple(result.deadlock.processes) if result.deadlock else (),
        states=result.n_states,
        seconds=round(result.seconds, 4),
        symmetry_order=result.symmetry_order,
        shortest_counterexample_length=primary.length if primary else None,
        counterexample_lengths={pid: f.length for pid, f in sorted(result.findings.items())},
        exit_code=exit_code(result),
    )
