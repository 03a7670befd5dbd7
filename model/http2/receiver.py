"""The receiving end's rules (H2-RECEIVE, H2-RECV-EXCESS, H2-RESET-COUNTS,
H2-DISCARD-CREDIT, H2-PADDING, H2-CONSUME, H2-POL-CREDIT, H2-CREDIT, H2-EMPTY-END,
H2-FRAME-SIZE, H2-RESET), one function per rule. A rule never changes its arguments."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.http2.constants import FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR
from creditflow.model.http2.state import (
    CONNECTION,
    Data,
    End,
    Frame,
    RecvHalf,
    RstStream,
    WindowUpdate,
)
from creditflow.model.http2.topology import Credit, EndConfig


class Outcome(NamedTuple):
    """What a rule did to the receiving end: the end after it, the frames it sends, the
    error it raised (``""``: none), whether the error ends the connection, and whether it
    refused an empty END_STREAM frame (H2-EMPTY-END)."""

    end: End
    out: tuple[Frame, ...] = ()
    error: str = ""
    fatal: bool = False
    refused_end: bool = False


def half(end: End, i: int) -> RecvHalf:
    h = end.streams[i]
    assert isinstance(h, RecvHalf)
    return h


def with_half(end: End, i: int, new: RecvHalf) -> End:
    return end._replace(streams=end.streams[:i] + (new,) + end.streams[i + 1 :])


def credit(cfg: EndConfig, end: End, i: int) -> tuple[End, tuple[Frame, ...]]:
    """H2-POL-CREDIT, H2-CREDIT: send what is owed on stream ``i`` (``CONNECTION``: the
    connection) once it reaches the policy's threshold; ``manual`` never sends here."""
    policy = cfg.connection_credit if i == CONNECTION else cfg.stream_credit
    owed = end.conn_owed if i == CONNECTION else half(end, i).owed
    if policy.trigger == "manual" or owed < max(policy.threshold, 1):
        return end, ()
    return return_credit(cfg, end, i)


def return_credit(cfg: EndConfig, end: End, i: int) -> tuple[End, tuple[Frame, ...]]:
    """H2-CREDIT: return everything owed on a window (``n > 0``): the receiver's window
    grows by the increment and WINDOW_UPDATE goes on its wire."""
    if i == CONNECTION:
        inc = end.conn_owed + cfg.over_credit
        if end.conn_owed == 0:
            return end, ()
        return end._replace(recv_conn=end.recv_conn + inc, conn_owed=0), (
            WindowUpdate(CONNECTION, inc),
        )
    h = half(end, i)
    if h.owed == 0:
        return end, ()
    inc = h.owed + cfg.over_credit
    return with_half(end, i, h._replace(window=h.window + inc, owed=0)), (WindowUpdate(i, inc),)


def owe(cfg: EndConfig, end: End, i: int, octets: int, event: str) -> End:
    """H2-POL-CREDIT: ``octets`` become owed on stream ``i``'s window and the connection's
    if ``event`` (``receipt``, ``consume``) is the policy's trigger (``manual`` owes on
    ``consume``). ``i`` is ``None``-like ``CONNECTION`` for the connection alone."""

    def due(p: Credit) -> bool:
        return p.trigger == event or (p.trigger == "manual" and event == "consume")

    if octets == 0:
        return end
    if i != CONNECTION and due(cfg.stream_credit):
        h = half(end, i)
        if h.state == "open":  # H2-POL-CREDIT: no stream credit for a closed stream
            end = with_half(end, i, h._replace(owed=h.owed + octets))
    if due(cfg.connection_credit):
        end = end._replace(conn_owed=end.conn_owed + octets)
    return end


def owe_discarded(cfg: EndConfig, end: End, octets: int) -> End:
    """H2-DISCARD-CREDIT: discarded octets are owed on the connection at once, unless
    the policy never returns them (``credit_discarded: false``)."""
    if not cfg.credit_discarded or octets == 0:
        return end
    return end._replace(conn_owed=end.conn_owed + octets)


def flush(cfg: EndConfig, end: End, i: int) -> tuple[End, tuple[Frame, ...]]:
    """H2-CREDIT: the stream's credit, then the connection's, each by its threshold."""
    out: tuple[Frame, ...] = ()
    if i != CONNECTION:
        end, out = credit(cfg, end, i)
    end, conn = credit(cfg, end, CONNECTION)
    return end, out + conn


def on_data(cfg: EndConfig, end: End, frame: Data, sid: int) -> Outcome:
    """H2-RECEIVE: a DATA frame arrives (H2-FRAME-SIZE, H2-RECV-EXCESS, H2-DEBIT,
    H2-RESET-COUNTS, H2-PADDING, H2-EMPTY-END)."""
    n = frame.length
    if n > cfg.max_frame_size:
        return Outcome(
            end, (), f"{FRAME_SIZE_ERROR}: DATA of {n} octets on stream {sid} (GOAWAY)", True
        )
    if n > 0 and n > end.recv_conn:  # H2-EMPTY-END: an empty frame needs no window
        return Outcome(
            end,
            (),
            f"{FLOW_CONTROL_ERROR}: DATA of {n} octets on stream {sid} beyond the connection "
            f"window {end.recv_conn} (GOAWAY)",
            True,
        )
    end = end._replace(recv_conn=end.recv_conn - n)  # H2-DEBIT, H2-RESET-COUNTS
    h = half(end, frame.stream)
    if h.state != "open":
        end = owe_discarded(cfg, end, n)  # H2-RESET-COUNTS, H2-DISCARD-CREDIT
        end, out = flush(cfg, end, CONNECTION)
        return Outcome(end, out)
    if n == 0 and frame.end and not cfg.accept_empty_end and min(h.window, end.recv_conn) <= 0:
        # H2-EMPTY-END broken on purpose: the receiver refuses the empty END_STREAM frame
        end = with_half(end, frame.stream, h._replace(state="reset", buffered=0, owed=0))
        end = owe_discarded(cfg, end, h.buffered)
        end, out = flush(cfg, end, CONNECTION)
        return Outcome(
            end,
            (RstStream(frame.stream), *out),
            f"{FLOW_CONTROL_ERROR}: empty END_STREAM on stream {sid} refused (RST_STREAM)",
            False,
            True,
        )
    if n > 0 and n > h.window:
        end = with_half(end, frame.stream, h._replace(state="reset", buffered=0, owed=0))
        end = owe_discarded(cfg, end, n + h.buffered)
        end, out = flush(cfg, end, CONNECTION)
        return Outcome(
            end,
            (RstStream(frame.stream), *out),
            f"{FLOW_CONTROL_ERROR}: DATA of {n} octets on stream {sid} beyond its window "
            f"{h.window} (RST_STREAM)",
        )
    new = RecvHalf("closed" if frame.end else "open", h.window - n, h.buffered + frame.data, h.owed)
    end = with_half(end, frame.stream, new)
    end = owe(cfg, end, frame.stream, frame.data, "receipt")
    # H2-PADDING: padding is owed back at once, whatever the trigger
    if frame.padding:
        if new.state == "open":
            end = with_half(
                end,
                frame.stream,
                half(end, frame.stream)._replace(owed=half(end, frame.stream).owed + frame.padding),
            )
        end = end._replace(conn_owed=end.conn_owed + frame.padding)
    end, out = flush(cfg, end, frame.stream)
    return Outcome(end, out)


def may_consume(end: End, i: int) -> bool:
    """H2-CONSUME: the application has octets to read on stream ``i``."""
    h = half(end, i)
    return h.state in ("open", "closed") and h.buffered > 0


def consume(cfg: EndConfig, end: End, i: int) -> Outcome:
    """H2-CONSUME: the application reads everything buffered on stream ``i``; the octets
    become owed under a ``consume`` or ``manual`` trigger (H2-POL-CREDIT)."""
    h = half(end, i)
    end = with_half(end, i, h._replace(buffered=0))
    end = owe(cfg, end, i, h.buffered, "consume")
    end, out = flush(cfg, end, i)
    return Outcome(end, out)


def may_update_by_hand(cfg: EndConfig, end: End, i: int) -> bool:
    """H2-POL-CREDIT ``manual``: octets are owed on the window."""
    if i == CONNECTION:
        return cfg.connection_credit.trigger == "manual" and end.conn_owed > 0
    h = half(end, i)
    return cfg.stream_credit.trigger == "manual" and h.state == "open" and h.owed > 0


def window_update(cfg: EndConfig, end: End, i: int) -> Outcome:
    """H2-POL-CREDIT ``manual``, H2-CREDIT: the application returns what is owed."""
    end, out = return_credit(cfg, end, i)
    return Outcome(end, out)


def reset(cfg: EndConfig, end: End, i: int) -> Outcome:
    """H2-RESET: the receiver resets stream ``i``: what it buffered is discarded
    (H2-DISCARD-CREDIT) and RST_STREAM goes on its wire."""
    h = half(end, i)
    end = with_half(end, i, h._replace(state="reset", buffered=0, owed=0))
    end = owe_discarded(cfg, end, h.buffered)
    end, out = flush(cfg, end, CONNECTION)
    return Outcome(end, (RstStream(i), *out))


def on_reset(cfg: EndConfig, end: End, i: int) -> Outcome:
    """H2-RESET: RST_STREAM arrives at the receiver (the sender reset the stream): it
    discards what it buffered (H2-DISCARD-CREDIT)."""
    h = half(end, i)
    if h.state == "reset":
        return Outcome(end)
    end = with_half(end, i, h._replace(state="reset", buffered=0, owed=0))
    end = owe_discarded(cfg, end, h.buffered)
    end, out = flush(cfg, end, CONNECTION)
    return Outcome(end, out)
