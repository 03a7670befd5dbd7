"""Link endpoints and their rules (AMQ-LINK-*): §2.6.7 link flow control, §2.7.4 FLOW.

>>> snd = LinkEnd(delivery_count=2**32 - 1, credit=0)
>>> snd = sender_on_flow(snd, LinkFlow(delivery_count=2**32 - 1, credit=3))
>>> snd.credit
3
>>> transferred(snd)
LinkEnd(delivery_count=0, credit=2, drain=False, echo=False)
"""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.amqp.policies import SenderCredit
from creditflow.model.amqp.serial import add, diff


class LinkEnd(NamedTuple):
    """One end of a link (AMQ-LINK-STATE). The sender's ``available`` is its supply,
    kept by the system; ``credit`` on the receiver may go below 0 only if the sender
    overran it (PROP-AMQ-NONNEG)."""

    delivery_count: int
    credit: int
    drain: bool = False
    echo: bool = False


class LinkFlow(NamedTuple):
    """The link fields of a FLOW (§2.7.4): absolute values (AMQ-LINK-FLOW)."""

    delivery_count: int
    credit: int
    drain: bool = False
    echo: bool = False
    available: int = 0


def link_credit_snd(dc_rcv: int, credit_rcv: int, dc_snd: int) -> int:
    """``max(0, (dc_rcv + credit_rcv) − dc_snd)`` in serial arithmetic
    (AMQ-LINK-CREDIT-SND; ``amqp10_util:link_credit_snd/3``)."""
    return max(0, diff(add(dc_rcv, credit_rcv), dc_snd))


SERIAL = SenderCredit()
"""The sender of §2.6.7 (AMQ-POL-SENDER-CREDIT ``serial``)."""


def sender_on_flow(end: LinkEnd, flow: LinkFlow, policy: SenderCredit = SERIAL) -> LinkEnd:
    """The sender takes a receiver's FLOW (AMQ-LINK-CREDIT-SND, AMQ-POL-SENDER-CREDIT)."""
    if policy.formula == "serial":
        credit = link_credit_snd(flow.delivery_count, flow.credit, end.delivery_count)
    else:
        credit = flow.credit
    return end._replace(credit=credit, drain=flow.drain, echo=flow.echo)


def transferred(end: LinkEnd) -> LinkEnd:
    """One transfer on either end: delivery-count + 1, credit − 1 (AMQ-LINK-TRANSFER).
    The caller checks the sender's credit first; the receiver's may go negative."""
    return end._replace(delivery_count=add(end.delivery_count, 1), credit=end.credit - 1)


def drain_done(end: LinkEnd) -> tuple[LinkEnd, LinkFlow]:
    """A draining sender with nothing to send consumes its credit and answers, also at
    credit 0 (AMQ-LINK-DRAIN)."""
    dc = add(end.delivery_count, max(0, end.credit))
    done = end._replace(delivery_count=dc, credit=0, drain=False)
    return done, LinkFlow(dc, 0, drain=True)


def echo_flow(end: LinkEnd, available: int) -> LinkFlow:
    """The sender's answer to ``echo`` (AMQ-LINK-FLOW)."""
    return LinkFlow(end.delivery_count, end.credit, end.drain, False, available)


def receiver_on_flow(end: LinkEnd, flow: LinkFlow) -> LinkEnd:
    """The receiver takes a sender's FLOW (a drain or echo answer): its delivery-count
    becomes the sender's and its credit what is left of its limit
    ``dc_rcv + credit_rcv`` (AMQ-LINK-FLOW); a drain answer that leaves no credit ends
    the drain — a grant the receiver sent meanwhile (still with drain set) is drained in
    another round (AMQ-LINK-DRAIN)."""
    credit = max(0, diff(add(end.delivery_count, max(0, end.credit)), flow.delivery_count))
    drain = False if flow.drain and credit == 0 else end.drain
    return end._replace(delivery_count=flow.delivery_count, credit=credit, drain=drain)
