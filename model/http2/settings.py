"""SETTINGS_INITIAL_WINDOW_SIZE and its acknowledgement (H2-SETTINGS,
H2-SETTINGS-APPLY, H2-SETTINGS-ACK, H2-NEGATIVE, H2-WINDOW-MAX), and HEADERS opening a
stream with the value each end has applied (H2-OPEN)."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.http2.constants import FLOW_CONTROL_ERROR, MAX_WINDOW_SIZE
from creditflow.model.http2.state import End, Half, RecvHalf, SendHalf, Settings, SettingsAck
from creditflow.model.http2.topology import EndConfig


class Outcome(NamedTuple):
    end: End
    out: tuple[Settings | SettingsAck, ...] = ()
    error: str = ""
    fatal: bool = False


def may_send_settings(cfg: EndConfig, end: End) -> bool:
    """H2-SETTINGS: the end has a change left to send."""
    return end.changes_sent < len(cfg.settings_changes)


def send_settings(cfg: EndConfig, end: End) -> Outcome:
    """H2-SETTINGS: the next change goes on the wire and waits for its ACK."""
    value = cfg.settings_changes[end.changes_sent]
    end = end._replace(changes_sent=end.changes_sent + 1, unacked=(*end.unacked, value))
    return Outcome(end, (Settings(value),))


def live(h: Half) -> bool:
    """H2-SETTINGS-APPLY: a stream window the end maintains (open or closed, not reset)."""
    return h.state in ("open", "closed")


def on_settings(end: End, frame: Settings) -> Outcome:
    """H2-SETTINGS-APPLY, H2-NEGATIVE, H2-WINDOW-MAX: the peer's new initial window size
    moves every stream window this end sends on by the difference (negative allowed);
    SETTINGS ACK answers."""
    value = frame.initial_window_size
    if value > MAX_WINDOW_SIZE:
        return Outcome(
            end, (), f"{FLOW_CONTROL_ERROR}: SETTINGS_INITIAL_WINDOW_SIZE {value} (GOAWAY)", True
        )
    delta = value - end.send_initial
    streams: list[Half] = []
    for h in end.streams:
        if isinstance(h, SendHalf) and live(h):
            if h.window + delta > MAX_WINDOW_SIZE:
                return Outcome(
                    end,
                    (),
                    f"{FLOW_CONTROL_ERROR}: SETTINGS_INITIAL_WINDOW_SIZE {value} pushes a stream "
                    f"window to {h.window + delta} (GOAWAY)",
                    True,
                )
            h = h._replace(window=h.window + delta)
        streams.append(h)
    return Outcome(end._replace(send_initial=value, streams=tuple(streams)), (SettingsAck(),))


def on_ack(end: End) -> Outcome:
    """H2-SETTINGS-ACK: the oldest unacknowledged value now applies to this end's receive
    windows, moved by the same difference as the peer moved its send windows."""
    value, rest = end.unacked[0], end.unacked[1:]
    delta = value - end.recv_initial
    streams = tuple(
        h._replace(window=h.window + delta) if isinstance(h, RecvHalf) and live(h) else h
        for h in end.streams
    )
    return Outcome(end._replace(recv_initial=value, unacked=rest, streams=streams))


def open_half(end: End, i: int, sending: bool, left: int) -> End:
    """H2-OPEN: this end's half of stream ``i`` opens with the initial window it has
    applied: the peer's value as a sender, its own acknowledged value as a receiver."""
    h: Half = (
        SendHalf("open", end.send_initial, left)
        if sending
        else RecvHalf("open", end.recv_initial, 0, 0)
    )
    return end._replace(streams=end.streams[:i] + (h,) + end.streams[i + 1 :])
