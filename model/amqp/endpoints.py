"""The client applications' endpoints: a sender with its session, a receiver with its
session, credit policy and application (AMQ-LINK-*, AMQ-POL-CREDIT-*, AMQ-APP), in the
readings AMQ-READING decides (the ``since_grant`` count on settle, a drain only with
credit, no renewal between a drain's end and ``resume``, one FLOW per event)."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.amqp import link, session
from creditflow.model.amqp.frames import Flow, Transfer
from creditflow.model.amqp.link import LinkEnd, LinkFlow
from creditflow.model.amqp.policies import (
    CreditPolicy,
    CreditWindow,
    GrantDrain,
    SenderCredit,
    WindowPolicy,
)
from creditflow.model.amqp.session import SessionEnd


class Sender(NamedTuple):
    """A sending client (AMQ-LINK-STATE): its link end, session end, supply (what it
    has ``available``), messages sent, and the history flag of PROP-AMQ-CREDIT."""

    link: LinkEnd
    session: SessionEnd
    supply: int
    sent: int
    overrun: bool = False


def sender_may_send(s: Sender) -> bool:
    """A transfer needs supply, link credit (AMQ-LINK-TRANSFER) and remote incoming
    window (AMQ-SESSION-SEND)."""
    return s.supply > 0 and s.link.credit > 0 and session.can_send(s.session)


def send(s: Sender) -> tuple[Sender, Transfer]:
    """One transfer (AMQ-LINK-TRANSFER, AMQ-SESSION-SEND); records an overrun if the
    caller let it go without credit or window (PROP-AMQ-CREDIT)."""
    overrun = s.overrun or s.link.credit <= 0 or not session.can_send(s.session)
    out = Transfer(s.sent)
    return (
        s._replace(
            link=link.transferred(s.link),
            session=session.sent(s.session),
            supply=s.supply - 1,
            sent=s.sent + 1,
            overrun=overrun,
        ),
        out,
    )


def sender_on_flow(s: Sender, flow: Flow, policy: SenderCredit) -> tuple[Sender, tuple[Flow, ...]]:
    """A FLOW from the receiver: session fields (AMQ-SESSION-FLOW), link fields
    (AMQ-LINK-CREDIT-SND), and an answer to ``echo`` (AMQ-LINK-FLOW)."""
    if flow.session is not None:
        s = s._replace(session=session.on_flow(s.session, flow.session))
    if flow.link is None:
        return s, ()
    s = s._replace(link=link.sender_on_flow(s.link, flow.link, policy))
    if flow.link.echo:
        return s, (Flow(None, link.echo_flow(s.link, s.supply)),)
    return s, ()


def sender_may_end_drain(s: Sender) -> bool:
    """A draining sender with nothing available ends the drain (AMQ-LINK-DRAIN)."""
    return s.link.drain and s.supply == 0


def sender_end_drain(s: Sender) -> tuple[Sender, Flow]:
    """AMQ-LINK-DRAIN on the sender."""
    end, flow = link.drain_done(s.link)
    return s._replace(link=end), Flow(None, flow)


class Receiver(NamedTuple):
    """A receiving client (AMQ-APP): link end, session end, the unsettled deliveries
    ``(transfer id, message, held)`` oldest first, arrivals so far, the count since the
    last grant (AMQ-POL-CREDIT-WINDOW ``since_grant``: arrivals, or settlements when the
    window renews on settle, AMQ-READING-SETTLE-COUNT), hand grants and drains used,
    messages settled, and ``drained``: a drain ended and the application has not
    resumed yet (AMQ-LINK-DRAIN, AMQ-READING-DRAIN-RESUME)."""

    link: LinkEnd
    session: SessionEnd
    unsettled: tuple[tuple[int, int, bool], ...]
    arrivals: int
    since_grant: int
    grants_used: int
    drains_used: int
    settled: int
    drained: bool = False


class ReceiverConfig(NamedTuple):
    """The receiving client's parameters (AMQ-APP, AMQ-POL)."""

    credit: CreditPolicy
    window: WindowPolicy
    holds: int
    grants: tuple[int, ...]
    drains: int
    #: AMQ-POL-GRANT-DRAIN: the drain flag a hand grant carries (a legal choice, §2.7.4)
    grant_drain: GrantDrain = "keep"


def initial_receiver(
    cfg: ReceiverConfig, initial: int, remote_window: int
) -> tuple[Receiver, tuple[Flow, ...]]:
    """After BEGIN and ATTACH; a window policy sends its first grant (AMQ-BEGIN-ATTACH)."""
    ses = session.initial_session(cfg.window, initial, remote_window)
    r = Receiver(LinkEnd(initial, 0), ses, (), 0, 0, 0, 0, 0)
    if isinstance(cfg.credit, CreditWindow):
        r = r._replace(link=r.link._replace(credit=cfg.credit.window))
        return r, (_flow(r, LinkFlow(initial, cfg.credit.window)),)
    return r, ()


def _flow(r: Receiver, lf: LinkFlow | None) -> Flow:
    return Flow(session.flow_fields(r.session), lf)


def renewal_flows(r: Receiver, lf: LinkFlow | None, window_renewed: bool) -> tuple[Flow, ...]:
    """The FLOWs an event sends (AMQ-LINK-FLOW, AMQ-READING-ONE-FLOW): one FLOW with the
    session fields and, on a credit renewal, the link fields, even when the session
    window and the link credit renew on the same event; none when neither renews."""
    if lf is None and not window_renewed:
        return ()
    return (_flow(r, lf),)


def counts_settlements(cfg: ReceiverConfig) -> bool:
    """Whether the ``since_grant`` count is of settlements (a credit window renewed on
    settle) rather than arrivals (AMQ-POL-CREDIT-WINDOW, AMQ-READING-SETTLE-COUNT)."""
    return isinstance(cfg.credit, CreditWindow) and cfg.credit.renew_on == "settle"


def renewal_open(r: Receiver, point: str) -> bool:
    """Whether the window policy may renew at ``point``: a draining receiver renews
    nothing (AMQ-LINK-DRAIN), and once its drain has ended only ``resume`` renews
    (AMQ-READING-DRAIN-RESUME)."""
    if r.link.drain:
        return False
    return not r.drained or point == "resume"


def _renew(cfg: ReceiverConfig, r: Receiver, point: str) -> tuple[Receiver, LinkFlow | None]:
    """AMQ-POL-CREDIT-WINDOW at a renewal point (``arrival``, ``settle``, ``resume``)."""
    pol = cfg.credit
    if not isinstance(pol, CreditWindow) or point not in (pol.renew_on, "resume"):
        return r, None
    if not renewal_open(r, point):
        return r, None
    if pol.count == "credit":
        due = r.link.credit <= pol.threshold
    elif pol.count == "outstanding":  # credit plus unsettled deliveries, renewed to W
        due = r.link.credit + len(r.unsettled) <= pol.threshold
    else:
        due = r.since_grant >= pol.window - pol.threshold
    if not due:
        return r, None
    full = pol.renew_on == "arrival" or pol.count == "outstanding"
    new = pol.window if full else pol.window - len(r.unsettled)
    if new <= r.link.credit:
        return r, None
    sent = new if pol.encoding == "absolute" else new - max(0, r.link.credit)
    r = r._replace(link=r.link._replace(credit=new), since_grant=0, drained=False)
    return r, LinkFlow(r.link.delivery_count, sent, r.link.drain)


def _ids(r: Receiver) -> tuple[int, ...]:
    return tuple(tid for tid, _, _ in r.unsettled)


def receiver_on_frame(
    cfg: ReceiverConfig, r: Receiver, frame: Transfer | Flow
) -> tuple[Receiver, tuple[Flow, ...]]:
    """The receiver takes the next frame: a transfer (AMQ-SESSION-RECV,
    AMQ-LINK-TRANSFER, then its policies) or a sender's FLOW (AMQ-LINK-FLOW,
    AMQ-LINK-DRAIN: a drain answer ends the drain; the application resumes in a step of
    its own, :func:`receiver_resume`)."""
    if isinstance(frame, Flow):
        if frame.link is None:
            return r, ()
        was_draining = r.link.drain
        r = r._replace(link=link.receiver_on_flow(r.link, frame.link))
        if was_draining and not r.link.drain:
            r = r._replace(drained=True)
        return r, ()
    held = r.arrivals < cfg.holds
    entry = (r.session.next_incoming_id, frame.seq, held)
    r = r._replace(
        link=link.transferred(r.link),
        unsettled=(*r.unsettled, entry),
        arrivals=r.arrivals + 1,
        since_grant=r.since_grant + (0 if counts_settlements(cfg) else 1),
    )
    if r.link.drain and r.link.credit <= 0:
        # the transfers used up the credit: the drain is over (AMQ-LINK-DRAIN)
        r = r._replace(link=r.link._replace(drain=False), drained=True)
    ses, window_flow = session.received(cfg.window, r.session, _ids(r), len(r.unsettled))
    r = r._replace(session=ses)
    r, lf = _renew(cfg, r, "arrival")
    return r, renewal_flows(r, lf, window_flow)


def receiver_may_settle(r: Receiver) -> bool:
    """The application settles the oldest delivery it does not hold (AMQ-APP)."""
    return any(not held for _, _, held in r.unsettled)


def receiver_settle(cfg: ReceiverConfig, r: Receiver) -> tuple[Receiver, int, tuple[Flow, ...]]:
    """Settle the oldest delivery not held (AMQ-APP), then the window and credit
    policies (AMQ-POL-WINDOW-RING, AMQ-POL-WINDOW-CAPACITY, AMQ-POL-CREDIT-WINDOW
    ``renew_on = settle``: the settlement counts toward ``since_grant``,
    AMQ-READING-SETTLE-COUNT). Returns the receiver, the message settled and FLOWs."""
    i = next(i for i, (_, _, held) in enumerate(r.unsettled) if not held)
    seq = r.unsettled[i][1]
    r = r._replace(
        unsettled=r.unsettled[:i] + r.unsettled[i + 1 :],
        settled=r.settled + 1,
        since_grant=r.since_grant + (1 if counts_settlements(cfg) else 0),
    )
    ses, window_flow = session.settled(cfg.window, r.session, _ids(r), len(r.unsettled))
    r = r._replace(session=ses)
    r, lf = _renew(cfg, r, "settle")
    return r, seq, renewal_flows(r, lf, window_flow)


def receiver_may_grant(cfg: ReceiverConfig, r: Receiver) -> bool:
    """A hand grant is left in the script (AMQ-POL-CREDIT-MANUAL)."""
    return r.grants_used < len(cfg.grants)


def receiver_grant(cfg: ReceiverConfig, r: Receiver) -> tuple[Receiver, Flow]:
    """The next hand grant, absolute; it resets the ``since_grant`` count
    (AMQ-POL-CREDIT-MANUAL)."""
    n = cfg.grants[r.grants_used]
    drain = grant_drain_flag(cfg.grant_drain, r)
    r = r._replace(
        link=r.link._replace(credit=n, drain=drain),
        since_grant=0,
        grants_used=r.grants_used + 1,
        drained=False,
    )
    return r, _flow(r, LinkFlow(r.link.delivery_count, n, drain))


def grant_drain_flag(choice: GrantDrain, r: Receiver) -> bool:
    """AMQ-POL-GRANT-DRAIN: the drain flag of a hand grant's FLOW, the receiver's current
    choice (§2.7.4): ``keep`` the drain asked so far, ``clear`` cancel it (proton's
    ``Receiver.flow(n)``), ``sticky`` ask again once any drain was asked (rhea's
    ``drain`` property, never cleared)."""
    if choice == "clear":
        return False
    if choice == "sticky":
        return r.link.drain or r.drains_used > 0
    return r.link.drain


def receiver_may_drain(cfg: ReceiverConfig, r: Receiver) -> bool:
    """The application may start a drain (AMQ-LINK-DRAIN) only while it has credit
    (AMQ-READING-DRAIN-CREDIT: a drain at credit 0 asks nothing of the sender)."""
    return r.drains_used < cfg.drains and not r.link.drain and r.link.credit > 0


def receiver_drain(r: Receiver) -> tuple[Receiver, Flow]:
    """Start a drain: a FLOW with ``drain = true`` (AMQ-LINK-DRAIN)."""
    r = r._replace(link=r.link._replace(drain=True), drains_used=r.drains_used + 1)
    return r, _flow(r, LinkFlow(r.link.delivery_count, r.link.credit, True))


def receiver_may_resume(cfg: ReceiverConfig, r: Receiver) -> bool:
    """After a drain the application resumes its window policy (AMQ-LINK-DRAIN,
    AMQ-POL-CREDIT-WINDOW)."""
    return r.drained and isinstance(cfg.credit, CreditWindow)


def receiver_resume(cfg: ReceiverConfig, r: Receiver) -> tuple[Receiver, tuple[Flow, ...]]:
    """The application resumes after a drain: the window policy's renewal point, the
    only one between the end of a drain and this step (AMQ-READING-DRAIN-RESUME)."""
    r, lf = _renew(cfg, r._replace(drained=False), "resume")
    return r, ((_flow(r, lf),) if lf is not None else ())
