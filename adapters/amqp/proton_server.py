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
from proton import Collector, Connection, Delivery, Transport

from creditflow.adapters.amqp import serving
from creditflow.adapters.amqp.frames import frame_record
from creditflow.adapters.amqp.proton_end import (
    accept_and_settle,
    react,
    receiver_state,
    sender_state,
    traced_connection,
)
from creditflow.adapters.amqp.serving import Refused
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
            mode = Transport.SERVER if side == "server" else Transport.CLIENT
            self.ends[side] = traced_connection(
                mode, settings["max_frame_size"], self._tracer(side)
            )
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
        return react(
            self.ends[side][2],
            self.settings["incoming_capacity"],
            lambda link: serving.pair_receiver(self.links, link, link.name),
            lambda dlv: self.received.setdefault(dlv.link.name, []).append(dlv),
            lambda dlv: bool(dlv.settled),  # proton: settled = settled by the peer
        )

    # -- ops (AD-AMQ-OPS) ------------------------------------------------------------------

    def begin(self, name: str) -> None:
        serving.new_session(self.sessions, name)
        ssn = self.ends["client"][0].session()
        if self.settings["incoming_capacity"]:
            ssn.incoming_capacity = self.settings["incoming_capacity"]
        ssn.open()
        self.sessions[name] = ssn
        self.pump()

    def attach(self, session: str, name: str) -> None:
        snd = serving.new_link(self.sessions, self.links, session, name).sender(name)
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
        accept_and_settle(name, self.received.get(name, []), count, keep)
        self.pump()

    def detach(self, name: str) -> None:
        self._link(name)[0].close()
        self.pump()

    def end(self, name: str) -> None:
        serving.known_session(self.sessions, name).close()
        self.pump()

    def state(self) -> dict[str, Any]:
        """AD-AMQ-STATE: what proton's API shows of each end."""
        links: dict[str, Any] = {}
        for name, (snd, rcv, _ssn) in self.links.items():
            entry: dict[str, Any] = {"sender": sender_state(snd)}
            if rcv is not None:
                entry["receiver"] = receiver_state(rcv, len(self.received.get(name, [])))
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


def hello() -> dict[str, Any]:
    """AD-AMQ-HELLO."""
    return serving.hello_answer(f"python-qpid-proton {version()}", version(), OPS, SETTINGS, policy)


def handle(pair: Pair | None, req: dict[str, Any]) -> tuple[Pair | None, dict[str, Any]]:
    """One request (AD-AMQ-OPS); the pair after it and the answer."""
    return serving.answer_pair_request(pair, req, hello, OPS, SETTINGS, policy, Pair, run_op)


def run_op(pair: Pair, op: str, req: dict[str, Any]) -> dict[str, Any]:
    """An op after ``reset`` (AD-AMQ-OPS); the answer's extra members."""
    if op == "flow":
        pair.flow(str(req["link"]), int(req["credit"]))
    elif op == "drain":
        pair.drain(str(req["link"]), int(req.get("credit", 0)))
    elif op == "offered":
        pair.offered(str(req["link"]), int(req["available"]))
    elif op == "drained":
        return {"drained": pair.drained(str(req["link"]))}
    else:
        serving.run_link_op(pair, op, req)
    return {}


def main() -> None:
    """AD-TRANSPORT: one JSON request per line in, one response per line out."""
    serving.serve_pair(handle)


if __name__ == "__main__":
    main()
