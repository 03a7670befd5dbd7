"""The properties (PROP-H2-*): state predicates over a :class:`State` and step predicates
over ``(state, action, step)``. Each is computed from the state and the frame involved,
not by calling the rule it checks, so a broken rule shows up as a violation.
PROP-H2-NO-STALL is the explorer's PROP-NO-DEADLOCK over
:meth:`Http2Model.blocked_mask` and :meth:`Http2Model.pending_work`."""

from __future__ import annotations

from creditflow.model.http2 import sender
from creditflow.model.http2.constants import FLOW_CONTROL_ERROR, MAX_WINDOW_SIZE
from creditflow.model.http2.settings import live
from creditflow.model.http2.state import (
    CONNECTION,
    RecvHalf,
    SendHalf,
    Settings,
    SettingsAck,
    State,
    WindowUpdate,
)
from creditflow.model.http2.system import Http2Model, Step

WITHIN_WINDOW = "PROP-H2-WITHIN-WINDOW"
CONSERVATION = "PROP-H2-CONSERVATION"
NO_STALL = "PROP-H2-NO-STALL"
BOUNDS = "PROP-H2-BOUNDS"
NEGATIVE_TRACKED = "PROP-H2-NEGATIVE-TRACKED"
EMPTY_END = "PROP-H2-EMPTY-END"
NO_ERROR = "PROP-H2-NO-ERROR"

#: every property, in the spec's order (PROP-H2-NO-STALL is decided by the explorer)
PROPERTY_IDS = (
    WITHIN_WINDOW,
    CONSERVATION,
    NO_STALL,
    BOUNDS,
    NEGATIVE_TRACKED,
    EMPTY_END,
    NO_ERROR,
)
#: the state properties :func:`violations` reports
STATE_PROPERTY_IDS = (CONSERVATION, BOUNDS, EMPTY_END, NO_ERROR)
#: the step properties :func:`step_violations` reports
STEP_PROPERTY_IDS = (WITHIN_WINDOW, BOUNDS, NEGATIVE_TRACKED)


def conserved(model: Http2Model, s: State) -> bool:
    """PROP-H2-CONSERVATION: at rest, both ends agree on the connection window of each
    direction and on every stream window both keep."""
    if s.wires[0] or s.wires[1]:
        return True
    for e in (0, 1):
        if s.ends[e].send_conn != s.ends[1 - e].recv_conn:
            return False
    for i, st in enumerate(model.topology.streams):
        a, b = s.ends[st.sender].streams[i], s.ends[st.receiver].streams[i]
        if live(a) and live(b) and a.window != b.window:
            return False
    return True


def bounded(s: State) -> bool:
    """PROP-H2-BOUNDS (state part): no window at either end above 2^31 − 1."""
    for end in s.ends:
        if end.send_conn > MAX_WINDOW_SIZE or end.recv_conn > MAX_WINDOW_SIZE:
            return False
        if any(h.window > MAX_WINDOW_SIZE for h in end.streams):
            return False
    return True


def end_refused(model: Http2Model, s: State) -> bool:
    """PROP-H2-EMPTY-END: a receiver refused an empty END_STREAM frame, or a sender holds
    one it may not send."""
    if s.refused_end:
        return True
    if s.dead:
        return False
    t = model.topology
    for i, st in enumerate(t.streams):
        h = s.ends[st.sender].streams[i]
        if isinstance(h, SendHalf) and h.state == "open" and h.left == 0:
            frame = sender.next_frame(t.end(st.sender), t.end(st.receiver), s.ends[st.sender], i)
            if frame is None:
                return True
    return False


def violations(model: Http2Model, s: State) -> tuple[str, ...]:
    """The state properties ``s`` violates."""
    out = []
    if not conserved(model, s):
        out.append(CONSERVATION)
    if not bounded(s):
        out.append(BOUNDS)
    if end_refused(model, s):
        out.append(EMPTY_END)
    if s.error:
        out.append(NO_ERROR)
    return tuple(out)


def within_window(model: Http2Model, s: State, a: int, step: Step) -> bool:
    """PROP-H2-WITHIN-WINDOW: a DATA frame of length above 0 fits both windows it was
    sent under."""
    frame = step.sent
    if frame is None or frame.length == 0:
        return True
    end = s.ends[model.actions[a].end]
    h = end.streams[frame.stream]
    return frame.length <= h.window and frame.length <= end.send_conn


def excess_answered(model: Http2Model, s: State, a: int, step: Step) -> bool:
    """PROP-H2-BOUNDS (step part): a WINDOW_UPDATE or SETTINGS that would push a window
    above 2^31 − 1 leaves it unchanged and raises FLOW_CONTROL_ERROR (H2-WINDOW-MAX)."""
    act = model.actions[a]
    if act.name != "receive" or s.error:
        return True
    frame = s.wires[act.end][0]
    r = 1 - act.end
    before, after = s.ends[r], step.state.ends[r]
    raised = step.state.error.startswith(FLOW_CONTROL_ERROR)
    if isinstance(frame, WindowUpdate) and frame.increment > 0:
        if frame.stream == CONNECTION:
            if before.send_conn + frame.increment > MAX_WINDOW_SIZE:
                return raised and step.state.dead and after.send_conn == before.send_conn
            return True
        h = before.streams[frame.stream]
        if (
            isinstance(h, SendHalf)
            and h.state in ("open", "closed")
            and h.window + frame.increment > MAX_WINDOW_SIZE
        ):
            return raised and after.streams[frame.stream].window == h.window
        return True
    if isinstance(frame, Settings):
        delta = frame.initial_window_size - before.send_initial
        over = frame.initial_window_size > MAX_WINDOW_SIZE or any(
            isinstance(h, SendHalf) and live(h) and h.window + delta > MAX_WINDOW_SIZE
            for h in before.streams
        )
        if over:
            return raised and step.state.dead and after.streams == before.streams
    return True


def tracked(model: Http2Model, s: State, a: int, step: Step) -> bool:
    """PROP-H2-NEGATIVE-TRACKED: a SETTINGS change (at the peer) and its ACK (at the end
    that sent it) move every live stream window by exactly the difference."""
    act = model.actions[a]
    if act.name != "receive" or step.state.dead:
        return True
    frame = s.wires[act.end][0]
    r = 1 - act.end
    before, after = s.ends[r], step.state.ends[r]
    kind: type[SendHalf] | type[RecvHalf]
    if isinstance(frame, Settings):
        delta, kind = frame.initial_window_size - before.send_initial, SendHalf
    elif isinstance(frame, SettingsAck):
        delta, kind = before.unacked[0] - before.recv_initial, RecvHalf
    else:
        return True
    return all(
        h2.window == h1.window + delta
        for h1, h2 in zip(before.streams, after.streams, strict=True)
        if isinstance(h1, kind) and live(h1)
    )


def step_violations(model: Http2Model, s: State, a: int, step: Step) -> tuple[str, ...]:
    """The step properties the step from ``s`` by ``a`` violates."""
    out = []
    if not within_window(model, s, a, step):
        out.append(WITHIN_WINDOW)
    if not excess_answered(model, s, a, step):
        out.append(BOUNDS)
    if not tracked(model, s, a, step):
        out.append(NEGATIVE_TRACKED)
    return tuple(out)
