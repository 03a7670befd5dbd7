"""The properties PROP-AMQ-* as predicates on states of :mod:`system`.

:func:`state_violations` gives the ids of the state properties a state violates;
PROP-AMQ-NO-STALL is about final states (no action enabled): :func:`stalled`."""

from __future__ import annotations

from creditflow.model.amqp import system
from creditflow.model.amqp.frames import CreditReply, CreditRequest, Delivery, Flow, Frame, Transfer
from creditflow.model.amqp.link import LinkEnd
from creditflow.model.amqp.policies import CreditWindow, RabbitLinkCredit
from creditflow.model.amqp.queue import is_below_low
from creditflow.model.amqp.system import ConsumeState, LinkState, PublishState, State
from creditflow.model.amqp.topology import Topology

ALL = (
    "PROP-AMQ-CREDIT",
    "PROP-AMQ-NONNEG",
    "PROP-AMQ-AGREE",
    "PROP-AMQ-DRAIN",
    "PROP-AMQ-NO-STALL",
    "PROP-AMQ-PUBLISHER-GO",
    "PROP-AMQ-BOUNDS",
    "PROP-AMQ-CONSERVATION",
    "PROP-AMQ-RESEND",
)


def credit_ok(s: State) -> bool:
    """PROP-AMQ-CREDIT: no sender transferred without credit or window (history flags)."""
    if isinstance(s, LinkState | PublishState):
        return not s.sender.overrun
    return not s.relay.forced


def _frame_fields_ok(f: Frame) -> bool:
    if isinstance(f, Flow):
        if f.session is not None and f.session.incoming_window < 0:
            return False
        return f.link is None or f.link.credit >= 0
    if isinstance(f, CreditRequest | CreditReply):
        return f.credit >= 0
    return True


def nonneg_ok(s: State) -> bool:
    """PROP-AMQ-NONNEG: every credit a sender holds, every session window (a receiving
    session's own window goes below 0 only when the peer overran it) and every credit or
    window field in flight is ≥ 0. A receiver's own count of credit left is not
    advertised: it goes below 0 when the application lowered its credit while transfers
    were in flight, which §2.6.7 allows."""
    values: list[int] = []
    if isinstance(s, LinkState):
        values.append(s.sender.link.credit)
        sessions = [s.sender.session, s.receiver.session]
    elif isinstance(s, PublishState):
        values.append(s.sender.link.credit)
        sessions = [s.sender.session, s.broker.session]
    else:
        sessions = [s.session, s.receiver.session]
        values += [s.relay.client_credit, s.relay.queue_credit, s.consumer.credit]
    for ses in sessions:
        values += [ses.incoming_window, ses.remote_incoming_window]
    return min(values) >= 0 and all(_frame_fields_ok(f) for f in system.frames_of(s))


def _link_frames(wire: tuple[Frame, ...]) -> bool:
    return any(
        isinstance(f, Transfer) or (isinstance(f, Flow) and f.link is not None) for f in wire
    )


def _agree(snd: LinkEnd, rcv: LinkEnd) -> bool:
    """The receiver's credit is compared with its floor of 0, as the sender holds it
    (AMQ-LINK-CREDIT-SND)."""
    return snd.delivery_count == rcv.delivery_count and snd.credit == max(0, rcv.credit)


def agree_ok(s: State) -> bool:
    """PROP-AMQ-AGREE: with no frame of the link in flight, both ends hold the same
    delivery-count and credit (the relay: toward the client, and toward the queue)."""
    if isinstance(s, LinkState):
        return _link_frames((*s.fwd, *s.back)) or _agree(s.sender.link, s.receiver.link)
    if isinstance(s, PublishState):
        return _link_frames((*s.fwd, *s.back)) or _agree(s.sender.link, s.broker.link)
    r = s.relay
    client_ok = (
        _link_frames((*s.fwd, *s.back))
        or r.stashed is not None
        or (
            r.client_dc == s.receiver.link.delivery_count
            and r.client_credit == max(0, s.receiver.link.credit)
        )
    )
    queue_busy = (
        r.in_flight
        or any(isinstance(f, CreditRequest) for f in s.s2q)
        or any(isinstance(f, Delivery | CreditReply) for f in s.pending)
    )
    queue_ok = queue_busy or (
        r.queue_dc == s.consumer.delivery_count and r.queue_credit == s.consumer.credit
    )
    return client_ok and queue_ok


def drain_ok(s: State) -> bool:
    """PROP-AMQ-DRAIN: a drain answer in flight carries credit 0; a drain the sender has
    answered (nothing of the link in flight, the sender no longer draining) has ended;
    once a drain has ended (and the application has not resumed) with nothing of the
    link in flight, both ends have credit 0 and the same delivery-count."""
    for f in s.fwd:
        if isinstance(f, Flow) and f.link is not None and f.link.drain and f.link.credit != 0:
            return False
    if isinstance(s, PublishState):
        return True
    rcv = s.receiver
    if isinstance(s, ConsumeState):
        r = s.relay
        busy = r.stashed is not None
        sender_draining = r.in_flight or any(
            isinstance(f, Delivery | CreditReply) for f in s.pending
        )
        snd_dc, snd_credit = r.client_dc, r.client_credit
    else:
        busy = False
        sender_draining = s.sender.link.drain
        snd_dc, snd_credit = s.sender.link.delivery_count, s.sender.link.credit
    if busy or _link_frames((*s.fwd, *s.back)):
        return True
    if rcv.link.drain and not sender_draining:
        return False  # answered, yet not over: the answer did not consume the credit
    if not rcv.drained:
        return True
    return max(0, rcv.link.credit) == 0 and snd_credit == 0 and rcv.link.delivery_count == snd_dc


def publisher_go_ok(t: Topology, s: State) -> bool:
    """PROP-AMQ-PUBLISHER-GO: with no status message in flight and the queue below its
    low watermark or without a limit, the enqueuer's status is ``go``."""
    if not isinstance(s, PublishState) or s.status or t.queue is None:
        return True
    limit = s.overflow.limit
    free = limit is None or is_below_low(s.ready, limit, t.queue.low_limit)
    return not free or s.enqueuer.status == "go"


def _credit_bound(t: Topology) -> int | None:
    """The most deliveries a receiver can hold unsettled: ``W`` when its window policy
    renews as it settles (``W + T`` when it counts credit plus unsettled, AMQ-POL-CREDIT-WINDOW
    ``outstanding``: a renewal to ``W`` may find ``T`` unsettled), the sum of its hand
    grants when it has only those; none when it renews on arrival (then its buffer is the
    application's)."""
    c = t.receiver.credit
    if isinstance(c, CreditWindow) and c.renew_on == "settle" and not t.receiver.grants:
        return c.window + (c.threshold if c.count == "outstanding" else 0)
    if c is None:
        return sum(t.receiver.grants)
    return None


def max_unconfirmed(max_link_credit: int) -> int:
    """PROP-AMQ-BOUNDS: the most deliveries a RabbitMQ 4 inbound link holds unconfirmed,
    ``2 · max_link_credit − 1``: ``grant_link_credit/3`` (AMQ-RMQ-LINK-CREDIT) may grant
    ``max_link_credit`` while ``max_link_credit − 1`` are unconfirmed."""
    return 2 * max_link_credit - 1


def bounds_ok(t: Topology, s: State) -> bool:
    """PROP-AMQ-BOUNDS: unsettled within the credit window (:func:`_credit_bound`), a
    RabbitMQ inbound link's unconfirmed within :func:`max_unconfirmed`,
    the relay's queue credit within ``max_queue_credit``, checked-out within the prefetch."""
    if isinstance(s, PublishState):
        assert isinstance(t.broker_credit, RabbitLinkCredit)
        return len(s.broker.unconfirmed) <= max_unconfirmed(t.broker_credit.max_link_credit)
    bound = _credit_bound(t)
    if bound is not None and len(s.receiver.unsettled) > bound:
        return False
    if isinstance(s, ConsumeState):
        assert t.relay is not None and t.queue is not None
        if s.relay.queue_credit > t.relay.max_queue_credit:
            return False
        if (
            t.queue.consumer_mode == "simple_prefetch"
            and len(s.consumer.checked_out) > t.queue.prefetch
        ):
            return False
    return True


def _count(wire: tuple[Frame, ...], kind: type) -> int:
    return sum(1 for f in wire if isinstance(f, kind))


def conservation_ok(t: Topology, s: State) -> bool:
    """PROP-AMQ-CONSERVATION: every message is in exactly one place."""
    if isinstance(s, LinkState):
        total = (
            s.sender.supply
            + _count(s.fwd, Transfer)
            + len(s.receiver.unsettled)
            + s.receiver.settled
        )
        return total == t.supply and s.sender.sent == t.supply - s.sender.supply
    if isinstance(s, PublishState):
        total = (
            s.sender.supply
            + _count(s.fwd, Transfer)
            + len(s.enqueuer.pending)
            + s.ready
            + s.consumed
            + s.broker.rejected
        )
        return total == t.supply
    place = (
        s.msgs.ready
        + _count(s.pending, Delivery)
        + _count(s.fwd, Transfer)
        + len(s.receiver.unsettled)
        + s.receiver.settled
    )
    checked_out_ok = len(s.consumer.checked_out) == (
        _count(s.pending, Delivery)
        + _count(s.fwd, Transfer)
        + len(s.receiver.unsettled)
        + sum(1 for f in (*s.back, *s.s2q) if f.tag in ("disposition", "settle"))
    )
    return place == t.supply and checked_out_ok


def resend_ok(t: Topology, s: State) -> bool:
    """PROP-AMQ-RESEND: a credit request re-sent by a leader change grants nothing twice:
    the deliveries the queue has handed to the session and the session has not sent on
    never exceed ``max_queue_credit`` (the buffer RabbitMQ 4's relay bounds)."""
    if not isinstance(s, ConsumeState) or t.relay is None:
        return True
    return _count(s.pending, Delivery) <= t.relay.max_queue_credit


def state_violations(t: Topology, s: State) -> tuple[str, ...]:
    """The PROP-AMQ-* state properties ``s`` violates, in the order of :data:`ALL`."""
    checks = {
        "PROP-AMQ-CREDIT": credit_ok(s),
        "PROP-AMQ-NONNEG": nonneg_ok(s),
        "PROP-AMQ-AGREE": agree_ok(s),
        "PROP-AMQ-DRAIN": drain_ok(s),
        "PROP-AMQ-PUBLISHER-GO": publisher_go_ok(t, s),
        "PROP-AMQ-BOUNDS": bounds_ok(t, s),
        "PROP-AMQ-CONSERVATION": conservation_ok(t, s),
        "PROP-AMQ-RESEND": resend_ok(t, s),
    }
    return tuple(p for p in ALL if p in checks and not checks[p])


def complete(s: State) -> bool:
    """Every message has reached its end: the receiving application, the queue, or a
    rejection (PROP-AMQ-NO-STALL)."""
    if isinstance(s, LinkState):
        return s.sender.supply == 0 and not any(isinstance(f, Transfer) for f in s.fwd)
    if isinstance(s, PublishState):
        return (
            s.sender.supply == 0
            and not any(isinstance(f, Transfer) for f in s.fwd)
            and not s.enqueuer.pending
        )
    return (
        s.msgs.ready == 0
        and not any(isinstance(f, Delivery) for f in s.pending)
        and not any(isinstance(f, Transfer) for f in s.fwd)
    )


def stalled(t: Topology, s: State) -> bool:
    """PROP-AMQ-NO-STALL is violated at ``s``: nothing is enabled and messages are left."""
    return not complete(s) and not system.successors(t, s)
