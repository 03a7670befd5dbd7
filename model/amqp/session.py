"""Session endpoints and their window policies (AMQ-SESSION-*, AMQ-POL-WINDOW-*,
AMQ-RMQ-SESSION-WINDOW): §2.5.6 session flow control.

    >>> s = initial_session(WindowFixed(4, 2), initial=0, remote_incoming_window=4)
    >>> s, flow = received(WindowFixed(4, 2), s, unsettled_ids=(0,), buffered=1)
    >>> s.incoming_window, flow
    (3, False)
"""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.amqp.policies import (
    RabbitSessionWindow,
    WindowCapacity,
    WindowFixed,
    WindowNever,
    WindowPolicy,
    WindowRing,
)
from creditflow.model.amqp.serial import add, diff


class SessionEnd(NamedTuple):
    """One end of a session (AMQ-SESSION-STATE). ``outgoing_window`` is informational
    and not kept (RabbitMQ sends 2^32 − 1)."""

    next_incoming_id: int
    incoming_window: int
    next_outgoing_id: int
    remote_incoming_window: int


class SessionFlow(NamedTuple):
    """The session fields of a FLOW (§2.7.4)."""

    next_incoming_id: int
    incoming_window: int


def initial_window(policy: WindowPolicy) -> int:
    """The window advertised at BEGIN (AMQ-BEGIN-ATTACH)."""
    if isinstance(policy, WindowFixed | WindowNever):
        return policy.window
    if isinstance(policy, WindowRing):
        return policy.slots
    if isinstance(policy, WindowCapacity):
        return policy.capacity // policy.frame
    return policy.max_incoming_window


def initial_session(policy: WindowPolicy, initial: int, remote_incoming_window: int) -> SessionEnd:
    """A session endpoint after BEGIN (AMQ-BEGIN-ATTACH): the peer's initial incoming
    window is our remote incoming window."""
    return SessionEnd(initial, initial_window(policy), initial, remote_incoming_window)


def can_send(s: SessionEnd) -> bool:
    """A transfer may leave only while the remote incoming window is positive
    (AMQ-SESSION-SEND)."""
    return s.remote_incoming_window > 0


def sent(s: SessionEnd) -> SessionEnd:
    """After sending one transfer (AMQ-SESSION-SEND)."""
    return s._replace(
        next_outgoing_id=add(s.next_outgoing_id, 1),
        remote_incoming_window=s.remote_incoming_window - 1,
    )


def on_flow(s: SessionEnd, flow: SessionFlow) -> SessionEnd:
    """The session fields of a received FLOW (AMQ-SESSION-FLOW)."""
    window = diff(add(flow.next_incoming_id, flow.incoming_window), s.next_outgoing_id)
    return s._replace(remote_incoming_window=max(0, window))


def flow_fields(s: SessionEnd) -> SessionFlow:
    """What this end advertises in a FLOW; a negative window is sent as 0 (§2.7.4 uint)."""
    return SessionFlow(s.next_incoming_id, max(0, s.incoming_window))


def _ring_window(policy: WindowRing, s: SessionEnd, unsettled_ids: tuple[int, ...]) -> int:
    if not unsettled_ids:
        return policy.slots
    return policy.slots - diff(s.next_incoming_id, unsettled_ids[0])


def received(
    policy: WindowPolicy, s: SessionEnd, unsettled_ids: tuple[int, ...], buffered: int
) -> tuple[SessionEnd, bool]:
    """A transfer arrived (AMQ-SESSION-RECV), then the policy: returns the new end and
    whether a FLOW renewing the window is sent. ``unsettled_ids`` are the transfer ids
    still unsettled after the arrival, oldest first; ``buffered`` counts them."""
    s = s._replace(
        next_incoming_id=add(s.next_incoming_id, 1), incoming_window=s.incoming_window - 1
    )
    if isinstance(policy, WindowFixed):
        # AMQ-POL-WINDOW-FIXED
        if s.incoming_window <= policy.threshold:
            return s._replace(incoming_window=policy.window), True
        return s, False
    if isinstance(policy, RabbitSessionWindow):
        # AMQ-RMQ-SESSION-WINDOW: session_flow_control_received_transfer/1 (no alarm)
        if s.incoming_window <= policy.max_incoming_window // 2:
            return s._replace(incoming_window=policy.max_incoming_window), True
        return s, False
    if isinstance(policy, WindowNever):
        return s, False  # AMQ-POL-WINDOW-NEVER
    if isinstance(policy, WindowRing):
        return s._replace(incoming_window=_ring_window(policy, s, unsettled_ids)), False
    # AMQ-POL-WINDOW-CAPACITY
    return s._replace(
        incoming_window=(policy.capacity - policy.frame * buffered) // policy.frame
    ), False


def settled(
    policy: WindowPolicy, s: SessionEnd, unsettled_ids: tuple[int, ...], buffered: int
) -> tuple[SessionEnd, bool]:
    """The application settled (read) a delivery: the ring and capacity policies free
    space and send a FLOW when the window grew (AMQ-POL-WINDOW-RING,
    AMQ-POL-WINDOW-CAPACITY); the others do not change."""
    if isinstance(policy, WindowRing):
        window = _ring_window(policy, s, unsettled_ids)
    elif isinstance(policy, WindowCapacity):
        window = (policy.capacity - policy.frame * buffered) // policy.frame
    else:
        return s, False
    return s._replace(incoming_window=window), window > s.incoming_window
