"""The transition system over a topology (AMQ-TS): states, enabled actions, successors.

A state is a hashable NamedTuple of NamedTuples and tuples; :func:`successors` lists
``(action, state')`` for every enabled action in a fixed order, so a search over it is
deterministic. Three shapes (AMQ-TOPOLOGY): ``link`` (a client sender and a client
receiver), ``publish`` (a client sender, RabbitMQ 4's session, a quorum queue) and
``consume`` (a quorum queue, RabbitMQ 4's relay and session, a client receiver).

Rules are looked up through their modules at call time (``endpoints.send``, …), so a
test can replace one rule and watch a property catch it."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from creditflow.model.amqp import endpoints, link, queue, relay, session
from creditflow.model.amqp.endpoints import Receiver, Sender
from creditflow.model.amqp.frames import (
    CreditReply,
    CreditRequest,
    Delivery,
    Disposition,
    Flow,
    Frame,
    Settle,
    Transfer,
    Wire,
)
from creditflow.model.amqp.link import LinkEnd, LinkFlow
from creditflow.model.amqp.queue import Consumer, Enqueuer, Overflow, QueueMsgs
from creditflow.model.amqp.relay import Relay
from creditflow.model.amqp.session import SessionEnd
from creditflow.model.amqp.topology import Topology

Action = str
"""An action's name (AMQ-TS): ``send``, ``take_fwd``, ``take_back``, ``settle``, …"""


class LinkState(NamedTuple):
    """The ``link`` shape: sender → ``fwd`` → receiver → ``back`` → sender."""

    sender: Sender
    fwd: Wire
    receiver: Receiver
    back: Wire


class Broker(NamedTuple):
    """RabbitMQ 4's session as the receiving end of a publishing link
    (AMQ-RMQ-SESSION-WINDOW, AMQ-RMQ-LINK-CREDIT): ``unconfirmed`` are deliveries sent
    to the queue and not yet confirmed; ``rejected`` counts deliveries the queue refused."""

    link: LinkEnd
    session: SessionEnd
    unconfirmed: tuple[int, ...]
    rejected: int


class PublishState(NamedTuple):
    """The ``publish`` shape: sender → ``fwd`` → broker → enqueuer → queue; ``status``
    carries the queue's ``go``/``reject_publish`` messages to the enqueuer."""

    sender: Sender
    fwd: Wire
    back: Wire
    broker: Broker
    enqueuer: Enqueuer
    ready: int
    consumed: int
    overflow: Overflow
    status: tuple[str, ...]


class ConsumeState(NamedTuple):
    """The ``consume`` shape: queue → ``pending`` (deliveries and credit replies, then the
    session's ``outgoing_pending``) → relay/session → ``fwd`` → receiver → ``back`` →
    session → ``s2q`` → queue."""

    msgs: QueueMsgs
    consumer: Consumer
    s2q: Wire
    pending: Wire
    relay: Relay
    session: SessionEnd
    fwd: Wire
    receiver: Receiver
    back: Wire
    applied: CreditRequest | None = None
    """AMQ-FAULT-LEADER-CHANGE: the last credit request the queue applied whose answer
    the session has not taken yet (what a new leader may be sent again)."""
    leader_changes: int = 0
    """AMQ-FAULT-LEADER-CHANGE: leader changes still possible."""


State = LinkState | PublishState | ConsumeState


def initial_state(t: Topology) -> State:
    """The state after BEGIN and ATTACH (AMQ-BEGIN-ATTACH, AMQ-TS)."""
    i = t.initial
    if t.shape == "link":
        ses = session.initial_session(t.sender_window, i, session.initial_window(t.receiver.window))
        rcv, flows = endpoints.initial_receiver(
            t.receiver, i, session.initial_window(t.sender_window)
        )
        return LinkState(Sender(LinkEnd(i, 0), ses, t.supply, 0), (), rcv, flows)
    if t.shape == "publish":
        assert t.broker_window is not None and t.broker_credit is not None and t.queue is not None
        bw = session.initial_window(t.broker_window)
        ses = session.initial_session(t.sender_window, i, bw)
        bses = session.initial_session(t.broker_window, i, session.initial_window(t.sender_window))
        c = t.broker_credit.max_link_credit
        broker = Broker(LinkEnd(i, c), bses, (), 0)
        back: Wire = (Flow(session.flow_fields(bses), LinkFlow(i, c)),)
        return PublishState(
            Sender(LinkEnd(i, 0), ses, t.supply, 0),
            (),
            back,
            broker,
            Enqueuer((), False, "go"),
            0,
            0,
            Overflow(t.queue.max_length, False),
            (),
        )
    assert t.broker_window is not None
    bses = session.initial_session(t.broker_window, i, session.initial_window(t.receiver.window))
    rcv, flows = endpoints.initial_receiver(t.receiver, i, session.initial_window(t.broker_window))
    return ConsumeState(
        QueueMsgs(t.supply, 0),
        Consumer(i, 0, False, ()),
        (),
        (),
        relay.initial_relay(i),
        bses,
        (),
        rcv,
        flows,
        None,
        t.queue.leader_changes if t.queue is not None else 0,
    )


def _receiver_moves(
    t: Topology, r: Receiver
) -> list[tuple[Action, Callable[[], tuple[Receiver, Wire]]]]:
    """The receiving application's own actions (AMQ-APP, AMQ-POL-CREDIT-MANUAL, AMQ-LINK-DRAIN)."""
    cfg = t.receiver
    moves: list[tuple[Action, Callable[[], tuple[Receiver, Wire]]]] = []
    if endpoints.receiver_may_settle(r):

        def _settle() -> tuple[Receiver, Wire]:
            r2, seq, flows = endpoints.receiver_settle(cfg, r)
            extra: Wire = (Disposition(seq),) if t.shape == "consume" else ()
            return r2, (*flows, *extra)

        moves.append(("settle", _settle))
    if endpoints.receiver_may_grant(cfg, r):

        def _grant() -> tuple[Receiver, Wire]:
            r2, f = endpoints.receiver_grant(cfg, r)
            return r2, (f,)

        moves.append(("grant", _grant))
    if endpoints.receiver_may_drain(cfg, r):

        def _drain() -> tuple[Receiver, Wire]:
            r2, f = endpoints.receiver_drain(r)
            return r2, (f,)

        moves.append(("drain", _drain))
    if endpoints.receiver_may_resume(cfg, r):
        moves.append(("resume", lambda: endpoints.receiver_resume(cfg, r)))
    return moves


def _link_successors(t: Topology, s: LinkState) -> list[tuple[Action, State]]:
    out: list[tuple[Action, State]] = []
    if endpoints.sender_may_send(s.sender):
        snd, tr = endpoints.send(s.sender)
        out.append(("send", s._replace(sender=snd, fwd=(*s.fwd, tr))))
    if endpoints.sender_may_end_drain(s.sender):
        snd, f = endpoints.sender_end_drain(s.sender)
        out.append(("drain_done", s._replace(sender=snd, fwd=(*s.fwd, f))))
    if s.fwd:
        head = s.fwd[0]
        assert isinstance(head, Transfer | Flow)
        rcv, flows = endpoints.receiver_on_frame(t.receiver, s.receiver, head)
        out.append(("take_fwd", s._replace(fwd=s.fwd[1:], receiver=rcv, back=(*s.back, *flows))))
    if s.back:
        head = s.back[0]
        assert isinstance(head, Flow)
        snd, answers = endpoints.sender_on_flow(s.sender, head, t.sender_credit)
        out.append(("take_back", s._replace(sender=snd, back=s.back[1:], fwd=(*s.fwd, *answers))))
    for name, move in _receiver_moves(t, s.receiver):
        rcv, frames = move()
        out.append((name, s._replace(receiver=rcv, back=(*s.back, *frames))))
    return out


def broker_may_grant(b: Broker, max_link_credit: int) -> bool:
    """``grant_link_credit/3`` (AMQ-RMQ-LINK-CREDIT)."""
    return b.link.credit <= max_link_credit // 2 and len(b.unconfirmed) < max_link_credit


def _broker_grant(t: Topology, b: Broker) -> tuple[Broker, LinkFlow | None]:
    assert t.broker_credit is not None
    c = t.broker_credit.max_link_credit
    if broker_may_grant(b, c):
        b = b._replace(link=b.link._replace(credit=c))
        return b, LinkFlow(b.link.delivery_count, c)
    return b, None


def _publish_successors(t: Topology, s: PublishState) -> list[tuple[Action, State]]:
    assert t.queue is not None and t.broker_window is not None
    qp = t.queue
    out: list[tuple[Action, State]] = []
    if endpoints.sender_may_send(s.sender):
        snd, tr = endpoints.send(s.sender)
        out.append(("send", s._replace(sender=snd, fwd=(*s.fwd, tr))))
    if s.fwd:
        head = s.fwd[0]
        assert isinstance(head, Transfer)
        b = s.broker
        ses, window_flow = session.received(t.broker_window, b.session, (), 0)
        b = b._replace(session=ses, link=link.transferred(b.link))
        enq = s.enqueuer
        if enq.status == "reject_publish":
            b = b._replace(rejected=b.rejected + 1)
        else:
            enq = queue.enqueue(enq, head.seq, qp)
            b = b._replace(unconfirmed=(*b.unconfirmed, head.seq))
        b, lf = _broker_grant(t, b)
        flows: Wire = (
            (Flow(session.flow_fields(b.session), lf),) if lf is not None or window_flow else ()
        )
        out.append(
            ("take_fwd", s._replace(fwd=s.fwd[1:], broker=b, enqueuer=enq, back=(*s.back, *flows)))
        )
    if s.back:
        head = s.back[0]
        assert isinstance(head, Flow)
        snd, answers = endpoints.sender_on_flow(s.sender, head, t.sender_credit)
        out.append(("take_back", s._replace(sender=snd, back=s.back[1:], fwd=(*s.fwd, *answers))))
    if s.enqueuer.pending:
        enq, seq = queue.applied(s.enqueuer, qp)
        ov, msgs = queue.evaluate_limit(s.overflow, s.ready, s.ready + 1, qp)
        b = s.broker._replace(unconfirmed=tuple(m for m in s.broker.unconfirmed if m != seq))
        b, lf = _broker_grant(t, b)
        flows = (Flow(session.flow_fields(b.session), lf),) if lf is not None else ()
        out.append(
            (
                "apply",
                s._replace(
                    enqueuer=enq,
                    ready=s.ready + 1,
                    overflow=ov,
                    status=(*s.status, *msgs),
                    broker=b,
                    back=(*s.back, *flows),
                ),
            )
        )
    if qp.consumes and s.ready > 0:
        ov, msgs = queue.evaluate_limit(s.overflow, s.ready, s.ready - 1, qp)
        out.append(
            (
                "consume",
                s._replace(
                    ready=s.ready - 1,
                    consumed=s.consumed + 1,
                    overflow=ov,
                    status=(*s.status, *msgs),
                ),
            )
        )
    if qp.limit_removable and s.overflow.limit is not None:
        ov, msgs = queue.remove_limit(s.overflow, qp)
        out.append(("remove_limit", s._replace(overflow=ov, status=(*s.status, *msgs))))
    if s.status:
        out.append(
            (
                "status",
                s._replace(enqueuer=s.enqueuer._replace(status=s.status[0]), status=s.status[1:]),
            )
        )
    return out


def _consume_successors(t: Topology, s: ConsumeState) -> list[tuple[Action, State]]:
    assert t.queue is not None and t.relay is not None
    out: list[tuple[Action, State]] = []
    if s.s2q:
        head = s.s2q[0]
        applied = s.applied
        if isinstance(head, CreditRequest):
            c, q, frames = queue.on_credit(s.consumer, s.msgs, head)
            applied = head
        else:
            assert isinstance(head, Settle)
            c, q, frames = queue.settle(s.consumer, s.msgs, head.seq, t.queue)
        nxt = s._replace(
            s2q=s.s2q[1:], consumer=c, msgs=q, pending=(*s.pending, *frames), applied=applied
        )
        out.append(("queue", nxt))
    # AMQ-FAULT: faults are environment actions, bounded per topology
    if s.leader_changes > 0 and s.applied is not None:
        # AMQ-FAULT-LEADER-CHANGE: rabbit_fifo_client re-sends to the new leader a credit
        # request the old leader applied and whose answer the session has not taken
        resent = s._replace(s2q=(*s.s2q, s.applied), leader_changes=s.leader_changes - 1)
        out.append(("leader_change", resent))
    if s.pending:
        head = s.pending[0]
        if isinstance(head, CreditReply):
            rl, reqs, lflows = relay.on_credit_reply(s.relay, head, t.relay)
            flows = tuple(Flow(session.flow_fields(s.session), lf) for lf in lflows)
            out.append(
                (
                    "relay",
                    s._replace(
                        pending=s.pending[1:],
                        relay=rl,
                        s2q=(*s.s2q, *reqs),
                        fwd=(*s.fwd, *flows),
                        applied=None,  # its answer taken: nothing of it left to re-send
                    ),
                )
            )
        elif session.can_send(s.session):
            assert isinstance(head, Delivery)
            rl, reqs = relay.on_delivery_sent(s.relay, t.relay)
            out.append(
                (
                    "send",
                    s._replace(
                        pending=s.pending[1:],
                        relay=rl,
                        session=session.sent(s.session),
                        s2q=(*s.s2q, *reqs),
                        fwd=(*s.fwd, Transfer(head.seq)),
                    ),
                )
            )
    if s.fwd:
        head = s.fwd[0]
        assert isinstance(head, Transfer | Flow)
        rcv, rflows = endpoints.receiver_on_frame(t.receiver, s.receiver, head)
        out.append(("take_fwd", s._replace(fwd=s.fwd[1:], receiver=rcv, back=(*s.back, *rflows))))
    if s.back:
        head = s.back[0]
        nxt = s._replace(back=s.back[1:])
        if isinstance(head, Disposition):
            nxt = nxt._replace(s2q=(*s.s2q, Settle(head.seq)))
        else:
            assert isinstance(head, Flow)
            if head.session is not None:
                nxt = nxt._replace(session=session.on_flow(s.session, head.session))
            if head.link is not None:
                rl, reqs = relay.on_client_flow(s.relay, head.link, t.relay)
                nxt = nxt._replace(relay=rl, s2q=(*s.s2q, *reqs))
        out.append(("take_back", nxt))
    for name, move in _receiver_moves(t, s.receiver):
        rcv, sent_back = move()
        out.append((name, s._replace(receiver=rcv, back=(*s.back, *sent_back))))
    return out


def successors(t: Topology, s: State) -> list[tuple[Action, State]]:
    """Every enabled action with its successor, in a fixed order (AMQ-TS)."""
    if isinstance(s, LinkState):
        return _link_successors(t, s)
    if isinstance(s, PublishState):
        return _publish_successors(t, s)
    return _consume_successors(t, s)


def enabled(t: Topology, s: State) -> list[Action]:
    """The names of the enabled actions (AMQ-TS)."""
    return [a for a, _ in successors(t, s)]


def step(t: Topology, s: State, action: Action) -> State:
    """The successor by ``action``; an action that is not enabled is an error (AMQ-TS)."""
    for a, nxt in successors(t, s):
        if a == action:
            return nxt
    raise ValueError(f"action {action!r} is not enabled")


def frames_of(s: State) -> tuple[Frame, ...]:
    """Every frame on every wire of ``s``."""
    if isinstance(s, LinkState):
        return (*s.fwd, *s.back)
    if isinstance(s, PublishState):
        return (*s.fwd, *s.back)
    return (*s.s2q, *s.pending, *s.fwd, *s.back)
