"""Explicit-state search of the AMQP family (AMQ-TS, PROP-AMQ-*): breadth-first, so the
first violation found has a shortest witness. Typed, frozen results; no rendering.

The verdict says what it claims: ``complete`` only when every reachable state was
visited within the budget; a search cut by the budget is not a proof (SCOPE-EXIT)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.amqp_directed import MAX_RUN_STEPS, directed_runs
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.system import Action, State
from creditflow.model.amqp.topology import Topology


@dataclass(frozen=True)
class AmqpViolation:
    """A property violated at the end of ``steps`` from the initial state (shortest);
    ``props`` are all the properties that state violates, ``prop`` the first of them in
    the order of ``PROP-AMQ-*`` in spec/amqp.md."""

    prop: str
    steps: tuple[Action, ...]
    states: tuple[State, ...]
    props: tuple[str, ...] = ()


@dataclass(frozen=True)
class AmqpSearchResult:
    """The outcome of :func:`search`: ``violation`` (the first found, with a shortest
    witness) or none; ``complete`` when the whole reachable space was visited."""

    topology: str
    states: int
    complete: bool
    violation: AmqpViolation | None


def _path(
    parents: dict[State, tuple[State, Action] | None], s: State
) -> tuple[tuple[Action, ...], tuple[State, ...]]:
    steps: list[Action] = []
    states = [s]
    cur = parents[s]
    while cur is not None:
        prev, action = cur
        steps.append(action)
        states.append(prev)
        cur = parents[prev]
    return tuple(reversed(steps)), tuple(reversed(states))


def search(t: Topology, max_states: int = 200_000) -> AmqpSearchResult:
    """Breadth-first search of the reachable states of ``t`` for PROP-AMQ-* (state
    properties at every state, PROP-AMQ-NO-STALL at every final state); stops at the
    first violation, which then has a shortest witness."""
    start = system.initial_state(t)
    parents: dict[State, tuple[State, Action] | None] = {start: None}
    frontier: deque[State] = deque([start])
    while frontier:
        s = frontier.popleft()
        bad = properties.state_violations(t, s)
        succ = system.successors(t, s)
        if not bad and not succ and not properties.complete(s):
            bad = ("PROP-AMQ-NO-STALL",)
        if bad:
            steps, states = _path(parents, s)
            return AmqpSearchResult(
                t.name, len(parents), False, AmqpViolation(bad[0], steps, states, bad)
            )
        for action, nxt in succ:
            if nxt not in parents:
                if len(parents) >= max_states:
                    return AmqpSearchResult(t.name, len(parents), False, None)
                parents[nxt] = (s, action)
                frontier.append(nxt)
    return AmqpSearchResult(t.name, len(parents), True, None)


@dataclass(frozen=True)
class AmqpCheckResult:
    """What ``creditflow check`` decided for an AMQP topology (SCOPE-EXIT).

    ``every_supply`` says whether the question was every supply (no ``--publishes`` or
    ``--graph-supply``): explicit search decides one supply only, so then nothing found
    is "not established" (exit 4), never 0."""

    search: AmqpSearchResult
    supply: int
    every_supply: bool
    directed_steps: int = 0
    """Steps taken by the directed runs (AMQ-DIRECTED-RUN); 0 when none ran."""
    shortest: bool = True
    """The violation's witness is a shortest one (breadth first); ``False`` when it
    came from a directed run (AMQ-DIRECTED-RUN)."""

    @property
    def claim(self) -> str:
        """The sentence the verdict stands for."""
        v = self.search.violation
        if v is not None:
            if not self.shortest:
                return (
                    f"{v.prop} violated after {len(v.steps)} steps with supply {self.supply} "
                    f"(a directed run's witness; shortest not established: the breadth-first "
                    f"search stopped at {self.search.states:,} states)"
                )
            return (
                f"{v.prop} violated after {len(v.steps)} steps (shortest) with supply {self.supply}"
            )
        if not self.search.complete:
            runs = (
                f" and {self.directed_steps:,} steps of directed runs"
                if self.directed_steps
                else ""
            )
            return (
                f"nothing found within {self.search.states:,} states{runs} with supply "
                f"{self.supply}; not established"
            )
        held = (
            f"holds for supply {self.supply} ({self.search.states:,} states, every state explored)"
        )
        return held + ("; for every supply: not established" if self.every_supply else "")

    @property
    def exit_code(self) -> int:
        """SCOPE-EXIT: 10 for a stall (the AMQP deadlock), 12 for another property, 0
        only for a complete search of the supply asked, 4 otherwise."""
        v = self.search.violation
        if v is not None:
            return exit_codes.DEADLOCK if v.prop == "PROP-AMQ-NO-STALL" else exit_codes.VIOLATION
        if self.search.complete and not self.every_supply:
            return exit_codes.OK
        return exit_codes.INCOMPLETE


QUICK_STATES = 10_000
"""The breadth-first budget tried before the directed runs (AMQ-DIRECTED-RUN)."""


def check_amqp(
    t: Topology,
    supply: int | None,
    every_supply: bool,
    max_states: int = 200_000,
    max_run_steps: int = MAX_RUN_STEPS,
) -> AmqpCheckResult:
    """Search ``t`` (with ``supply`` messages when given) for PROP-AMQ-* (AMQ-TS,
    AMQ-DIRECTED-RUN): breadth first within ``min(max_states, QUICK_STATES)`` states;
    when that decides nothing, the directed runs (a witness, not proved shortest); when
    they find nothing either, breadth first again within ``max_states``."""
    if supply is not None:
        t = replace(t, supply=supply)
    quick = search(t, min(max_states, QUICK_STATES))
    if quick.complete or quick.violation is not None:
        return AmqpCheckResult(quick, t.supply, every_supply)
    runs = directed_runs(t, max_run_steps)
    w = runs.witness
    if w is not None:
        found = AmqpViolation(w.prop, w.steps, w.states, w.props)
        return AmqpCheckResult(
            replace(quick, violation=found), t.supply, every_supply, runs.steps_taken, False
        )
    full = search(t, max_states) if max_states > QUICK_STATES else quick
    return AmqpCheckResult(full, t.supply, every_supply, runs.steps_taken)
