"""The ``azure-pyamqp`` adapter (AD-AMQ-AZURE): azure-servicebus' pure-Python AMQP 1.0
stack (``azure.servicebus._pyamqp``), two of its ``Connection``s joined by an in-memory
transport (no socket, no Azure), speaking the ``amqp`` family of the adapter protocol on
stdin/stdout (AD-AMQ-OPS).

Every frame is encoded by the library's own encoder and decoded by its own decoder on
the way to the other end, then handed to the receiving ``Connection`` as its socket
reader would (AD-AMQ-AZURE-WIRE). The library is a client: it cannot accept a peer's
BEGIN or ATTACH (``Session.from_incoming_frame`` and ``ReceiverLink.from_incoming_frame``
are not implemented), so the server's application makes the session and the receiving
link when they are asked for and hands the frame to them, as the library's unit tests
drive its ``Session`` and ``Link`` with frames (AD-AMQ-AZURE-ENDS). The receiving
application renews credit as the library's ``ReceiveClient`` does, by running that
class's own ``_client_run`` at rest (AD-AMQ-AZURE-POLICY).

Run: ``python -m creditflow.adapters.amqp.azure_pyamqp`` (``PYTHONPATH`` may put another
azure-servicebus release first: AD-AMQ-VERSION).
"""

from __future__ import annotations

from collections import deque
from importlib import metadata
from types import SimpleNamespace
from typing import Any

from azure.servicebus._pyamqp import _connection, _decode, _encode, performatives
from azure.servicebus._pyamqp.client import ReceiveClient
from azure.servicebus._pyamqp.message import Message
from azure.servicebus._pyamqp.outcomes import Accepted

from creditflow.adapters.amqp import serving
from creditflow.adapters.amqp.frames import frame_record
from creditflow.adapters.amqp.serving import Refused, settled_slice
from creditflow.conformance.families.amqp.protocol import OPS  # AD-AMQ-OPS

#: AD-AMQ-AZURE-OPS: the sending application has no API to answer a drain (no
#: ``drained``) nor to announce what it has (no ``offered``).
AZURE_OPS = tuple(op for op in OPS if op not in ("drained", "offered"))

#: AD-AMQ-SETTINGS: what ``reset`` accepts, with the library's defaults (AD-AMQ-AZURE-SETTINGS).
SETTINGS = {
    "link_credit": 1,  # Service Bus' receiver: prefetch_count (default 0) + 1; 0 = by hand
    "incoming_window": 64 * 1024,  # AMQPClient's INCOMING_WINDOW, each session
    "sender_link_credit": 10000,  # the sender's own link_credit (DEFAULT_LINK_CREDIT)
    "max_frame_size": 1024 * 1024,  # MAX_FRAME_SIZE_BYTES; at least 512
    "message_size": 10,
}

#: AMQP 1.0 §2.7: performative codes → names and the library's field tuples.
_PERFORMATIVES: dict[int, tuple[str, Any]] = {
    0x10: ("open", performatives.OpenFrame),
    0x11: ("begin", performatives.BeginFrame),
    0x12: ("attach", performatives.AttachFrame),
    0x13: ("flow", performatives.FlowFrame),
    0x14: ("transfer", performatives.TransferFrame),
    0x15: ("disposition", performatives.DispositionFrame),
    0x16: ("detach", performatives.DetachFrame),
    0x17: ("end", performatives.EndFrame),
    0x18: ("close", performatives.CloseFrame),
}
_BY_CLASS = {cls: name for name, cls in _PERFORMATIVES.values()}


def _values(fields: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """A frame's fields by their AMQP names (``link_credit`` → ``link-credit``); roles
    (a boolean on the wire) as ``sender``/``receiver``, names as text."""
    out: dict[str, Any] = {}
    for key, value in zip(names, fields, strict=False):
        if isinstance(value, bytes | bytearray | memoryview) and key == "name":
            value = bytes(value).decode("utf-8")
        if key == "role" and isinstance(value, bool):
            value = "receiver" if value else "sender"
        out[key.replace("_", "-")] = value
    return out


class MemoryTransport:
    """The ``transport`` a pyamqp ``Connection`` writes to (AD-AMQ-AZURE-WIRE): frames
    are encoded by the library (``encode_frame``) and queued for the other end."""

    def __init__(self, pair: Pair, side: str) -> None:
        self.pair, self.side = pair, side
        self.outbox: deque[tuple[int, bytes | None, bytes]] = deque()

    def connect(self) -> None:
        """No socket to open."""

    def negotiate(self) -> None:
        """No SASL layer."""

    def close(self) -> None:
        """No socket to close."""

    def write(self, data: bytes) -> None:
        """The protocol header (the only raw write the library makes here)."""
        self.outbox.append((0, None, bytes(data)))

    def send_frame(self, channel: int, frame: Any, **kwargs: Any) -> None:
        header, body = _encode.encode_frame(frame, **kwargs)
        name = _BY_CLASS.get(type(frame))
        if name is not None:
            self.pair.record(self.side, "sent", channel, name, _values(frame, frame._fields))
        self.outbox.append((channel, None if body is None else bytes(body), bytes(header)))


class Pair:
    """Two pyamqp connections joined in memory (AD-AMQ-AZURE)."""

    def __init__(self, settings: dict[str, int]) -> None:
        self.settings = settings
        self.frames: list[dict[str, Any]] = []
        self.transports = {side: MemoryTransport(self, side) for side in ("client", "server")}
        self.conns = {
            side: _connection.Connection(
                f"amqp://{side}.invalid",
                transport=self.transports[side],
                max_frame_size=settings["max_frame_size"],
                idle_timeout=None,
            )
            for side in ("client", "server")
        }
        self.sessions: dict[str, Any] = {}  # name -> client session
        self.server_sessions: dict[int, Any] = {}  # server channel -> its session
        self.links: dict[str, list[Any]] = {}  # name -> [sender, receiver or None, session]
        self.held: dict[str, list[tuple[int, bytes]]] = {}  # link -> (delivery-id, tag)
        for conn in self.conns.values():
            conn.open()
        self.pump()

    def record(self, side: str, direction: str, channel: int, name: str, values: Any) -> None:
        self.frames.append(frame_record(side, direction, channel, name, values))

    # -- the wire (AD-AMQ-AZURE-WIRE, AD-AMQ-QUIESCE) ---------------------------------------

    def _deliver(self, side: str, channel: int, body: bytes | None, header: bytes) -> None:
        """One frame of ``side``'s outbox read by the other end, as its reader would."""
        peer = "server" if side == "client" else "client"
        conn = self.conns[peer]
        if body is None:
            conn._process_incoming_frame(channel, _decode.decode_empty_frame(memoryview(header)))
            return
        code, fields = _decode.decode_frame(memoryview(body))
        name, cls = _PERFORMATIVES.get(code, ("?", None))
        if cls is not None:
            self.record(peer, "received", channel, name, _values(fields, cls._fields))
        if peer == "server" and self._accept(channel, code, fields):
            return
        conn._process_incoming_frame(channel, (code, fields))

    def _accept(self, channel: int, code: int, fields: list[Any]) -> bool:
        """AD-AMQ-AZURE-ENDS: the server's application answers a BEGIN by making a
        session for the channel it came on (the library's ``Connection`` looks a BEGIN
        up by its remote-channel only, and a session it made would not name the peer's
        channel in its answer) and hands it the frame (``True``: the frame is read);
        an ATTACH of a sender by making and attaching the receiving link before the
        library reads the frame (``False``)."""
        conn = self.conns["server"]
        if code == 0x11 and fields[0] is None and channel not in conn._incoming_endpoints:
            ssn = conn.create_session(
                incoming_window=self.settings["incoming_window"],
                outgoing_window=self.settings["incoming_window"],
            )
            conn._incoming_endpoints[channel] = ssn
            self.server_sessions[channel] = ssn
            ssn.remote_channel = channel
            ssn._incoming_begin(fields)
            return True
        if code == 0x12 and fields[2] is False:  # role: sender
            accepting: Any = self.server_sessions.get(channel)
            name = bytes(fields[0]).decode("utf-8")
            if accepting is None or name in accepting.links:
                return False
            held = self.held.setdefault(name, [])

            def on_transfer(frame: Any, _message: Any) -> None:
                held.append((int(frame[1]), bytes(frame[2])))  # delivery-id, tag; unsettled

            rcv = accepting.create_receiver_link(
                source_address=name,
                target_address=name,
                name=name,
                link_credit=0,  # as ReceiveClient: no credit before the client is ready
                on_transfer=on_transfer,
            )
            rcv.attach()
            serving.pair_receiver(self.links, rcv, name)
        return False

    def _move(self) -> bool:
        moved = False
        for side in ("client", "server"):
            box = self.transports[side].outbox
            while box:
                self._deliver(side, *box.popleft())
                moved = True
        return moved

    def pump(self) -> None:
        """AD-AMQ-QUIESCE: move frames both ways until none is in flight; then the
        receiving application's ``ReceiveClient`` step (AD-AMQ-AZURE-POLICY) and again,
        until neither moves anything."""
        for _ in range(10_000):
            moved = self._move()
            if not moved and not self._receive_client_step():
                return
        raise RuntimeError("the two ends never came to rest")

    def _receive_client_step(self) -> bool:
        """AD-AMQ-AZURE-POLICY: with ``link_credit`` W > 0 every receiving link is run by
        the library's own ``ReceiveClient._client_run`` (credit renewed to W once it is
        at most 0); whether that put a frame on the wire."""
        window = self.settings["link_credit"]
        if window <= 0:
            return False
        before = len(self.transports["server"].outbox)
        for _snd, rcv, _ssn in self.links.values():
            if rcv is None or rcv._is_closed:
                continue
            # the class's own step on a stand-in holding what it reads (its link, W)
            driver: Any = SimpleNamespace(
                _link=rcv,
                _link_credit=window,
                _connection=SimpleNamespace(listen=lambda **_kw: None),
                _socket_timeout=None,
                _shutdown=False,
                _network_trace_params={},
            )
            ReceiveClient._client_run(driver)
        return len(self.transports["server"].outbox) > before

    # -- ops (AD-AMQ-OPS) ------------------------------------------------------------------

    def begin(self, name: str) -> None:
        serving.new_session(self.sessions, name)
        ssn = self.conns["client"].create_session(
            incoming_window=self.settings["incoming_window"],
            outgoing_window=self.settings["incoming_window"],
        )
        ssn.begin()
        self.sessions[name] = ssn
        self.pump()

    def attach(self, session: str, name: str) -> None:
        snd = serving.new_link(self.sessions, self.links, session, name).create_sender_link(
            target_address=name,
            source_address=name,
            name=name,
            link_credit=self.settings["sender_link_credit"],
        )
        self.links[name] = [snd, None, session]
        snd.attach()
        self.pump()

    def _link(self, name: str) -> tuple[Any, Any]:
        entry = self.links.get(name)
        if entry is None or entry[1] is None or entry[0]._is_closed:  # AD-AMQ-REFUSE
            raise Refused(f"no attached link {name!r}")
        return entry[0], entry[1]

    def flow(self, name: str, credit: int, drain: bool = False) -> None:
        """The receiving application grants ``credit`` more: pyamqp's ``Link.flow`` sets
        the credit (absolute), so it is given the current credit plus ``credit``
        (AD-AMQ-AZURE-OPS); a drain is the same FLOW with ``drain=True``."""
        rcv = self._link(name)[1]
        rcv.flow(link_credit=rcv.current_link_credit + credit, drain=True if drain else None)
        self.pump()

    def transfer(self, name: str) -> None:
        snd = self._link(name)[0]
        message = Message(data=[b"x" * self.settings["message_size"]])  # one data section
        snd.send_transfer(message, settled=False)
        self.pump()

    def settle(self, name: str, count: int, keep: int) -> None:
        """The receiving application accepts and settles ``count`` deliveries after its
        ``keep`` oldest (``ReceiverLink.send_disposition``)."""
        rcv = self._link(name)[1]
        held = self.held.get(name, [])
        for delivery_id, tag in settled_slice(name, held, count, keep):
            rcv.send_disposition(
                first_delivery_id=delivery_id,
                delivery_tag=tag,
                settled=True,
                delivery_state=Accepted(),
            )
        del held[keep : keep + count]
        self.pump()

    def detach(self, name: str) -> None:
        self._link(name)[0].detach(close=True)
        self.pump()

    def end(self, name: str) -> None:
        serving.known_session(self.sessions, name).end()
        self.pump()

    def state(self) -> dict[str, Any]:
        """AD-AMQ-STATE (AD-AMQ-AZURE-STATE): the library's own counters of each end."""
        links: dict[str, Any] = {}
        for name, (snd, rcv, _ssn) in self.links.items():
            pending = list(snd._pending_deliveries)
            entry: dict[str, Any] = {
                "sender": {
                    "credit": snd.current_link_credit,
                    "delivery_count": snd.delivery_count,
                    "queued": sum(1 for d in pending if not d.sent),
                    "unsettled": sum(1 for d in pending if d.sent),
                    "drain": False,
                }
            }
            if rcv is not None:
                entry["receiver"] = {
                    "credit": rcv.current_link_credit,
                    "delivery_count": rcv.delivery_count,
                    "unsettled": len(self.held.get(name, [])),
                    "drain": False,
                }
            links[name] = entry
        sessions: dict[str, Any] = {}
        for name, ssn in self.sessions.items():
            ends = {"client": ssn}
            for entry_ in self.links.values():
                if entry_[2] == name and entry_[1] is not None:
                    ends["server"] = entry_[1]._session
            sessions[name] = {
                side: {
                    "incoming_window": s.incoming_window,
                    "next_incoming_id": s.next_incoming_id,
                    "next_outgoing_id": s.next_outgoing_id,
                    "remote_incoming_window": s.remote_incoming_window,
                    "outgoing_window": s.outgoing_window,
                }
                for side, s in ends.items()
            }
        return {"links": links, "sessions": sessions}


def policy(settings: dict[str, int]) -> dict[str, Any]:
    """AD-AMQ-AZURE-POLICY: the model's policies (spec/amqp.md, AMQ-POL-*) this stack
    follows with these settings."""
    window = settings["link_credit"]
    credit: dict[str, Any]
    if window > 0:  # ReceiveClient: flow(link_credit=W) whenever current_link_credit <= 0
        credit = {
            "policy": "window",
            "window": window,
            "threshold": 0,
            "count": "credit",
            "encoding": "absolute",
            "renew_on": "arrival",
        }
    else:
        credit = {"policy": "manual", "x-api": "Link.flow(link_credit=n) sets the credit to n"}
    return {
        "credit": credit,
        "sender_credit": {
            "formula": "serial",
            "x-self-grant": settings["sender_link_credit"],
            "x-no-credit-check": "a FLOW sends every queued message",
        },
        # Session: the window counts transfer frames and is reset to its size at 0
        "window": {"policy": "fixed", "window": settings["incoming_window"], "threshold": 0},
        "x-drain-echo": "none: the sender ignores drain",
    }


def version() -> str:
    return metadata.version("azure-servicebus")


def hello() -> dict[str, Any]:
    """AD-AMQ-HELLO."""
    return serving.hello_answer(
        f"azure-servicebus _pyamqp {version()}", version(), AZURE_OPS, SETTINGS, policy
    )


def handle(pair: Pair | None, req: dict[str, Any]) -> tuple[Pair | None, dict[str, Any]]:
    """One request (AD-AMQ-AZURE-OPS); the pair after it and the answer."""
    return serving.answer_pair_request(
        pair, req, hello, AZURE_OPS, SETTINGS, policy, new_pair, run_op
    )


def new_pair(settings: dict[str, int]) -> Pair:
    """AD-AMQ-RESET: a fresh pair; a frame size below AMQP's least is refused."""
    if settings["max_frame_size"] < 512:
        raise serving.SettingsRefused("max_frame_size below 512 (AMQP 1.0 §2.7.1)")
    return Pair(settings)


def run_op(pair: Pair, op: str, req: dict[str, Any]) -> dict[str, Any]:
    """An op after ``reset`` (AD-AMQ-AZURE-OPS); no extra answer members."""
    if op in ("flow", "drain"):
        pair.flow(str(req["link"]), int(req.get("credit", 0)), drain=op == "drain")
    else:
        serving.run_link_op(pair, op, req)
    return {}


def main() -> None:
    """AD-TRANSPORT: one JSON request per line in, one response per line out."""
    serving.serve_pair(handle, default=_jsonable)


def _jsonable(value: Any) -> Any:
    """Frame fields JSON cannot carry as they are (bytes) as text."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)


if __name__ == "__main__":
    main()
