"""Syndicate-style accounts: debt, loans, and readers waiting for clear funds (AC-*).

Read next to ``spec/accounts.md``. The model follows syndicate-rs (spec/sources.md §4):
every event sent in a turn is a *loan* charged to the account the turn runs under,
borrowed when the turn commits and repaid when the receiving actor's turn that
handles it completes; readers call ``ensure_clear_funds`` before each read and wait
while their account's debt exceeds the global limit.

A state is an :class:`AccountsState` of nested named tuples (immutable, hashable).
Every transition is a pure function returning an :class:`Outcome`: the next state and
the observations (borrow, repay, suspend, wake, …) it made, in order — the same
observations the ``accounts`` adapter family reports (``spec/adapter-protocol-accounts.md``).

Steps (AC-STEP): ``read`` and ``wait`` by a reader's input loop, ``turn`` and ``repay``
by an actor, ``fire`` by a timer, ``crash`` of an actor that may crash.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from creditflow.model.accounts.graph import ActorGraph

READY, WAITING, DEAD = 0, 1, 2
PHASE_NAMES = ("ready", "waiting", "dead")

#: Action kinds; an action is ``kind << ACTION_SHIFT | index`` (reader index for READ
#: and WAIT, actor index otherwise).
READ, WAIT, TURN, REPAY, FIRE, CRASH = range(6)
ACTION_SHIFT = 20
ACTION_NAMES = ("read", "wait", "turn", "repay", "fire", "crash")


class Loan(NamedTuple):
    """A ``LoanedItem``: ``cost`` events charged to account ``account`` (an index); ``hop``
    is how many sends the events are from their external cause (AC-HOPS)."""

    account: int
    cost: int
    hop: int


NO_LOAN = Loan(-1, 0, 0)


class ActorState(NamedTuple):
    alive: bool
    #: Queued turns, oldest first; each is a loan (AC-LOAN).
    mailbox: tuple[Loan, ...]
    #: The loan of the turn that ran and has not been dropped yet (AC-REPAY).
    held: Loan
    #: The account a timer was armed with (-1: not armed) and its firings left.
    timer_account: int
    timer_left: int


class ReaderState(NamedTuple):
    left: int
    phase: int


class AccountsState(NamedTuple):
    debt: tuple[int, ...]
    #: tokio ``Notify``'s stored permit, per account (AC-NOTIFY).
    permit: tuple[bool, ...]
    #: Readers waiting on each account, in the order they started waiting.
    waiters: tuple[tuple[int, ...], ...]
    readers: tuple[ReaderState, ...]
    actors: tuple[ActorState, ...]


class Observation(NamedTuple):
    """What a step did, as an implementation would report it: ``borrow``/``repay``
    (``account``, ``amount``, ``debt`` after), ``suspend``/``wake``/``permit`` (``who``: the
    reader; ``permit`` = a stored permit consumed by ``ensure_clear_funds``), ``notify``
    (a permit stored for ``account``: nobody was waiting)."""

    kind: str
    account: str
    amount: int = 0
    debt: int = 0
    who: str = ""


@dataclass(frozen=True)
class Outcome:
    state: AccountsState
    observations: tuple[Observation, ...]


@dataclass(frozen=True)
class Step:
    """A decoded action: ``kind`` by ``actor`` (the reader's actor for read/wait)."""

    kind: str
    actor: str

    def __str__(self) -> str:
        return f"{self.kind}({self.actor})"


class AccountsModel:
    """The AC transition system of an :class:`ActorGraph`."""

    def __init__(self, graph: ActorGraph) -> None:
        self.graph = graph
        self.limit = graph.limit
        self.max_hops = graph.max_hops
        names = graph.actor_names
        self.actor_names = names
        self.actor_index = {n: i for i, n in enumerate(names)}
        self.account_names = graph.accounts
        account_index = {a: i for i, a in enumerate(self.account_names)}
        self.reader_actor = tuple(self.actor_index[r] for r in graph.readers)
        self.reader_of_actor = {a: r for r, a in enumerate(self.reader_actor)}
        self.reader_account = tuple(account_index[graph.actor(r).account] for r in graph.readers)
        self.reader_batch = tuple(graph.actor(r).batch for r in graph.readers)
        self.out = tuple(
            tuple((self.actor_index[s.receiver], s.events) for s in graph.successors(n))
            for n in names
        )
        self.stalled = tuple(a.stalled for a in graph.actors)
        self.may_crash = tuple(a.may_crash for a in graph.actors)
        self.timer = tuple(a.timer for a in graph.actors)

    # -- state --------------------------------------------------------------------------

    def initial(self) -> AccountsState:
        """AC-INIT: every debt 0, no permit, empty mailboxes, full supplies."""
        n_acc = len(self.account_names)
        return AccountsState(
            debt=(0,) * n_acc,
            permit=(False,) * n_acc,
            waiters=((),) * n_acc,
            readers=tuple(
                ReaderState(self.graph.actor(r).reads or 0, READY) for r in self.graph.readers
            ),
            actors=tuple(ActorState(True, (), NO_LOAN, -1, t) for t in self.timer),
        )

    def forwards(self, hop: int) -> bool:
        """AC-HOPS: events ``hop`` sends from their cause are forwarded further."""
        return self.max_hops is None or hop < self.max_hops

    def reader_blocked(self, state: AccountsState, r: int) -> bool:
        return state.readers[r].phase == WAITING

    # -- enabledness -----------------------------------------------------------------------

    def enabled(self, state: AccountsState) -> Iterator[int]:
        """Every enabled action, in a fixed order (AC-STEP)."""
        for r, rs in enumerate(state.readers):
            if rs.phase == READY and rs.left > 0 and state.actors[self.reader_actor[r]].alive:
                clear = state.debt[self.reader_account[r]] <= self.limit
                yield (READ if clear else WAIT) << ACTION_SHIFT | r
        for x, st in enumerate(state.actors):
            if not st.alive:
                continue
            if st.held.account >= 0:
                yield REPAY << ACTION_SHIFT | x
            elif st.mailbox and not self.stalled[x]:
                yield TURN << ACTION_SHIFT | x
            if (
                st.held.account < 0
                and st.timer_account >= 0
                and st.timer_left > 0
                and not self.stalled[x]
            ):
                yield FIRE << ACTION_SHIFT | x
            if self.may_crash[x]:
                yield CRASH << ACTION_SHIFT | x

    def apply(self, state: AccountsState, action: int) -> Outcome:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        return (self.read, self.wait, self.turn, self.repay, self.fire, self.crash)[kind](
            state, index
        )

    def successors(self, state: AccountsState) -> list[tuple[int, AccountsState]]:
        return [(a, self.apply(state, a).state) for a in self.enabled(state)]

    def acting_actor(self, action: int) -> int:
        """The index of the actor that takes ``action`` (a reader's actor for read/wait)."""
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        return self.reader_actor[index] if kind in (READ, WAIT) else index

    def decode(self, action: int) -> Step:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        actor = self.reader_actor[index] if kind in (READ, WAIT) else index
        return Step(ACTION_NAMES[kind], self.actor_names[actor])

    def encode(self, kind: str, actor: str) -> int:
        k = ACTION_NAMES.index(kind)
        x = self.actor_index[actor]
        if k in (READ, WAIT):
            if x not in self.reader_of_actor:
                raise KeyError(f"{actor} is not a reader")
            x = self.reader_of_actor[x]
        return k << ACTION_SHIFT | x

    # -- bookkeeping shared by the steps ----------------------------------------------------

    def _borrow(self, b: StateBuilder, account: int, amount: int) -> None:
        """AC-BORROW: ``LoanedItem::new`` adds the cost to the account's debt."""
        b.debt[account] += amount
        b.obs.append(Observation("borrow", self.account_names[account], amount, b.debt[account]))

    def _repay(self, b: StateBuilder, account: int, amount: int) -> None:
        """AC-REPAY and AC-NOTIFY: dropping a loan subtracts its cost; if the new debt is
        at most the limit, ``notify_one``: wake the longest waiter, or store one permit."""
        b.debt[account] -= amount
        name = self.account_names[account]
        b.obs.append(Observation("repay", name, amount, b.debt[account]))
        if b.debt[account] <= self.limit:
            waiting = b.waiters[account]
            if waiting:
                r = waiting[0]
                b.waiters[account] = waiting[1:]
                b.readers[r] = b.readers[r]._replace(phase=READY)
                b.obs.append(
                    Observation(
                        "wake", name, 0, b.debt[account], self.actor_names[self.reader_actor[r]]
                    )
                )
            elif not b.permit[account]:
                b.permit[account] = True
                b.obs.append(Observation("notify", name, 0, b.debt[account]))

    def _send(self, b: StateBuilder, sender: int, loan: Loan) -> None:
        """AC-FANOUT: for each of ``loan.cost`` handled events, ``events`` events to each
        successor, grouped into one turn per destination (cost ``loan.cost * events``),
        charged to ``loan.account``; AC-DEAD-SEND: a send to a dead actor is borrowed
        and repaid at once."""
        if not self.forwards(loan.hop):
            return
        for receiver, events in self.out[sender]:
            cost = loan.cost * events
            self._borrow(b, loan.account, cost)
            target = b.actors[receiver]
            if target.alive:
                b.actors[receiver] = target._replace(
                    mailbox=(*target.mailbox, Loan(loan.account, cost, loan.hop + 1))
                )
            else:
                self._repay(b, loan.account, cost)

    # -- steps ---------------------------------------------------------------------------------

    def read(self, state: AccountsState, r: int) -> Outcome:
        """AC-READ: a ready reader whose account's debt is at most the limit reads one
        packet of ``batch`` events and handles it in an inline turn under its account:
        the inline turn is no loan, what it sends is (AC-FANOUT)."""
        b = StateBuilder(state)
        account = self.reader_account[r]
        rs = b.readers[r]
        b.readers[r] = rs._replace(left=rs.left - 1)
        self._send(b, self.reader_actor[r], Loan(account, self.reader_batch[r], 0))
        return b.outcome()

    def wait(self, state: AccountsState, r: int) -> Outcome:
        """AC-WAIT (``ensure_clear_funds``): a ready reader whose account's debt exceeds the
        limit consumes a stored permit and re-checks, or, without one, suspends until a
        repay to at most the limit wakes it (AC-NOTIFY)."""
        b = StateBuilder(state)
        account = self.reader_account[r]
        who = self.actor_names[self.reader_actor[r]]
        if b.permit[account]:
            b.permit[account] = False
            b.obs.append(
                Observation("permit", self.account_names[account], 0, b.debt[account], who)
            )
        else:
            b.readers[r] = b.readers[r]._replace(phase=WAITING)
            b.waiters[account] = (*b.waiters[account], r)
            b.obs.append(
                Observation("suspend", self.account_names[account], 0, b.debt[account], who)
            )
        return b.outcome()

    def turn(self, state: AccountsState, x: int) -> Outcome:
        """AC-TURN: an idle, live, non-stalled actor takes the oldest turn of its mailbox,
        handles its events and commits: every event it sends is borrowed now, charged to
        the turn's account (AC-FANOUT), while the turn's own loan is still held
        (AC-BORROW-BEFORE-REPAY). The actor's first turn arms its timer with the turn's
        account (AC-TIMER)."""
        b = StateBuilder(state)
        actor = b.actors[x]
        loan = actor.mailbox[0]
        timer_account = actor.timer_account
        if timer_account < 0 and actor.timer_left > 0:
            timer_account = loan.account
        b.actors[x] = actor._replace(
            mailbox=actor.mailbox[1:], held=loan, timer_account=timer_account
        )
        self._send(b, x, loan)
        return b.outcome()

    def repay(self, state: AccountsState, x: int) -> Outcome:
        """AC-REPAY: the actor drops the loan of the turn it ran (the ``LoanedItem`` goes
        out of scope) and repays its cost (AC-NOTIFY)."""
        b = StateBuilder(state)
        loan = b.actors[x].held
        b.actors[x] = b.actors[x]._replace(held=NO_LOAN)
        self._repay(b, loan.account, loan.cost)
        return b.outcome()

    def fire(self, state: AccountsState, x: int) -> Outcome:
        """AC-TIMER: an armed timer fires: one event handled by its actor in a turn under
        the account it was armed with (no loan itself); what it sends is charged there."""
        b = StateBuilder(state)
        actor = b.actors[x]
        b.actors[x] = actor._replace(timer_left=actor.timer_left - 1)
        self._send(b, x, Loan(actor.timer_account, 1, 0))
        return b.outcome()

    def crash(self, state: AccountsState, x: int) -> Outcome:
        """AC-CRASH: the actor dies. Its mailbox is dropped, so every queued loan is
        repaid (oldest first), then the loan it held; its timer is cancelled; if it is a
        reader its input loop ends. Later sends to it are AC-DEAD-SEND."""
        b = StateBuilder(state)
        actor = b.actors[x]
        b.actors[x] = ActorState(False, (), NO_LOAN, actor.timer_account, 0)
        for loan in (*actor.mailbox, actor.held):
            if loan.account >= 0:
                self._repay(b, loan.account, loan.cost)
        r = self.reader_of_actor.get(x)
        if r is not None:
            account = self.reader_account[r]
            b.waiters[account] = tuple(w for w in b.waiters[account] if w != r)
            b.readers[r] = b.readers[r]._replace(phase=DEAD)
        return b.outcome()

    # -- views used by properties and the explorer ------------------------------------------------

    def live_loans(self, state: AccountsState) -> Iterator[tuple[int, Loan, bool]]:
        """Every live loan as (actor, loan, held?)."""
        for x, st in enumerate(state.actors):
            for loan in st.mailbox:
                yield x, loan, False
            if st.held.account >= 0:
                yield x, st.held, True

    def quiescent(self, state: AccountsState) -> bool:
        """No queued turn and no held loan anywhere (AC-QUIESCENCE)."""
        return all(not st.mailbox and st.held.account < 0 for st in state.actors)

    def pending_work(self, state: AccountsState) -> bool:
        """A live reader with packets left, a live non-stalled actor with a queued or held
        turn, or an armed timer with firings left."""
        for r, rs in enumerate(state.readers):
            if rs.phase != DEAD and rs.left > 0 and state.actors[self.reader_actor[r]].alive:
                return True
        for x, st in enumerate(state.actors):
            if not st.alive or self.stalled[x]:
                continue
            if st.mailbox or st.held.account >= 0:
                return True
            if st.timer_account >= 0 and st.timer_left > 0:
                return True
        return False

    def blocked_mask(self, state: AccountsState) -> int:
        """Bit ``x`` set iff actor ``x`` is a reader waiting in ``ensure_clear_funds``:
        only readers ever wait (AC-NO-DEADLOCK)."""
        mask = 0
        for r, rs in enumerate(state.readers):
            if rs.phase == WAITING:
                mask |= 1 << self.reader_actor[r]
        return mask


class StateBuilder:
    """Mutable copy of a state inside one step (never escapes a step)."""

    def __init__(self, state: AccountsState) -> None:
        self.debt = list(state.debt)
        self.permit = list(state.permit)
        self.waiters = list(state.waiters)
        self.readers = list(state.readers)
        self.actors = list(state.actors)
        self.obs: list[Observation] = []

    def outcome(self) -> Outcome:
        return Outcome(
            AccountsState(
                tuple(self.debt),
                tuple(self.permit),
                tuple(self.waiters),
                tuple(self.readers),
                tuple(self.actors),
            ),
            tuple(self.obs),
        )
