"""The quorum-queue end (AMQ-QQ and its sub-rules; ``rabbit_fifo``, ``rabbit_fifo_client``).

>>> c = Consumer(delivery_count=0, credit=0, drain=False, checked_out=())
>>> c, q, out = on_credit(c, QueueMsgs(ready=2, next_msg=0), CreditRequest(0, 5, True))
>>> [type(f).__name__ for f in out], c.credit, c.delivery_count
(['Delivery', 'Delivery', 'CreditReply'], 0, 5)
"""

from __future__ import annotations

import math
from typing import NamedTuple

from creditflow.model.amqp.frames import CreditReply, CreditRequest, Delivery
from creditflow.model.amqp.link import link_credit_snd
from creditflow.model.amqp.policies import QueuePolicy
from creditflow.model.amqp.serial import add


class QueueMsgs(NamedTuple):
    """Ready messages: ``ready`` of them, the next to check out is ``next_msg``."""

    ready: int
    next_msg: int


class Consumer(NamedTuple):
    """A consumer as the queue holds it (AMQ-QQ-CREDITED): the queue owns its
    delivery-count. ``checked_out`` are the message ids delivered, not settled."""

    delivery_count: int
    credit: int
    drain: bool
    checked_out: tuple[int, ...]


def checkout(c: Consumer, q: QueueMsgs) -> tuple[Consumer, QueueMsgs, tuple[Delivery, ...]]:
    """Deliver while the consumer has credit and a message is ready (AMQ-QQ-CHECKOUT)."""
    out: list[Delivery] = []
    while c.credit > 0 and q.ready > 0:
        out.append(Delivery(q.next_msg))
        c = c._replace(
            delivery_count=add(c.delivery_count, 1),
            credit=c.credit - 1,
            checked_out=(*c.checked_out, q.next_msg),
        )
        q = QueueMsgs(q.ready - 1, q.next_msg + 1)
    return c, q, tuple(out)


def on_credit(
    c: Consumer, q: QueueMsgs, req: CreditRequest
) -> tuple[Consumer, QueueMsgs, tuple[Delivery | CreditReply, ...]]:
    """``credit_active_consumer/4`` (AMQ-QQ-CREDITED): grant, check out, drain, then
    reply after the deliveries."""
    credit = link_credit_snd(req.delivery_count, req.credit, c.delivery_count)
    c = c._replace(credit=credit, drain=req.drain)
    c, q, out = checkout(c, q)
    if req.drain and c.credit > 0:
        c = c._replace(delivery_count=add(c.delivery_count, c.credit), credit=0)
    reply = CreditReply(c.delivery_count, c.credit, q.ready, req.drain)
    return c, q, (*out, reply)


def settle(
    c: Consumer, q: QueueMsgs, seq: int, policy: QueuePolicy
) -> tuple[Consumer, QueueMsgs, tuple[Delivery, ...]]:
    """Complete ``seq`` (AMQ-QQ-SETTLE); a ``simple_prefetch`` consumer gets its credit
    back up to the prefetch and checks out again (AMQ-QQ-PREFETCH)."""
    if seq not in c.checked_out:
        raise ValueError(f"message {seq} is not checked out")
    c = c._replace(checked_out=tuple(m for m in c.checked_out if m != seq))
    if policy.consumer_mode == "simple_prefetch":
        c = c._replace(credit=min(policy.prefetch, c.credit + 1))
        return checkout(c, q)
    return c, q, ()


def returned(
    c: Consumer, q: QueueMsgs, seq: int, returns: int, delivery_limit: int | None
) -> tuple[Consumer, QueueMsgs, bool]:
    """Return ``seq`` to the queue (AMQ-QQ-SETTLE): ``returns`` is how often it was
    returned before this one; over ``delivery_limit`` it is dropped (``return_one/7``).
    The returned message is ready again (counted in ``ready``). Returns whether it was
    dropped."""
    if seq not in c.checked_out:
        raise ValueError(f"message {seq} is not checked out")
    c = c._replace(checked_out=tuple(m for m in c.checked_out if m != seq))
    if delivery_limit is not None and returns + 1 > delivery_limit:
        return c, q, True
    return c, q._replace(ready=q.ready + 1), False


def is_over(ready: int, limit: int | None) -> bool:
    """``is_over_limit/1`` (AMQ-QQ-OVERFLOW)."""
    return limit is not None and ready > limit


def is_below_low(ready: int, limit: int | None, low: float = 0.8) -> bool:
    """``is_below_soft_limit/1``: false when there is no limit (AMQ-QQ-OVERFLOW)."""
    return limit is not None and ready <= math.trunc(limit * low)


class Overflow(NamedTuple):
    """The queue's side of ``reject_publish`` (AMQ-QQ-OVERFLOW)."""

    limit: int | None
    enqueuer_blocked: bool


def evaluate_limit(
    o: Overflow, before_ready: int, ready: int, policy: QueuePolicy
) -> tuple[Overflow, tuple[str, ...]]:
    """``evaluate_limit0/4`` after a command moved ``ready`` (AMQ-QQ-OVERFLOW): the
    status messages (``"reject_publish"``/``"go"``) sent to the enqueuer."""
    if is_over(ready, o.limit):
        if not o.enqueuer_blocked:
            return o._replace(enqueuer_blocked=True), ("reject_publish",)
        return o, ()
    low = policy.low_limit
    if not is_below_low(before_ready, o.limit, low) and is_below_low(ready, o.limit, low):
        return o._replace(enqueuer_blocked=False), ("go",)
    return o, ()


def remove_limit(o: Overflow, policy: QueuePolicy) -> tuple[Overflow, tuple[str, ...]]:
    """A policy change deletes the limit (``update_config`` then ``evaluate_limit0/4``'s
    first clause): every enqueuer is sent ``go`` (AMQ-QQ-OVERFLOW). With
    ``go_on_limit_removed = False`` nothing is sent (the broken implementation)."""
    if policy.go_on_limit_removed:
        return Overflow(None, False), ("go",)
    return o._replace(limit=None), ()


class Enqueuer(NamedTuple):
    """``rabbit_fifo_client``'s enqueue side (AMQ-QQ-SOFT-LIMIT): commands pending,
    ``slow`` past the soft limit, and the queue status it last heard."""

    pending: tuple[int, ...]
    slow: bool
    status: str
    blocks: int = 0


def enqueue(e: Enqueuer, seq: int, policy: QueuePolicy) -> Enqueuer:
    """``enqueue/4`` with status ``go`` (AMQ-QQ-SOFT-LIMIT): pipeline, then
    ``slow = pending ≥ soft_limit`` (measured before adding, as the client does); a
    transition to slow is a ``block``."""
    slow = len(e.pending) >= policy.soft_limit
    blocks = e.blocks + (1 if slow and not e.slow else 0)
    return e._replace(pending=(*e.pending, seq), slow=slow, blocks=blocks)


def applied(e: Enqueuer, policy: QueuePolicy) -> tuple[Enqueuer, int]:
    """The oldest pending command was applied (``handle_ra_event/4``): returns the
    enqueuer and the applied message; below the soft limit ``slow`` clears
    (AMQ-QQ-SOFT-LIMIT)."""
    seq, rest = e.pending[0], e.pending[1:]
    slow = e.slow and not len(rest) < policy.soft_limit
    return e._replace(pending=rest, slow=slow), seq
