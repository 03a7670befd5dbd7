"""RabbitMQ 4's outbound relay between a client's receiving link and a queue
(AMQ-RMQ-RELAY; ``rabbit_amqp_session``: ``handle_outgoing_link_flow_control/3``,
``sent_pending_delivery/3``, ``handle_credit_reply0/4``, ``pop_credit_req/4``)."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.amqp.frames import CreditReply, CreditRequest
from creditflow.model.amqp.link import LinkFlow, link_credit_snd
from creditflow.model.amqp.policies import RelayPolicy
from creditflow.model.amqp.serial import add, compare


class Relay(NamedTuple):
    """The two link states the session holds for one outgoing link (AMQ-RMQ-RELAY).
    ``forced`` is a history flag: a delivery went to the client at client credit 0."""

    client_dc: int
    client_credit: int
    client_echo: bool
    queue_dc: int
    queue_credit: int
    queue_drain: bool
    in_flight: bool
    stashed: LinkFlow | None
    forced: bool = False


def initial_relay(initial: int) -> Relay:
    """After ATTACH: both counts at the initial delivery-count, no credit (AMQ-BEGIN-ATTACH)."""
    return Relay(initial, 0, False, initial, 0, False, False, None)


def _request(r: Relay, flow: LinkFlow, policy: RelayPolicy) -> tuple[Relay, CreditRequest]:
    credit = link_credit_snd(flow.delivery_count, flow.credit, r.client_dc)
    capped = min(credit, policy.max_queue_credit)
    relay = r._replace(
        client_credit=credit,
        client_echo=flow.echo,
        queue_credit=capped,
        queue_drain=flow.drain,
        in_flight=True,
        stashed=None,
    )
    return relay, CreditRequest(r.queue_dc, capped, flow.drain)


def on_client_flow(
    r: Relay, flow: LinkFlow, policy: RelayPolicy
) -> tuple[Relay, tuple[CreditRequest, ...]]:
    """A client FLOW: a credit request, or stashed while one is in flight (AMQ-RMQ-RELAY)."""
    if r.in_flight:
        return r._replace(stashed=flow), ()
    relay, req = _request(r, flow, policy)
    return relay, (req,)


def on_delivery_sent(r: Relay, policy: RelayPolicy) -> tuple[Relay, tuple[CreditRequest, ...]]:
    """A delivery left for the client: both counts advance; the queue is topped up when
    its credit ran out and the client still has some (AMQ-RMQ-RELAY)."""
    client_credit = max(0, r.client_credit - 1)
    queue_dc = add(r.queue_dc, 1)
    queue_credit = max(0, r.queue_credit - 1)
    relay = r._replace(
        client_dc=add(r.client_dc, 1),
        client_credit=client_credit,
        queue_dc=queue_dc,
        queue_credit=queue_credit,
        forced=r.forced or r.client_credit <= 0,
    )
    if queue_credit == 0 and client_credit > 0 and not r.in_flight:
        capped = min(client_credit, policy.max_queue_credit)
        relay = relay._replace(queue_credit=capped, in_flight=True)
        return relay, (CreditRequest(queue_dc, capped, r.queue_drain),)
    return relay, ()


def on_credit_reply(
    r: Relay, reply: CreditReply, policy: RelayPolicy
) -> tuple[Relay, tuple[CreditRequest, ...], tuple[LinkFlow, ...]]:
    """The queue's credit reply (AMQ-RMQ-RELAY): returns the relay, credit requests to
    the queue and FLOWs to the client."""
    if not reply.drain:
        r1 = r._replace(queue_dc=reply.delivery_count)
        if r1.stashed is not None:
            relay, req = _request(r1, r1.stashed, policy)
            return relay, (req,), ()
        if reply.credit == 0 and r1.client_credit > 0:
            capped = min(r1.client_credit, policy.max_queue_credit)
            req = CreditRequest(reply.delivery_count, capped, False)
            return r1._replace(queue_credit=capped, in_flight=True), (req,), ()
        flows: tuple[LinkFlow, ...] = ()
        if r1.client_echo:
            flows = (LinkFlow(r1.client_dc, r1.client_credit, False, False, reply.available),)
        return r1._replace(in_flight=False), (), flows
    # drain = true: the queue consumed all the credit it was given
    if reply.delivery_count == r.queue_dc and r.client_credit > 0:
        capped = min(r.client_credit, policy.max_queue_credit)
        relay = r._replace(queue_credit=capped, in_flight=True)
        return relay, (CreditRequest(reply.delivery_count, capped, True),), ()
    if compare(reply.delivery_count, r.queue_dc) == "less":
        raise ValueError(f"unexpected delivery count {reply.delivery_count} < {r.queue_dc}")
    client_dc = add(r.client_dc, max(0, r.client_credit))
    relay = r._replace(
        client_dc=client_dc,
        client_credit=0,
        queue_dc=reply.delivery_count,
        queue_credit=0,
        queue_drain=False,
        in_flight=False,
    )
    flow = LinkFlow(client_dc, 0, True, False, reply.available)
    if relay.stashed is not None:
        relay, req = _request(relay, relay.stashed, policy)
        return relay, (req,), (flow,)
    return relay, (), (flow,)
