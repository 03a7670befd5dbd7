"""The ``proton`` adapter (AD-AMQ-PROTON): python-qpid-proton's engine, two
``Connection``s pumped in memory through their ``Transport``s (no socket), speaking the
``amqp`` family of the adapter protocol on stdin/stdout (AD-AMQ-OPS).

The client connection holds every link's sender, the server connection its receiver
(AD-AMQ-ENDS). After every op the transports are pumped until neither has bytes pending
(AD-AMQ-QUIESCE); the frames each end sent and received meanwhile are read from proton's
own frame trace (AD-AMQ-FRAMES).

Run: ``python -m creditflow.adapters.amqp.proton_server`` (``PYTHONPATH`` may put another
proton release first: AD-AMQ-VERSION).
"""

from __future__ import annotations

import re
from typing import Any

import proton
from proton import Collector, Connection, Delivery, Endpoint, Event, Transport

from creditflow.adapters.amqp import serving
from creditflow.adapters.amqp.frames import frame_record
from creditflow.adapters.amqp.serving import Refused, settled_slice
from creditflow.conformance.families.amqp.protocol import OPS  # AD-AMQ-OPS

#: AD-AMQ-SETTINGS: what ``reset`` accepts, with proton's defaults.
SETTINGS = {"max_frame_size": 0, "incoming_capacity": 0, "message_size": 10}

_FRAME = re.compile(r"FRAME: (\d+) (->|<-) @([a-z-]+)\(\d+\) \[(.*)\]")
_FIELD = re.compile(r'(?:^|, )([a-z-]+)=(0x[0-9a-f]+|\d+|true|false|"[^"]*")')


def parse_trace(side: str, line: str) -> dict[str, Any] | None:
    """A proton frame-trace line as an AD-AMQ-FRAMES record (``None`` for the header)."""
    m = _FRAME.search(line)
    if m is None:
        return None
    channel, arrow, name, body = m.groups()
    # nested described values (source, target, ...) are cut: only top-level scalars count
    body = re.sub(r"@[a-z-]+\(\d+\) \[[^\]]*\]", "", body)
    values: dict[str, Any] = {}
    for key, raw in _FIELD.findall(body):
        if raw in ("true", "false"):
            values[key] = raw == "true"
        elif raw.startswith('"'):
            values[key] = raw[1:-1]
        else:
            values[key] = int(raw, 16) if raw.startswith("0x") else int(raw)
    if name == "attach" and isinstance(values.get("role"), bool):
        values["role"] = "receiver" if values["role"] else "sender"
    if name == "disposition" and isinstance(values.get("role"), bool):
        values["role"] = "receiver" if values["role"] else "sender"
    return frame_record(side, "sent" if arrow == "->" else "received", int(channel), name, values)


class Pair:
    """Two proton connections joined in memory (AD-AMQ-PROTON)."""

    def __init__(self, settings: dict[str, int]) -> None:
        self.settings = settings
        self.frames: list[dict[str, Any]] = []
        self.ends: dict[str, tuple[Connection, Transport, Collector]] = {}
        for side in ("client", "server"):
            conn = Connection()
            transport = Transport(Transport.SERVER if side == "server" else Transport.CLIENT)
            if settings["max_frame_size"]:
                transport.max_frame_size = settings["max_frame_size"]
            transport.trace(Transport.TRACE_FRM)
            transport.tracer = self._tracer(side)
            collector = Collector()
            conn.collect(collector)
            transport.bind(conn)
            self.ends[side] = (conn, transport, collector)
        self.sessions: dict[str, Any] = {}  # name -> (client session, server session)
        self.links: dict[str, Any] = {}  # name -> [sender, receiver or None, session name]
        self.received: dict[str, list[Delivery]] = {}  # link -> read, not yet settled
        self.sent = 0
        self.ends["client"][0].open()
        self.pump()

    def _tracer(self, side: str) -> Any:
        def trace(_transport: Transport, message: str) -> None:
            rec = parse_trace(side, message)
            if rec is not None:
                self.frames.append(rec)

        return trace

    def pump(self) -> None:
        """AD-AMQ-QUIESCE: move bytes both ways and react to events until nothing moves."""
        moved = True
        while moved:
            moved = False
            for a, b in (("client", "server"), ("server", "client")):
                ta, tb = self.ends[a][1], self.ends[b][1]
                n = ta.pending()
                if n > 0:
                    tb.push(ta.peek(n) or b"")
                    ta.pop(n)
                    moved = True
            for side in ("client", "server"):
                if self._handle(side):
                    moved = True

    def _handle(self, side: str) -> bool:
        """The applications' reactions: the server opens what the client opened (its
        sessions get the configured incoming capacity); the receiving application reads
        every complete delivery (keeping it unsettled until ``settle``); the sending
        application settles what the receiver settled."""
        collector = self.ends[side][2]
        acted = False
        while collector.peek():
            # Any: proton types every member Optional; the event type says which is set
            ev: Any = collector.peek()
            t = ev.type
            if t == Event.CONNECTION_REMOTE_OPEN and ev.connection.state & Endpoint.LOCAL_UNINIT:
                ev.connection.open()
            elif t == Event.SESSION_REMOTE_OPEN and ev.session.state & Endpoint.LOCAL_UNINIT:
                if self.settings["incoming_capacity"]:
                    ev.session.incoming_capacity = self.settings["incoming_capacity"]
                ev.session.open()
            elif t == Event.LINK_REMOTE_OPEN and ev.link.state & Endpoint.LOCAL_UNINIT:
                ev.link.source.copy(ev.link.remote_source)
                ev.link.target.copy(ev.link.remote_target)
                ev.link.open()
                for entry in self.links.values():
                    if entry[0].name == ev.link.name and entry[1] is None:
                        entry[1] = ev.link
            elif t in (Event.LINK_REMOTE_CLOSE,) and not ev.link.state & Endpoint.LOCAL_CLOSED:
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
                        self.received.setdefault(link.name, []).append(dlv)
                elif link.is_sender and dlv.settled:  # proton: settled = settled by the peer
                    dlv.settle()
            collector.pop()
            acted = True
        return acted

    # -- ops (AD-AMQ-OPS) ------------------------------------------------------------------

    def begin(self, name: str) -> None:
        if name in self.sessions:
            raise Refused(f"session {name!r} exists")
        ssn = self.ends["client"][0].session()
        if self.settings["incoming_capacity"]:
            ssn.incoming_capacity = self.settings["incoming_capacity"]
        ssn.open()
        self.sessions[name] = ssn
        self.pump()

    def attach(self, session: str, name: str) -> None:
        if session not in self.sessions:
            raise Refused(f"no session {session!r}")
        if name in self.links:
            raise Refused(f"link {name!r} exists")
        snd = self.sessions[session].sender(name)
        snd.target.address = name
        snd.open()
        self.links[name] = [snd, None, session]
        self.pump()

    def _link(self, name: str) -> tuple[Any, Any]:
        entry = self.links.get(name)
        if entry is None or entry[1] is None:
            raise Refused(f"no attached link {name!r}")
        return entry[0], entry[1]

    def flow(self, name: str, credit: int) -> None:
        self._link(name)[1].flow(credit)
        self.pump()

    def drain(self, name: str, credit: int) -> None:
        self._link(name)[1].drain(credit)
        self.pump()

    def transfer(self, name: str) -> None:
        snd = self._link(name)[0]
        snd.delivery(str(self.sent).encode())
        self.sent += 1
        snd.send(b"x" * self.settings["message_size"])
        snd.advance()
        self.pump()

    def offered(self, name: str, n: int) -> None:
        self._link(name)[0].offered(n)
        self.pump()

    def drained(self, name: str) -> int:
        n = self._link(name)[0].drained()
        self.pump()
        return int(n)

    def settle(self, name: str, count: int, keep: int) -> None:
        """The receiving application settles ``count`` deliveries after its ``keep``
        oldest unsettled ones (AD-AMQ-OPS)."""
        held = self.received.get(name, [])
        for dlv in settled_slice(name, held, count, keep):
            dlv.update(Delivery.ACCEPTED)
            dlv.settle()
        del held[keep : keep + count]
        self.pump()

    def detach(self, name: str) -> None:
        self._link(name)[0].close()
        self.pump()

    def end(self, name: str) -> None:
        if name not in self.sessions:
            raise Refused(f"no session {name!r}")
        self.sessions[name].close()
        self.pump()

    def state(self) -> dict[str, Any]:
        """AD-AMQ-STATE: what proton's API shows of each end."""
        links: dict[str, Any] = {}
        for name, (snd, rcv, _ssn) in self.links.items():
            entry: dict[str, Any] = {
                "sender": {
                    "credit": snd.credit,
                    "queued": snd.queued,
                    "unsettled": snd.unsettled,
                    "drain": snd.drain_mode,
                }
            }
            if rcv is not None:
                entry["receiver"] = {
                    "credit": rcv.credit,
                    "queued": rcv.queued,
                    "unsettled": len(self.received.get(name, [])),
                    "drain": rcv.drain_mode,
                    "available": rcv.available,
                }
            links[name] = entry
        sessions: dict[str, Any] = {}
        for name, ssn in self.sessions.items():
            sessions[name] = {
                "client": {
                    "incoming_capacity": ssn.incoming_capacity,
                    "outgoing_bytes": ssn.outgoing_bytes,
                }
            }
        for ssn_name in self.sessions:
            for ends in self.links.values():
                if ends[2] == ssn_name and ends[1] is not None:
                    server_ssn = ends[1].session
                    sessions[ssn_name]["server"] = {
                        "incoming_capacity": server_ssn.incoming_capacity,
                        "incoming_bytes": server_ssn.incoming_bytes,
                    }
        return {"links": links, "sessions": sessions}


def policy(settings: dict[str, int]) -> dict[str, Any]:
    """AD-AMQ-POLICY: the model's policies (spec/amqp.md, AMQ-POL-*) proton follows with
    these settings."""
    if settings["incoming_capacity"]:
        window: dict[str, Any] = {
            "policy": "capacity",
            "capacity": settings["incoming_capacity"],
            "frame": settings["max_frame_size"] or None,
        }
    else:  # proton advertises 2^31 − 1 when no capacity is set
        window = {"policy": "x-unbounded", "window": 2**31 - 1}
    return {
        "credit": {"policy": "manual", "x-api": "Receiver.flow(n) adds n"},
        "sender_credit": {"formula": "serial"},
        "window": window,
        # AMQ-POL-GRANT-DRAIN: Receiver.flow(n) during a drain sends drain=false (legal,
        # §2.7.4: the latest FLOW's drain flag is the receiver's current choice)
        "grant_drain": "clear",
        "x-drain-echo": "by hand: Sender.drained()",
    }


def version() -> str:
    return ".".join(str(p) for p in proton.VERSION)


def handle(pair: Pair | None, req: dict[str, Any]) -> tuple[Pair | None, dict[str, Any]]:
    op = req.get("op")
    if op == "hello":
        name = f"python-qpid-proton {version()}"
        return pair, serving.hello_answer(name, version(), OPS, SETTINGS, policy)
    if op not in OPS:
        return pair, {"ok": False, "error": f"unknown op {op!r}"}
    if op == "reset":  # AD-AMQ-RESET
        try:
            settings = serving.reset_settings(req, SETTINGS)
        except serving.SettingsRefused as exc:
            return pair, {"ok": False, "error": str(exc)}
        pair = Pair(settings)
        out = {"ok": True, "policy": policy(settings), "frames": pair.frames, "state": pair.state()}
        pair.frames = []
        return pair, out
    if pair is None:
        return pair, {"ok": False, "error": f"{op} before reset"}
    extra: dict[str, Any] = {}
    try:
        if op == "begin":
            pair.begin(str(req["session"]))
        elif op == "attach":
            pair.attach(str(req["session"]), str(req["link"]))
        elif op == "flow":
            pair.flow(str(req["link"]), int(req["credit"]))
        elif op == "drain":
            pair.drain(str(req["link"]), int(req.get("credit", 0)))
        elif op == "transfer":
            pair.transfer(str(req["link"]))
        elif op == "offered":
            pair.offered(str(req["link"]), int(req["available"]))
        elif op == "drained":
            extra["drained"] = pair.drained(str(req["link"]))
        elif op == "settle":
            pair.settle(str(req["link"]), int(req.get("count", 1)), int(req.get("keep", 0)))
        elif op == "detach":
            pair.detach(str(req["link"]))
        elif op == "end":
            pair.end(str(req["session"]))
    except (Refused, KeyError, ValueError, TypeError) as exc:
        return pair, {"ok": False, "error": f"{op}: {exc}"}
    frames, pair.frames = pair.frames, []
    return pair, {"ok": True, **extra, "frames": frames, "state": pair.state()}


def main() -> None:
    """AD-TRANSPORT: one JSON request per line in, one response per line out."""
    pair: Pair | None = None

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        nonlocal pair
        pair, resp = handle(pair, req)
        return resp

    serving.serve(answer)


if __name__ == "__main__":
    main()
