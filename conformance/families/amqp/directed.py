"""Directed runs of the AMQP transition system at real sizes (AMQ-DIRECTED-RUN).

Breadth-first search (:mod:`creditflow.conformance.families.amqp.checking`) keeps every state and
is hopeless at a session window of 65,535. A directed run keeps one state: from the
initial state it takes, at each step, the first enabled action in a fixed priority
order, until no action is enabled, a property is violated or the step budget is spent.
Every step is a successor computed by the model (AMQ-TS) and every state is checked by
the same predicates as the search (PROP-AMQ-*), so a violation found is a real witness
of the topology as given. It is **not** proved shortest, and a run that finds nothing
proves nothing: the caller reports that as "not established" (SCOPE-EXIT)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from creditflow.conformance.explore.explorer import DeadlinePassed
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.system import Action, State
from creditflow.model.amqp.topology import Topology

_DELIVER = ("take_fwd", "take_back", "queue", "relay", "apply", "status", "settle", "consume")
ORDERS: tuple[tuple[Action, ...], ...] = (
    # deliver what is in flight first, keep the wires short, the application's own
    # actions (grant, drain, a policy change) only when nothing else moves
    (*_DELIVER, "send", "drain_done", "resume", "grant", "drain", "remove_limit"),
    # the application's actions as early as they are enabled
    ("grant", "drain", "remove_limit", *_DELIVER, "send", "drain_done", "resume"),
    # send everything the credit allows before anything is delivered
    ("send", *_DELIVER, "drain_done", "resume", "grant", "drain", "remove_limit"),
)
"""The priority orders tried, in this order (AMQ-DIRECTED-RUN)."""


@dataclass(frozen=True)
class DirectedWitness:
    """A violation reached by the directed run of priority order ``order`` (an index of
    :data:`ORDERS`): ``steps`` from the initial state to ``states[-1]``."""

    prop: str
    props: tuple[str, ...]
    steps: tuple[Action, ...]
    states: tuple[State, ...]
    order: int


@dataclass(frozen=True)
class DirectedResult:
    """The outcome of :func:`directed_runs`: the witness of the first order that met a
    violation (``None`` when none did), the steps taken in all, and whether a run was
    cut by the step budget."""

    witness: DirectedWitness | None
    steps_taken: int
    budget_reached: bool


def _run(
    t: Topology, order: tuple[Action, ...], index: int, max_steps: int, deadline: float | None
) -> tuple[DirectedWitness | None, int, bool]:
    rank = {a: i for i, a in enumerate(order)}
    s = system.initial_state(t)
    states: list[State] = [s]
    steps: list[Action] = []
    while True:
        bad = properties.state_violations(t, s)
        succ = system.successors(t, s)
        if not bad and not succ and not properties.complete(s):
            bad = ("PROP-AMQ-NO-STALL",)
        if bad:
            return (
                DirectedWitness(bad[0], bad, tuple(steps), tuple(states), index),
                len(steps),
                False,
            )
        if not succ:
            return None, len(steps), False
        if len(steps) >= max_steps:
            return None, len(steps), True
        if deadline is not None and not len(steps) & 0xFFF and time.monotonic() >= deadline:
            raise DeadlinePassed(f"the deadline passed after {len(steps):,} directed steps")
        action, s = min(succ, key=lambda p: rank.get(p[0], len(rank)))
        steps.append(action)
        states.append(s)


MAX_RUN_STEPS = 400_000
"""The steps all directed runs of one check may take together (AMQ-DIRECTED-RUN)."""


def directed_runs(
    t: Topology, max_steps: int = MAX_RUN_STEPS, deadline: float | None = None
) -> DirectedResult:
    """Run the orders of :data:`ORDERS` in turn (AMQ-DIRECTED-RUN), at most
    ``max_steps`` steps in all, until one meets a violation; ``deadline``
    (``time.monotonic()``): FAM-DEADLINE, ``DeadlinePassed`` past it."""
    taken = 0
    cut = False
    for i, order in enumerate(ORDERS):
        if taken >= max_steps:
            cut = True
            break
        w, n, budget = _run(t, order, i, max_steps - taken, deadline)
        taken += n
        cut = cut or budget
        if w is not None:
            return DirectedResult(w, taken, False)
    return DirectedResult(None, taken, cut)
