"""What the adapters with a python-qpid-proton end share (AD-AMQ-PROTON, AD-AMQ-10): a
traced connection, the applications at that end (AD-AMQ-ENDS), settling what the
receiving application read (AD-AMQ-OPS ``settle``) and what proton's API shows of a link
end (AD-AMQ-STATE).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proton import Collector, Connection, Delivery, Endpoint, Event, Transport

from creditflow.adapters.amqp.serving import settled_slice


def traced_connection(
    mode: int, max_frame_size: int, tracer: Callable[[Transport, str], None]
) -> tuple[Connection, Transport, Collector]:
    """A connection bound to a transport in ``mode`` (``Transport.CLIENT``/``SERVER``)
    whose frames go to ``tracer`` (AD-AMQ-FRAMES), with a collector of its events;
    ``max_frame_size`` 0 keeps proton's default."""
    conn = Connection()
    transport = Transport(mode)
    if max_frame_size:
        transport.max_frame_size = max_frame_size
    transport.trace(Transport.TRACE_FRM)
    transport.tracer = tracer
    collector = Collector()
    conn.collect(collector)
    transport.bind(conn)
    return conn, transport, collector


def react(
    collector: Collector,
    incoming_capacity: int,
    link_opened: Callable[[Any], None],
    delivery_read: Callable[[Any], None],
    peer_settled: Callable[[Any], bool],
) -> bool:
    """AD-AMQ-ENDS: the applications' reactions to every collected event: they open what
    the other end opened (a session with ``incoming_capacity`` if it is not 0; then
    ``link_opened(link)``) and close what it closed; the receiving application reads
    every complete delivery (``delivery_read(delivery)``, unsettled until ``settle``);
    the sending application settles a delivery for which ``peer_settled`` holds.
    Whether there was an event."""
    acted = False
    while collector.peek():
        # Any: proton types every member Optional; the event type says which is set
        ev: Any = collector.peek()
        t = ev.type
        if t == Event.CONNECTION_REMOTE_OPEN and ev.connection.state & Endpoint.LOCAL_UNINIT:
            ev.connection.open()
        elif t == Event.SESSION_REMOTE_OPEN and ev.session.state & Endpoint.LOCAL_UNINIT:
            if incoming_capacity:
                ev.session.incoming_capacity = incoming_capacity
            ev.session.open()
        elif t == Event.LINK_REMOTE_OPEN and ev.link.state & Endpoint.LOCAL_UNINIT:
            ev.link.source.copy(ev.link.remote_source)
            ev.link.target.copy(ev.link.remote_target)
            ev.link.open()
            link_opened(ev.link)
        elif t == Event.LINK_REMOTE_CLOSE and not ev.link.state & Endpoint.LOCAL_CLOSED:
            ev.link.close()
        elif t == Event.SESSION_REMOTE_CLOSE and not ev.session.state & Endpoint.LOCAL_CLOSED:
            ev.session.close()
        elif t == Event.DELIVERY:
            dlv = ev.delivery
            link = dlv.link
            if link.is_receiver and dlv.readable and not dlv.partial and not dlv.settled:
                if link.current == dlv:
                    link.recv(dlv.pending)
                    link.advance()
                    delivery_read(dlv)
            elif link.is_sender and peer_settled(dlv):
                dlv.settle()
        collector.pop()
        acted = True
    return acted


def accept_and_settle(name: str, held: list[Delivery], count: int, keep: int) -> None:
    """AD-AMQ-OPS ``settle``: the receiving application accepts and settles ``count`` of
    link ``name``'s unsettled deliveries after its ``keep`` oldest (``held``, oldest
    first; they leave it)."""
    for dlv in settled_slice(name, held, count, keep):
        dlv.update(Delivery.ACCEPTED)
        dlv.settle()
    del held[keep : keep + count]


def sender_state(snd: Any) -> dict[str, Any]:
    """AD-AMQ-STATE: what proton's API shows of a sending link end."""
    return {
        "credit": snd.credit,
        "queued": snd.queued,
        "unsettled": snd.unsettled,
        "drain": snd.drain_mode,
    }


def receiver_state(rcv: Any, unsettled: int) -> dict[str, Any]:
    """AD-AMQ-STATE: what proton's API shows of a receiving link end, with the
    application's ``unsettled`` deliveries."""
    return {
        "credit": rcv.credit,
        "queued": rcv.queued,
        "unsettled": unsettled,
        "drain": rcv.drain_mode,
        "available": rcv.available,
    }
