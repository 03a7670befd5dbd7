"""The ``h2`` adapter (AD-H2-H2): python-hyper's sans-I/O ``h2`` library as an HTTP/2
client, its ``H2Connection`` pumped against our peer in memory (no socket, no thread).

The application is the loop h2's documentation gives: DATA it receives is held until
``consume`` hands it to ``acknowledge_received_data`` (or, on a stream the peer resets,
discarded and acknowledged at once) (h2's ``WindowManager`` decides
when a WINDOW_UPDATE goes out); what ``send`` queues is written in chunks of at most
``min(stream window, connection window, the peer's SETTINGS_MAX_FRAME_SIZE)`` whenever a
window opens (AD-H2-POLICY ``split``).

Run: ``python -m creditflow.adapters.http2.h2_sansio``.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from creditflow.adapters.http2 import serving
from creditflow.adapters.http2.peer import Peer
from creditflow.adapters.http2.serving import Harness, Refused

#: AD-H2-QUIESCE: the most turns one op may take.
MAX_TURNS = 10_000


class H2Harness(Harness):
    """AD-H2-H2: an ``h2`` client connection against our peer (the server)."""

    library = "h2"
    role = "client"

    def __init__(self) -> None:
        self.version = version("h2")
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.peer = Peer("server")
        self.pending: dict[int, int] = {}  # octets the application queued, not yet sent
        self.ending: set[int] = set()  # streams the application will end after them
        self.held: dict[int, int] = {}  # octets received, not yet consumed
        self.error: str | None = None  # the library's error, once it ended the connection
        self.reset_streams: set[int] = set()

    def policy(self) -> dict[str, Any]:
        local = self.conn.local_settings
        return serving.flow_policy(
            # h2's WindowManager: a WINDOW_UPDATE once the application has processed
            # at least half of the window's maximum size (the whole of it at once)
            {"policy": "consume", "threshold": "half", "returns": "processed"},
            # the connection window of DATA on a closed or reset stream is credited back
            # by the library itself (H2Connection auto-acknowledges such frames)
            reset_credit="connection",
            discard_credit="connection",
            split="min(queued, stream window, connection window, SETTINGS_MAX_FRAME_SIZE)",
            initial_window=local.initial_window_size,
            max_frame_size=local.max_frame_size,
        )

    def start(self, peer_settings: dict[str, int]) -> None:
        self.peer = serving.new_peer(self.role, peer_settings)
        self.conn.initiate_connection()
        self.pump()

    # -- the application -------------------------------------------------------------------

    def _events(self, events: list[Any]) -> None:
        for ev in events:
            if isinstance(ev, h2.events.DataReceived):
                sid = ev.stream_id
                if sid in self.reset_streams:
                    continue
                self.held[sid] = self.held.get(sid, 0) + ev.flow_controlled_length
            elif isinstance(ev, h2.events.StreamReset):
                # the application discards what it held and acknowledges it, as h2's
                # documentation asks (else the connection window leaks)
                dropped = self.held.pop(ev.stream_id, 0)
                if dropped:
                    self.conn.acknowledge_received_data(dropped, ev.stream_id)
                self.reset_streams.add(ev.stream_id)
                self.pending.pop(ev.stream_id, None)
                self.ending.discard(ev.stream_id)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.error = self.error or f"ConnectionTerminated: error {ev.error_code!r}"

    def _write(self) -> None:
        """Send what the application queued, as far as the windows allow."""
        for sid in sorted(set(self.pending) | self.ending):
            if self.error is not None or sid in self.reset_streams:
                continue
            while self.pending.get(sid, 0) > 0:
                room = min(
                    self.pending[sid],
                    self.conn.local_flow_control_window(sid),
                    self.conn.max_outbound_frame_size,
                )
                if room <= 0:
                    break
                self.conn.send_data(sid, bytes(room))
                self.pending[sid] -= room
            if self.pending.get(sid, 0) == 0 and sid in self.ending:
                self.pending.pop(sid, None)
                self.ending.discard(sid)
                self.conn.end_stream(sid)  # an empty DATA with END_STREAM

    def pump(self) -> None:
        for _ in range(MAX_TURNS):
            if self.error is None:
                self._write()
            out = self.conn.data_to_send()
            if out:
                self.peer.receive(out)
            back = self.peer.take_output()
            if back:
                try:
                    self._events(self.conn.receive_data(back))
                except h2.exceptions.ProtocolError as exc:
                    # h2 has queued its GOAWAY; what it sends is read on the next turn
                    self.error = f"{type(exc).__name__}: {exc}"
            if not out and not back:
                return
        raise RuntimeError(f"h2 did not come to rest within {MAX_TURNS} turns")

    def app(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        sid = serving.stream_id(op, req)
        if self.error is not None:
            raise Refused(f"{op}: the connection has ended ({self.error})")
        try:
            if op == "open":
                if sid != self.conn.get_next_available_stream_id():
                    raise Refused(
                        f"open: the next stream is {self.conn.get_next_available_stream_id()}"
                    )
                self.conn.send_headers(
                    sid,
                    [
                        (":method", "POST"),
                        (":scheme", "http"),
                        (":authority", "127.0.0.1"),
                        (":path", f"/creditflow/{sid}"),
                    ],
                )
            elif op == "send":
                if sid not in self.conn.streams or sid in self.ending:
                    raise Refused(f"send: stream {sid} is not open for sending")
                octets = req.get("octets", 0)
                if not isinstance(octets, int) or octets < 0:
                    raise Refused("send: octets must be an integer >= 0")
                self.pending[sid] = self.pending.get(sid, 0) + octets
                if req.get("end_stream"):
                    self.ending.add(sid)
            elif op == "consume":
                octets = req.get("octets", self.held.get(sid, 0))
                if not isinstance(octets, int) or not 0 <= octets <= self.held.get(sid, 0):
                    raise Refused(f"consume: stream {sid} holds {self.held.get(sid, 0)} octets")
                self.held[sid] -= octets
                if octets:
                    self.conn.acknowledge_received_data(octets, sid)
            elif op == "cancel":
                self.conn.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
                self.reset_streams.add(sid)
                self.pending.pop(sid, None)
                self.ending.discard(sid)
        except h2.exceptions.H2Error as exc:
            raise Refused(f"{op}: {type(exc).__name__}: {exc}") from None
        self.pump()
        return {}

    def implementation_state(self) -> dict[str, Any]:
        """AD-H2-STATE: h2's own counters per level and the application's buffers."""
        streams: dict[str, Any] = {}
        for sid, stream in sorted(self.conn.streams.items()):
            streams[str(sid)] = {
                "send_window": stream.outbound_flow_control_window,
                "recv_window": stream.inbound_flow_control_window,
                "queued": self.pending.get(sid, 0),
                "held": self.held.get(sid, 0),
            }
        out: dict[str, Any] = {
            "connection": {
                "send_window": self.conn.outbound_flow_control_window,
                "recv_window": self.conn.inbound_flow_control_window,
            },
            "streams": streams,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def main() -> None:
    serving.Server(H2Harness).run()


if __name__ == "__main__":
    main()
