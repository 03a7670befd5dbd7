"""Our own frame-level HTTP/2 endpoint (AD-H2-PEER): the far end of every ``http2``
adapter, written on our codec (:mod:`.frames`) and ``hpack`` only, so that each frame the
implementation under test sends is read as octets and each frame it receives is one we
chose — including frames a correct endpoint never sends (a zero increment, a window
past 2^31 − 1, DATA beyond the window) — and both windows of every level are accounted
by RFC 9113 §6.9 from the frames alone (AD-H2-WINDOWS).

The peer returns no credit by itself: the implementation's sending is bounded by
exactly the WINDOW_UPDATEs the driver asks for. It acknowledges SETTINGS and PING
(§6.5.3, §6.7), answers a request stream's HEADERS with a ``200`` response HEADERS when
it is the server, and keeps nothing of the DATA it receives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import hpack

from creditflow.adapters.http2 import frames as fr
from creditflow.adapters.http2.frames import DEFAULT_WINDOW, Frame


@dataclass
class StreamView:
    """One stream in the peer's accounts (AD-H2-WINDOWS): ``send`` the octets the peer may
    still send on it, ``recv`` the octets the implementation may still send (both may be
    negative, §6.9.2), what each side ended or reset."""

    send: int
    recv: int
    received: int = 0  # DATA octets the implementation sent on it (flow-controlled)
    sent: int = 0  # DATA octets the peer sent on it
    local_end: bool = False  # the peer sent END_STREAM
    remote_end: bool = False  # the implementation sent END_STREAM
    reset_by: str | None = None  # "peer" / "implementation"
    headers_seen: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "send_window": self.send,
            "recv_window": self.recv,
            "sent": self.sent,
            "received": self.received,
            "end_stream_sent": self.local_end,
            "end_stream_received": self.remote_end,
        }
        if self.reset_by is not None:
            out["reset_by"] = self.reset_by
        return out


@dataclass
class Peer:
    """AD-H2-PEER: our endpoint, as ``client`` or ``server``; bytes in by :meth:`receive`,
    bytes out by :meth:`take_output`; every frame either way in :attr:`log`."""

    role: str
    #: the SETTINGS the peer starts with (RFC names → values)
    initial: dict[str, int] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.out = bytearray()
        self.reader = fr.FrameReader()
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.streams: dict[int, StreamView] = {}
        # §6.9.2: the implementation's settings apply to what the peer may send
        self.remote_initial = DEFAULT_WINDOW
        self.remote_max_frame = fr.DEFAULT_MAX_FRAME
        self.remote_settings: dict[str, int] = {}
        # the peer's own: applied to the receive side once the implementation acks them
        self.local_initial = DEFAULT_WINDOW
        self.pending_settings: list[dict[str, int]] = []
        self.conn_send = DEFAULT_WINDOW
        self.conn_recv = DEFAULT_WINDOW
        self.conn_received = 0
        self.goaway: dict[str, Any] | None = None
        self.preface_seen = self.role == "client"  # a server waits for the client's preface
        self._headers_buf: tuple[int, bytearray, int] | None = None
        self.next_stream = 1
        if self.role == "client":
            self.out += fr.PREFACE
        self.send_settings(self.initial)

    # -- frames out ----------------------------------------------------------------------

    def _emit(self, frame: Frame, **extra: Any) -> None:
        self.out += frame.encode()
        self.log.append({"from": "peer", **fr.describe(frame), **extra})

    def take_output(self) -> bytes:
        octets = bytes(self.out)
        self.out.clear()
        return octets

    def _stream(self, sid: int) -> StreamView:
        view = self.streams.get(sid)
        if view is None:
            view = StreamView(send=self.remote_initial, recv=self.local_initial)
            self.streams[sid] = view
        return view

    def send_settings(self, values: dict[str, int]) -> None:
        """§6.5: SETTINGS with RFC-named values; §6.9.2 applies to the receive windows when
        the implementation acknowledges them (:meth:`_settings_acked`)."""
        pairs = {fr.SETTING_IDS[k]: int(v) for k, v in values.items()}
        self.pending_settings.append(dict(values))
        self._emit(fr.settings(pairs))

    def open(self, sid: int, end_stream: bool = False) -> None:
        """§8.3.1: a request stream (the peer as client): a POST's HEADERS."""
        block = self.encoder.encode(
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":authority", "127.0.0.1"),
                (":path", f"/creditflow/{sid}"),
            ]
        )
        self._stream(sid)
        self.next_stream = max(self.next_stream, sid + 2)
        self._emit(fr.headers(sid, block, end_stream))
        if end_stream:
            self.streams[sid].local_end = True

    def request(self, sid: int, path: str) -> None:
        """§8.3.1: a GET request stream for ``path`` (END_STREAM on its HEADERS)."""
        block = self.encoder.encode(
            [(":method", "GET"), (":scheme", "http"), (":authority", "127.0.0.1"), (":path", path)]
        )
        view = self._stream(sid)
        self.next_stream = max(self.next_stream, sid + 2)
        view.local_end = True
        self._emit(fr.headers(sid, block, True))

    def respond(self, sid: int) -> None:
        """§8.3.2: a ``200`` response HEADERS (the peer as server)."""
        self._emit(fr.headers(sid, self.encoder.encode([(":status", "200")])))

    def data(self, sid: int, length: int, end_stream: bool = False) -> None:
        """§6.1: ``length`` octets of DATA in frames of at most the implementation's
        SETTINGS_MAX_FRAME_SIZE (END_STREAM on the last), whatever the windows say (the
        driver asks for DATA beyond a window to see the implementation refuse it); a
        frame's record says ``beyond_window`` when it is."""
        view = self._stream(sid)
        sizes = [
            min(self.remote_max_frame, length - i) for i in range(0, length, self.remote_max_frame)
        ]
        for k, n in enumerate(sizes or [0]):
            last = k == max(len(sizes) - 1, 0)
            beyond = n > 0 and (n > self.conn_send or n > view.send)
            self.conn_send -= n
            view.send -= n
            view.sent += n
            if end_stream and last:
                view.local_end = True
            extra = {"beyond_window": True} if beyond else {}
            self._emit(fr.data(sid, n, end_stream and last), **extra)

    def window_update(self, sid: int, increment: int) -> None:
        """§6.9: credit the implementation ``increment`` octets on stream ``sid`` (0: the
        connection); a zero or excessive increment is sent as asked (it must fit the
        frame's 31 bits)."""
        if not 0 <= increment <= fr.MAX_WINDOW:
            raise ValueError(f"a WINDOW_UPDATE increment is 0 … 2^31 − 1, not {increment}")
        if sid == 0:
            self.conn_recv += increment
        else:
            self._stream(sid).recv += increment
        self._emit(fr.window_update(sid, increment))

    def rst_stream(self, sid: int, error: str = "CANCEL") -> None:
        """§6.4: reset stream ``sid``."""
        self._stream(sid).reset_by = "peer"
        self._emit(fr.rst_stream(sid, fr.ERROR_CODES[error]))

    def ping(self) -> None:
        self._emit(fr.ping(b"creditfl"))

    def goaway_frame(self, error: str = "NO_ERROR") -> None:
        self._emit(fr.goaway(0, fr.ERROR_CODES[error]))

    # -- frames in -----------------------------------------------------------------------

    def receive(self, octets: bytes) -> None:
        """The implementation's octets: the client preface (the peer as server), then
        frames, each logged and accounted."""
        if not octets:
            return
        if not self.preface_seen:
            self._preface = getattr(self, "_preface", b"") + octets
            if len(self._preface) < len(fr.PREFACE):
                return
            if not self._preface.startswith(fr.PREFACE):
                raise fr.FrameError("the client did not send the connection preface")
            octets = self._preface[len(fr.PREFACE) :]
            self.preface_seen = True
        for frame in self.reader.feed(octets):
            self._handle(frame)

    def _handle(self, frame: Frame) -> None:
        rec: dict[str, Any] = {"from": "implementation", **fr.describe(frame)}
        self.log.append(rec)
        t, sid = frame.type, frame.stream
        if t == fr.DATA:
            n = fr.flow_controlled_length(frame)
            view = self._stream(sid)
            if n > self.conn_recv or n > view.recv:
                rec["beyond_window"] = True  # §6.9.1: a sender must not
            self.conn_recv -= n
            view.recv -= n
            view.received += n
            self.conn_received += n
            if frame.flags & fr.END_STREAM:
                view.remote_end = True
            rec["windows"] = {"connection": self.conn_recv, "stream": view.recv}
        elif t in (fr.HEADERS, fr.CONTINUATION):
            self._header_block(frame)
        elif t == fr.WINDOW_UPDATE:
            inc = rec.get("increment", 0)
            if sid == 0:
                self.conn_send += inc
            else:
                self._stream(sid).send += inc
        elif t == fr.SETTINGS:
            if frame.flags & fr.ACK:
                self._settings_acked()
            else:
                self._remote_settings(fr.settings_values(frame))
                self._emit(fr.settings(ack=True))
        elif t == fr.PING and not frame.flags & fr.ACK:
            self._emit(fr.ping(frame.payload, ack=True))
        elif t == fr.RST_STREAM:
            self._stream(sid).reset_by = "implementation"
        elif t == fr.GOAWAY:
            self.goaway = {k: rec[k] for k in ("last_stream", "error") if k in rec}

    def _header_block(self, frame: Frame) -> None:
        payload = frame.payload
        if frame.type == fr.HEADERS:
            if frame.flags & fr.PADDED and payload:
                payload = payload[1 : len(payload) - payload[0]]
            if frame.flags & fr.PRIORITY_FLAG:
                payload = payload[5:]
            self._headers_buf = (frame.stream, bytearray(payload), frame.flags)
        elif self._headers_buf is not None:
            self._headers_buf[1].extend(payload)
        if not frame.flags & fr.END_HEADERS or self._headers_buf is None:
            return
        sid, block, flags = self._headers_buf
        self._headers_buf = None
        self.decoder.decode(bytes(block))
        view = self._stream(sid)
        first = not view.headers_seen
        view.headers_seen = True
        if flags & fr.END_STREAM:
            view.remote_end = True
        if self.role == "server" and first and view.reset_by is None:
            self.respond(sid)

    def _remote_settings(self, values: dict[str, int]) -> None:
        """§6.9.2: a change of SETTINGS_INITIAL_WINDOW_SIZE moves every stream's send
        window by the difference (possibly below zero)."""
        self.remote_settings.update(values)
        if "SETTINGS_INITIAL_WINDOW_SIZE" in values:
            new = values["SETTINGS_INITIAL_WINDOW_SIZE"]
            delta = new - self.remote_initial
            self.remote_initial = new
            for view in self.streams.values():
                view.send += delta
        if "SETTINGS_MAX_FRAME_SIZE" in values:
            self.remote_max_frame = values["SETTINGS_MAX_FRAME_SIZE"]

    def _settings_acked(self) -> None:
        """§6.5.3: the oldest unacknowledged SETTINGS now holds; §6.9.2 for our own
        initial window: every stream's receive window moves by the difference."""
        if not self.pending_settings:
            return
        values = self.pending_settings.pop(0)
        if "SETTINGS_INITIAL_WINDOW_SIZE" in values:
            new = int(values["SETTINGS_INITIAL_WINDOW_SIZE"])
            delta = new - self.local_initial
            self.local_initial = new
            for view in self.streams.values():
                view.recv += delta

    # -- state ---------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """AD-H2-STATE ``peer``: the windows both ways by the frames, per level."""
        out: dict[str, Any] = {
            "connection": {
                "send_window": self.conn_send,
                "recv_window": self.conn_recv,
                "received": self.conn_received,
            },
            # the implementation's SETTINGS as received (the defaults where it sent none)
            "settings": {
                **self.remote_settings,
                "SETTINGS_INITIAL_WINDOW_SIZE": self.remote_initial,
                "SETTINGS_MAX_FRAME_SIZE": self.remote_max_frame,
            },
            "streams": {str(s): v.to_json() for s, v in sorted(self.streams.items())},
        }
        if self.goaway is not None:
            out["goaway"] = self.goaway
        return out
