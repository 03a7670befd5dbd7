"""What must hold of accounts (AC-DEBT-SUM … AC-OVERSHOOT), as state and step predicates.

State properties are decided on every reachable state; step properties on every
transition ``(state, action, outcome)`` (the explorer's checked system records a
violated step property in the state it leads to, see
:mod:`creditflow.model.accounts.system`). The overshoot bounds are computed from the
actor graph alone (:func:`overshoot_bounds`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import networkx as nx

from creditflow.model.accounts.rules import (
    ACTION_SHIFT,
    FIRE,
    READ,
    REPAY,
    TURN,
    WAIT,
    WAITING,
    AccountsModel,
    AccountsState,
    Observation,
    Outcome,
)

DEBT_SUM = "AC-DEBT-SUM"
QUIESCENCE = "AC-QUIESCENCE"
WAIT_OVER_LIMIT = "AC-WAIT-OVER-LIMIT"
OVERSHOOT = "AC-OVERSHOOT"
OVERSHOOT_NAIVE = "AC-OVERSHOOT-NAIVE"
SUSPEND_IFF = "AC-SUSPEND-IFF"
BORROW_BEFORE_REPAY = "AC-BORROW-BEFORE-REPAY"
CHARGE = "AC-CHARGE"

STATE_PROPERTIES = (DEBT_SUM, QUIESCENCE, WAIT_OVER_LIMIT, OVERSHOOT)
STEP_PROPERTIES = (SUSPEND_IFF, BORROW_BEFORE_REPAY, CHARGE)


@dataclass(frozen=True)
class OvershootBound:
    """The bounds on one account's debt (AC-OVERSHOOT, AC-OVERSHOOT-NAIVE).

    ``bound = limit * peak_potential + read_potential + timer_potential + held``:
    ``peak_potential`` is the most loans one queued event can still become, over the
    places the account's events can wait; ``read_potential`` the most one read adds;
    ``timer_potential`` what every timer firing adds; ``held`` the loans held by actors
    between a turn's commit and its repay (one turn per actor at a time).
    ``naive`` is the notes' ``limit + one read x transitive fan-out``.
    """

    account: str
    limit: int
    peak_potential: int
    read_potential: int
    timer_potential: int
    held: int
    transitive_fanout: int

    @property
    def bound(self) -> int:
        return (
            self.limit * self.peak_potential
            + self.read_potential
            + self.timer_potential
            + self.held
        )

    @property
    def naive(self) -> int:
        return self.limit + self.transitive_fanout


def overshoot_bounds(model: AccountsModel) -> tuple[OvershootBound, ...]:
    """AC-OVERSHOOT: per account, a sound bound on its debt in every reachable state.

    Argument (spec/accounts.md): give each queued loan of cost ``c`` at actor ``X`` and
    hop ``h`` the weight ``c * P(X, h)``, where ``P = max(1, sum of events * P(successor))``
    (``P = 1`` where events are not forwarded), and held loans at actors that do not
    forward the weight ``c``. A turn never increases the total weight ``W`` (it replaces
    ``c * P(X)`` by ``c * sum e * P(Y)`` plus a held loan outside ``W``), a read adds at
    most ``batch * F(reader)``, a timer firing ``F(timer)``. A read happens only when
    ``debt <= limit``, and then ``W <= limit * max P``. Debt is at most ``W`` plus the
    loans held by forwarding actors, at most one turn each.
    """
    hop_key = (lambda h: h) if model.max_hops is not None else (lambda h: 0)
    potential: dict[tuple[int, int], int] = {}
    fanout: dict[tuple[int, int], int] = {}

    def successors(x: int, h: int) -> list[tuple[int, int]]:
        """The positions an event handled at ``(x, h)`` sends to (none past max_hops)."""
        return [(y, h + 1) for y, _ in model.out[x]] if model.forwards(h) else []

    def memoised(
        table: dict[tuple[int, int], int], x: int, h: int, value: Callable[[int, int], int]
    ) -> int:
        """``table[(x, hop_key(h))]``, computed successors first with an explicit stack:
        no recursion, however long the chain or large max_hops (IN-WORK)."""
        stack = [(x, h, False)]
        while stack:
            y, g, ready = stack.pop()
            key = (y, hop_key(g))
            if key in table:
                continue
            pending = [(z, k) for z, k in successors(y, g) if (z, hop_key(k)) not in table]
            if ready or not pending:
                table[key] = value(y, g)
            else:
                stack.append((y, g, True))
                stack.extend((z, k, False) for z, k in pending)
        return table[(x, hop_key(h))]

    def p(x: int, h: int) -> int:
        return memoised(
            potential,
            x,
            h,
            lambda y, g: (
                max(1, sum(e * potential[(z, hop_key(g + 1))] for z, e in model.out[y]))
                if successors(y, g)
                else 1
            ),
        )

    def send_potential(x: int, h: int) -> int:
        """What handling one event at ``(x, h)`` adds to the weight: ``sum e * P``."""
        if not model.forwards(h):
            return 0
        return sum(e * p(y, h + 1) for y, e in model.out[x])

    def transitive(x: int, h: int) -> int:
        """Events one event at ``(x, h)`` eventually causes (the notes' transitive fan-out)."""
        return memoised(
            fanout,
            x,
            h,
            lambda y, g: (
                sum(e * (1 + fanout[(z, hop_key(g + 1))]) for z, e in model.out[y])
                if model.forwards(g)
                else 0
            ),
        )

    def spread(
        layered: nx.DiGraph, frontier: list[tuple[int, int]], seen: set[tuple[int, int]]
    ) -> set[int]:
        """Add to ``layered`` every (actor, hop) that events at ``frontier`` reach, and
        the hops between them; ``seen`` grows by them. Returns the actors forwarded to."""
        reached: set[int] = set()
        while frontier:
            x, h = frontier.pop()
            layered.add_node((x, h))
            if not model.forwards(h):
                continue
            for y, _e in model.out[x]:
                nxt = (y, hop_key(h + 1))
                reached.add(y)
                layered.add_edge((x, h), nxt)
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        return reached

    out: list[OvershootBound] = []
    timers = [x for x, t in enumerate(model.timer) if t > 0]
    for a, name in enumerate(model.account_names):
        readers = [r for r, acc in enumerate(model.reader_account) if acc == a]
        # where the account's events can be: (actor, hop) -> the largest turn cost there
        layered = nx.DiGraph()
        roots: list[tuple[tuple[int, int], int]] = [
            ((model.reader_actor[r], 0), model.reader_batch[r]) for r in readers
        ]
        frontier = [pos for pos, _ in roots]
        seen = set(frontier)
        reachable_actors = spread(layered, frontier, seen)
        armed = [t for t in timers if t in reachable_actors]
        for t in armed:
            if (t, 0) not in seen:
                seen.add((t, 0))
                frontier.append((t, 0))
                roots.append(((t, 0), 1))
            else:
                roots.append(((t, 0), 1))
        spread(layered, frontier, seen)  # what timers reach
        max_cost: dict[tuple[int, int], int] = {}
        for pos, cost in roots:
            max_cost[pos] = max(max_cost.get(pos, 0), cost)
        received: set[tuple[int, int]] = set()
        for pos in nx.topological_sort(layered):
            x, h = pos
            if pos not in max_cost or not model.forwards(h):
                continue
            for y, e in model.out[x]:
                nxt = (y, hop_key(h + 1))
                received.add(nxt)
                max_cost[nxt] = max(max_cost.get(nxt, 0), max_cost[pos] * e)
        peak = max((p(x, h) for x, h in received), default=1)
        held_by_actor: dict[int, int] = {}
        for x, h in received:
            if model.forwards(h) and model.out[x]:
                held_by_actor[x] = max(held_by_actor.get(x, 0), max_cost[(x, h)])
        out.append(
            OvershootBound(
                account=name,
                limit=model.limit,
                peak_potential=peak,
                read_potential=max(
                    (
                        model.reader_batch[r] * send_potential(model.reader_actor[r], 0)
                        for r in readers
                    ),
                    default=0,
                ),
                timer_potential=sum(model.timer[t] * send_potential(t, 0) for t in armed),
                held=sum(held_by_actor.values()),
                transitive_fanout=max(
                    (model.reader_batch[r] * transitive(model.reader_actor[r], 0) for r in readers),
                    default=0,
                ),
            )
        )
    return tuple(out)


class AccountsProperties:
    """The AC state and step properties of one model (``naive``: also check
    AC-OVERSHOOT-NAIVE, which the notes state and the explorer refutes)."""

    def __init__(self, model: AccountsModel, naive: bool = False) -> None:
        self.model = model
        self.bounds = overshoot_bounds(model)
        self.naive = naive
        self.state_ids = (*STATE_PROPERTIES, OVERSHOOT_NAIVE) if naive else STATE_PROPERTIES

    # -- state properties ---------------------------------------------------------------------

    def loan_sums(self, state: AccountsState) -> list[int]:
        sums = [0] * len(state.debt)
        for _x, loan, _held in self.model.live_loans(state):
            sums[loan.account] += loan.cost
        return sums

    def violations(self, state: AccountsState) -> tuple[str, ...]:
        bad: list[str] = []
        limit = self.model.limit
        sums = self.loan_sums(state)
        if any(d != s or d < 0 for d, s in zip(state.debt, sums, strict=True)):
            bad.append(DEBT_SUM)  # AC-DEBT-SUM
        if self.model.quiescent(state) and any(state.debt):
            bad.append(QUIESCENCE)  # AC-QUIESCENCE
        for r, rs in enumerate(state.readers):
            # AC-WAIT-OVER-LIMIT: nobody sleeps while their account is clear
            if rs.phase == WAITING and state.debt[self.model.reader_account[r]] <= limit:
                bad.append(WAIT_OVER_LIMIT)
                break
        if any(d > b.bound for d, b in zip(state.debt, self.bounds, strict=True)):
            bad.append(OVERSHOOT)  # AC-OVERSHOOT
        if self.naive and any(d > b.naive for d, b in zip(state.debt, self.bounds, strict=True)):
            bad.append(OVERSHOOT_NAIVE)  # AC-OVERSHOOT-NAIVE
        return tuple(bad)

    # -- step properties ------------------------------------------------------------------------

    def step_account(self, state: AccountsState, action: int) -> int | None:
        """The account a step runs under (AC-CHARGE), or ``None`` if it sends nothing."""
        m = self.model
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        if kind == READ:
            return m.reader_account[index]
        if kind == TURN:
            return state.actors[index].mailbox[0].account
        if kind == FIRE:
            return state.actors[index].timer_account
        return None

    def step_violations(
        self, state: AccountsState, action: int, outcome: Outcome
    ) -> tuple[str, ...]:
        m = self.model
        bad: list[str] = []
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        obs = outcome.observations
        if kind in (READ, WAIT):
            # AC-SUSPEND-IFF: the check reads iff debt <= limit, else it waits
            debt = state.debt[m.reader_account[index]]
            if (kind == READ) != (debt <= m.limit):
                bad.append(SUSPEND_IFF)
        if kind == TURN and not borrows_before_repay(obs):
            bad.append(BORROW_BEFORE_REPAY)  # AC-BORROW-BEFORE-REPAY
        if kind == REPAY:
            held = state.actors[index].held
            repays = [o for o in obs if o.kind == "repay"]
            if [(o.account, o.amount) for o in repays] != [
                (m.account_names[held.account], held.cost)
            ] or any(o.kind == "borrow" for o in obs):
                bad.append(BORROW_BEFORE_REPAY)
        account = self.step_account(state, action)
        if account is not None:
            name = m.account_names[account]
            if any(o.kind == "borrow" and o.account != name for o in obs):
                bad.append(CHARGE)  # AC-CHARGE
        return tuple(bad)


def borrows_before_repay(observations: Sequence[Observation]) -> bool:
    """AC-BORROW-BEFORE-REPAY within a turn's commit: the only repays are sends to dead
    actors, each right after its own borrow (AC-DEAD-SEND); the turn's own loan is
    repaid later, by AC-REPAY."""
    previous: Observation | None = None
    for o in observations:
        if o.kind == "repay" and not (
            previous is not None
            and previous.kind == "borrow"
            and (previous.account, previous.amount) == (o.account, o.amount)
        ):
            return False
        previous = o
    return True
