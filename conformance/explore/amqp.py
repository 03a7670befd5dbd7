"""Explicit-state search of the AMQP family (AMQ-TS, PROP-AMQ-*): breadth-first, so the
first violation found has a shortest witness. Typed, frozen results; no rendering.

The verdict says what it claims: ``complete`` only when every reachable state was
visited within the budget; a search cut by the budget is not a proof (SCOPE-EXIT)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

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
