"""The per-process ``credit_flow`` API of RabbitMQ 3.10.8 as pure functions.

Read this module next to ``spec/credit-flow.md``: each function is named as in
the spec and cites the rule ids it implements. A :class:`ProcessCredit` is the
``credit_flow`` part of one Erlang process dictionary; every operation returns
a new value (nothing is mutated) together with the ``bump_credit`` messages the
process sent during the operation, in send order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from creditflow.model.credit.spec import FLOW_STATE_WINDOW_MS, CreditSpec

#: A peer process, by name (RabbitMQ keys by pid; every model here names its processes).
Peer = str
#: A ``bump_credit`` message as (recipient, amount) (CF-GRANT).
Grant = tuple[Peer, int]

_EMPTY: dict = {}


class ProcessCredit:
    """The credit state of one process (CF-STATE-VARS).

    ``credit_from[Q]``: credit left for sending to Q (sender side, may be negative).
    ``credit_to[Q]``: acks left until the next grant to Q (receiver side).
    ``blocked``: the multiset of blockers as RabbitMQ's list, newest first (CF-MULTISET).
    ``deferred``: grants held back while blocked, newest first (CF-DEFER).
    ``blocked_at``: time (ms) of the last not-blocked -> blocked transition, never erased.
    """

    __slots__ = ("credit_from", "credit_to", "blocked", "deferred", "blocked_at", "_hash")

    credit_from: Mapping[Peer, int]
    credit_to: Mapping[Peer, int]
    blocked: tuple[Peer, ...]
    deferred: tuple[Grant, ...]
    blocked_at: int | None

    def __init__(
        self,
        credit_from: Mapping[Peer, int] = _EMPTY,
        credit_to: Mapping[Peer, int] = _EMPTY,
        blocked: tuple[Peer, ...] = (),
        deferred: tuple[Grant, ...] = (),
        blocked_at: int | None = None,
    ) -> None:
        self.credit_from = credit_from
        self.credit_to = credit_to
        self.blocked = blocked
        self.deferred = deferred
        self.blocked_at = blocked_at
        self._hash: int | None = None

    def _with(self, **changes: Any) -> ProcessCredit:
        """A copy with some fields changed (the others are shared: nothing mutates)."""
        get = changes.get
        return ProcessCredit(
            get("credit_from", self.credit_from),
            get("credit_to", self.credit_to),
            get("blocked", self.blocked),
            get("deferred", self.deferred),
            get("blocked_at", self.blocked_at),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProcessCredit):
            return NotImplemented
        return (
            self.blocked == other.blocked
            and self.deferred == other.deferred
            and self.blocked_at == other.blocked_at
            and self.credit_from == other.credit_from
            and self.credit_to == other.credit_to
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(
                (
                    frozenset(self.credit_from.items()),
                    frozenset(self.credit_to.items()),
                    self.blocked,
                    self.deferred,
                    self.blocked_at,
                )
            )
        return self._hash

    def __repr__(self) -> str:
        return (
            f"ProcessCredit(credit_from={dict(self.credit_from)!r}, "
            f"credit_to={dict(self.credit_to)!r}, blocked={self.blocked!r}, "
            f"deferred={self.deferred!r}, blocked_at={self.blocked_at!r})"
        )


INITIAL = ProcessCredit()


class Outcome(NamedTuple):
    """The result of an operation: the new state and the grants sent, in order."""

    state: ProcessCredit
    emitted: tuple[Grant, ...] = ()


def _put(mapping: Mapping[Peer, int], key: Peer, value: int) -> dict[Peer, int]:
    updated = dict(mapping)
    updated[key] = value
    return updated


def _erase(mapping: Mapping[Peer, int], key: Peer) -> Mapping[Peer, int]:
    if key not in mapping:
        return mapping
    updated = dict(mapping)
    del updated[key]
    return updated


def is_blocked(ps: ProcessCredit) -> bool:
    """CF-BLOCKED: a process is blocked iff its multiset of blockers is non-empty."""
    return bool(ps.blocked)


def block(ps: ProcessCredit, peer: Peer, now: int = 0) -> ProcessCredit:
    """CF-BLOCK: add one occurrence of ``peer``; record the onset time if newly blocked."""
    blocked_at = ps.blocked_at if ps.blocked else now
    return ps._with(blocked=(peer, *ps.blocked), blocked_at=blocked_at)


def unblock(ps: ProcessCredit, peer: Peer) -> Outcome:
    """CF-UNBLOCK, CF-FLUSH: remove one occurrence of ``peer``; when none is left, send
    every deferred grant, newest first, and forget them."""
    blocked = ps.blocked
    if peer in blocked:
        i = blocked.index(peer)
        blocked = blocked[:i] + blocked[i + 1 :]
    if blocked:
        return Outcome(ps._with(blocked=blocked))
    return Outcome(ps._with(blocked=(), deferred=()), ps.deferred)


def send(ps: ProcessCredit, peer: Peer, spec: CreditSpec, now: int = 0) -> ProcessCredit:
    """CF-SEND, CF-NEGATIVE, CF-DISABLED: spend one credit toward ``peer``.

    The entry starts at ``InitialCredit``. Spending the last credit (1 -> 0) blocks on
    ``peer``; at or below 0 credit just goes more negative, without blocking again.
    """
    credit = ps.credit_from.get(peer, spec.initial)
    if credit == 1:
        ps = block(ps, peer, now)
        return ps._with(credit_from=_put(ps.credit_from, peer, 0))
    return ps._with(credit_from=_put(ps.credit_from, peer, credit - 1))


def grant(ps: ProcessCredit, peer: Peer, amount: int) -> Outcome:
    """CF-GRANT, CF-DEFER: send ``bump_credit`` to ``peer``, or hold it back (prepended)
    while this process is itself blocked."""
    if ps.blocked:
        return Outcome(ps._with(deferred=((peer, amount), *ps.deferred)))
    return Outcome(ps, ((peer, amount),))


def ack(ps: ProcessCredit, peer: Peer, spec: CreditSpec) -> Outcome:
    """CF-ACK: count one received message from ``peer``; every ``MoreCreditAfter``-th ack
    grants ``MoreCreditAfter`` credit (the counter starts at ``MoreCreditAfter``)."""
    left = ps.credit_to.get(peer, spec.more_after)
    if left == 1:
        granted = grant(ps, peer, spec.more_after)
        return Outcome(
            granted.state._with(credit_to=_put(ps.credit_to, peer, spec.more_after)),
            granted.emitted,
        )
    return Outcome(ps._with(credit_to=_put(ps.credit_to, peer, left - 1)))


def handle_bump(ps: ProcessCredit, peer: Peer, amount: int) -> Outcome:
    """CF-BUMP, CF-BUMP-UNKNOWN: add ``amount`` to the credit toward ``peer`` (an unknown
    peer starts from 0, not from InitialCredit); unblock on ``peer`` only when the credit
    crosses from <= 0 to > 0."""
    credit = ps.credit_from.get(peer, 0)
    emitted: tuple[Grant, ...] = ()
    if credit <= 0 < credit + amount:
        ps, emitted = unblock(ps, peer)
    return Outcome(ps._with(credit_from=_put(ps.credit_from, peer, credit + amount)), emitted)


def peer_down(ps: ProcessCredit, peer: Peer) -> Outcome:
    """CF-PEER-DOWN: unblock on ``peer`` once and forget both credit entries for it.

    Deferred grants addressed to ``peer`` are kept (they are later sent into the void).
    """
    ps, emitted = unblock(ps, peer)
    ps = ps._with(credit_from=_erase(ps.credit_from, peer), credit_to=_erase(ps.credit_to, peer))
    return Outcome(ps, emitted)


def flow_state(ps: ProcessCredit, now: int, window_ms: int = FLOW_STATE_WINDOW_MS) -> str:
    """CF-STATE: ``flow`` while blocked, and for ``window_ms`` after the onset of the last
    block (not after the unblock); ``running`` otherwise."""
    if ps.blocked:
        return "flow"
    if ps.blocked_at is not None and now - ps.blocked_at < window_ms:
        return "flow"
    return "running"
