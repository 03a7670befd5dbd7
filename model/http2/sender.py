"""The sending end's rules (H2-SEND, H2-NO-EXCESS, H2-DEBIT, H2-EMPTY-END, H2-NEGATIVE,
H2-WINDOW-UPDATE, H2-ZERO-INCREMENT, H2-WINDOW-MAX), one function per rule. A rule that
does not apply returns ``None``; it never changes its arguments."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.http2.constants import FLOW_CONTROL_ERROR, MAX_WINDOW_SIZE, PROTOCOL_ERROR
from creditflow.model.http2.state import (
    CONNECTION,
    Data,
    End,
    Half,
    RstStream,
    SendHalf,
    WindowUpdate,
)
from creditflow.model.http2.topology import EndConfig


class Outcome(NamedTuple):
    """What a rule did to one end: the end after it, the frames it puts on its wire, the
    error it raised (``""``: none) and whether that error ends the connection."""

    end: End
    out: tuple[RstStream | WindowUpdate | Data, ...] = ()
    error: str = ""
    fatal: bool = False


def half(end: End, i: int) -> SendHalf:
    h = end.streams[i]
    assert isinstance(h, SendHalf)
    return h


def room(end: End, i: int) -> int:
    """H2-TWO-LEVELS: the space in both of stream ``i``'s windows."""
    return min(half(end, i).window, end.send_conn)


def frame_octets(cfg: EndConfig, peer: EndConfig) -> int:
    """H2-FRAME-SIZE: the sender's frame policy, capped at the peer's SETTINGS_MAX_FRAME_SIZE."""
    return min(cfg.frame_octets, peer.max_frame_size)


def next_frame(cfg: EndConfig, peer: EndConfig, end: End, i: int) -> Data | None:
    """H2-SEND: the next DATA frame on stream ``i``, or ``None`` when the sender may send
    none (H2-NO-EXCESS, H2-NEGATIVE; the empty END_STREAM frame, H2-EMPTY-END)."""
    h = half(end, i)
    if h.state != "open":
        return None
    if h.left == 0:
        if cfg.empty_end == "needs-window" and room(end, i) < 0:
            return None  # H2-EMPTY-END broken on purpose: h2 before #1314
        return Data(i, 0, 0, True)
    size = frame_octets(cfg, peer)
    available = room(end, i)
    if available < 0 and cfg.negative_window == "send":
        # H2-NEGATIVE broken on purpose: the window is "not 0", so the sender sends
        data = min(size - cfg.padding, h.left)
        return Data(i, data, cfg.padding, False) if data > 0 else None
    data = min(size - cfg.padding, available - cfg.padding, h.left)
    if data < 1:
        return None
    return Data(i, data, cfg.padding, False)


def send_data(end: End, frame: Data) -> End:
    """H2-DEBIT: the frame's length leaves both windows; its data leaves the body; the
    END_STREAM frame closes the stream (H2-STREAM-STATES)."""
    h = half(end, frame.stream)
    new = SendHalf("closed" if frame.end else h.state, h.window - frame.length, h.left - frame.data)
    streams = end.streams[: frame.stream] + (new,) + end.streams[frame.stream + 1 :]
    return end._replace(send_conn=end.send_conn - frame.length, streams=streams)


def on_window_update(end: End, frame: WindowUpdate, names: tuple[int, ...]) -> Outcome:
    """H2-WINDOW-UPDATE, H2-ZERO-INCREMENT, H2-WINDOW-MAX: a WINDOW_UPDATE arrives at the
    sender. ``names`` are the streams' ids, for the error text."""
    inc = frame.increment
    if frame.stream == CONNECTION:
        if inc == 0:
            return Outcome(end, (), f"{PROTOCOL_ERROR}: WINDOW_UPDATE of 0 on stream 0", True)
        if end.send_conn + inc > MAX_WINDOW_SIZE:
            return Outcome(
                end,
                (),
                f"{FLOW_CONTROL_ERROR}: connection window {end.send_conn} + {inc} "
                f"exceeds 2^31-1 (GOAWAY)",
                True,
            )
        return Outcome(end._replace(send_conn=end.send_conn + inc))
    h = half(end, frame.stream)
    sid = names[frame.stream]
    if h.state in ("reset", "idle"):
        return Outcome(end)  # H2-WINDOW-UPDATE: ignored on a reset stream
    if inc == 0:
        return reset_half(
            end, frame.stream, f"{PROTOCOL_ERROR}: WINDOW_UPDATE of 0 on stream {sid}"
        )
    if h.window + inc > MAX_WINDOW_SIZE:
        return reset_half(
            end,
            frame.stream,
            f"{FLOW_CONTROL_ERROR}: stream {sid} window {h.window} + {inc} exceeds 2^31-1 "
            f"(RST_STREAM)",
        )
    new = h._replace(window=h.window + inc)
    return Outcome(end._replace(streams=replace(end.streams, frame.stream, new)))


def reset_half(end: End, i: int, error: str = "") -> Outcome:
    """H2-RESET, H2-ERRORS: the sender resets stream ``i`` (by choice, or for a stream
    error) and sends RST_STREAM."""
    h = half(end, i)
    new = h._replace(state="reset")
    return Outcome(end._replace(streams=replace(end.streams, i, new)), (RstStream(i),), error)


def on_reset(end: End, i: int) -> End:
    """H2-RESET: RST_STREAM arrives at the sender: it sends nothing more on the stream."""
    return end._replace(streams=replace(end.streams, i, half(end, i)._replace(state="reset")))


def replace(streams: tuple[Half, ...], i: int, new: Half) -> tuple[Half, ...]:
    """``streams`` with item ``i`` replaced."""
    return streams[:i] + (new,) + streams[i + 1 :]
