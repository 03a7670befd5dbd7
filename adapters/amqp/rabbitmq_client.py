"""The ``rabbitmq-amqp1.0`` adapter's process (AD-AMQ-RMQ): a python-qpid-proton client
connected over loopback TCP to a running RabbitMQ broker's AMQP 1.0 plugin
(``rabbitmq_amqp1_0``), speaking the ``amqp`` family of the adapter protocol on
stdin/stdout (AD-AMQ-OPS). The broker is started by the driver
(:mod:`creditflow.adapters.amqp.rabbitmq_plugin`); this process only takes ``--port``.

The run's link L is the broker's **outgoing** link from a queue of the run's own to
proton's receiver (AD-AMQ-RMQ-ENDS): the broker holds the sending end and is reported
as side ``client``, proton the receiving end, side ``server``. Every frame is read once,
from proton's frame trace, and reported twice, as the one end sent it and the other
received it (AD-AMQ-RMQ-FRAMES). ``transfer`` publishes one message into the queue over
a second, unreported connection and waits for the broker's confirm; the broker answers
drains by itself, so ``drained`` does nothing (AD-AMQ-RMQ-OPS). After every op the
socket is read until it has been quiet for :data:`QUIET` seconds (AD-AMQ-RMQ-QUIESCE).

Run: ``python -m creditflow.adapters.amqp.rabbitmq_client --port PORT``.
"""

from __future__ import annotations

import argparse
import secrets
import selectors
import socket
import sys
import time
from typing import Any

from proton import Collector, Connection, Delivery, Endpoint, Event, Message, Transport

from creditflow.adapters.amqp import serving
from creditflow.adapters.amqp.frames import frame_record
from creditflow.adapters.amqp.proton_end import receiver_state
from creditflow.adapters.amqp.proton_server import parse_trace
from creditflow.adapters.amqp.rabbitmq_policy import SETTINGS, broker_policy
from creditflow.adapters.amqp.serving import Refused, settled_slice
from creditflow.conformance.families.amqp.protocol import OPS

#: AD-AMQ-RMQ-QUIESCE: seconds without a byte either way after which the link is at rest.
QUIET = 0.25
#: AD-AMQ-RMQ-QUIESCE: the quiet period after an answer the op waits for (open, begin,
#: attach), after which the broker sends nothing unasked.
SETTLE = 0.05
#: AD-AMQ-RMQ-SETTINGS: how long a queue declaration is retried (a quorum queue on a
#: node just started).
DECLARE_TIMEOUT = 20.0
#: AD-AMQ-RMQ-QUIESCE: the longest an op may keep the socket busy.
BUSY_LIMIT = 20.0
#: The ops this adapter offers (no ``offered``: the broker is the sender).
ADAPTER_OPS = tuple(o for o in OPS if o != "offered")


class BrokerGone(Exception):
    """The broker closed the publisher's connection or sent it an error, or did not come
    to rest (an adapter failure)."""


class BrokerEnded(Refused):
    """The broker ended the run's session, link or connection with an error: the op is
    answered ``ok: false`` with the broker's error, and so is every later op of the run
    (AD-AMQ-RMQ-ENDED)."""


class Wire:
    """One proton connection over a socket to the broker; pumped by :meth:`pump`."""

    def __init__(self, port: int, settings: dict[str, int], frames: list[dict] | None) -> None:
        self.settings = settings
        self.frames = frames
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setblocking(False)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.transport = Transport()
        if settings.get("max_frame_size"):
            self.transport.max_frame_size = settings["max_frame_size"]
        if frames is not None:
            self.transport.trace(Transport.TRACE_FRM)
            self.transport.tracer = self._trace
        sasl = self.transport.sasl()
        sasl.allowed_mechs("PLAIN")
        sasl.allow_insecure_mechs = True  # loopback only
        self.conn = Connection()
        self.conn.container = f"creditflow-{secrets.token_hex(3)}"
        self.conn.hostname = "localhost"
        self.conn.user, self.conn.password = "guest", "guest"
        self.collector = Collector()
        self.conn.collect(self.collector)
        self.transport.bind(self.conn)
        self.conn.open()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.sock, selectors.EVENT_READ)
        self.received: list[Delivery] = []
        self.error: str | None = None

    def _trace(self, _transport: Transport, message: str) -> None:
        """AD-AMQ-RMQ-FRAMES: a frame proton sent was received by the broker, and the
        other way round; proton is the receiving end (``server``), the broker the
        sending end (``client``)."""
        rec = parse_trace("server", message)
        if rec is None or self.frames is None:
            return
        fields = {k: v for k, v in rec.items() if k not in ("side", "dir", "frame", "channel")}
        mirror = frame_record(
            "client",
            "received" if rec["dir"] == "sent" else "sent",
            rec["channel"],
            rec["frame"],
            fields,
        )
        self.frames.extend([rec, mirror] if rec["dir"] == "sent" else [mirror, rec])

    def _events(self) -> None:
        """The receiving application reads every complete delivery (unsettled until
        ``settle``); an error from the broker is a failure."""
        while self.collector.peek():
            ev: Any = self.collector.peek()
            t = ev.type
            if t == Event.DELIVERY:
                dlv = ev.delivery
                link = dlv.link
                if link.is_receiver and dlv.readable and not dlv.partial and link.current == dlv:
                    link.recv(dlv.pending)
                    link.advance()
                    self.received.append(dlv)
            elif t in (
                Event.CONNECTION_REMOTE_CLOSE,
                Event.SESSION_REMOTE_CLOSE,
                Event.LINK_REMOTE_CLOSE,
                Event.TRANSPORT_ERROR,
            ):
                cond = None
                for holder in ("link", "session", "connection", "transport"):
                    obj = getattr(ev, holder, None)
                    cond = getattr(obj, "remote_condition", None) or getattr(obj, "condition", None)
                    if cond is not None:
                        break
                if cond is not None:
                    self.error = f"{cond.name}: {str(cond.description)[:120]}"
            self.collector.pop()

    def _move(self, wait: float) -> bool:
        """Write what proton has pending, read what the socket has (waiting up to
        ``wait``); whether a byte moved."""
        moved = False
        while (n := self.transport.pending()) > 0:
            data = self.transport.peek(n) or b""
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                break
            self.transport.pop(sent)
            moved = True
        if self.selector.select(wait):
            try:
                got: bytes | None = self.sock.recv(max(self.transport.capacity(), 1))
            except BlockingIOError:
                got = None
            if got == b"":
                self.transport.close_tail()
                self.error = self.error or "the broker closed the connection"
                raise (BrokerEnded if self.frames is not None else BrokerGone)(self.error)
            if got:
                self.transport.push(got)
                moved = True
        self._events()
        if self.error is not None:
            raise (BrokerEnded if self.frames is not None else BrokerGone)(self.error)
        return moved

    def pump(self, until: Any = None, quiet: float = QUIET) -> None:
        """AD-AMQ-RMQ-QUIESCE: move bytes until ``until()`` holds (if given) and the
        socket has been quiet for ``quiet`` seconds."""
        start = last = time.monotonic()
        while True:
            now = time.monotonic()
            if now - start > BUSY_LIMIT:
                raise BrokerGone(f"not at rest after {BUSY_LIMIT:.0f} s")
            if self._move(0.02):
                last = time.monotonic()
                continue
            if until is not None and not until():
                continue
            if time.monotonic() - last >= quiet:
                return

    def close(self) -> None:
        try:
            self.conn.close()
            self._move(0.05)
        except (BrokerGone, BrokerEnded, OSError):
            pass  # closing what the broker may have ended already
        self.selector.close()
        self.sock.close()


class BrokerRun:
    """One run against the broker (AD-AMQ-RESET): a traced connection holding the run's
    receiver, and a publisher connection for ``transfer``."""

    def __init__(self, port: int, settings: dict[str, int], publisher: Wire) -> None:
        self.settings = settings
        self.port = port
        self.frames: list[dict[str, Any]] = []
        self.wire = Wire(port, settings, self.frames)
        self.publisher = publisher
        self.queue = f"cf-{secrets.token_hex(4)}"
        self.sessions: dict[str, Any] = {}
        self.links: dict[str, Any] = {}  # name -> (receiver, session name)
        self.publishers: dict[str, Any] = {}
        self.sent = 0
        self.ended: str | None = None  # the broker's error that ended the run
        self.wire.pump(lambda: self.wire.conn.state & Endpoint.REMOTE_ACTIVE, quiet=SETTLE)

    def begin(self, name: str) -> None:
        serving.new_session(self.sessions, name)
        ssn = self.wire.conn.session()
        ssn.open()
        self.sessions[name] = ssn
        self.wire.pump(lambda: ssn.state & Endpoint.REMOTE_ACTIVE, quiet=SETTLE)

    def attach(self, session: str, name: str) -> None:
        ssn = serving.new_link(self.sessions, self.links, session, name)
        address = self._declare(f"{self.queue}-{name}")
        rcv = ssn.receiver(name)
        rcv.source.address = address
        rcv.open()
        self.links[name] = (rcv, session)
        self.wire.pump(lambda: rcv.state & Endpoint.REMOTE_ACTIVE, quiet=SETTLE)

    def _declare(self, queue: str) -> str:
        """AD-AMQ-RMQ-SETTINGS: the link's queue, declared over AMQP 0-9-1 (a quorum queue
        with ``quorum_queue`` 1, else a classic one); its address names it without
        declaring it again."""
        import pika

        params = pika.ConnectionParameters(host="127.0.0.1", port=self.port)
        deadline = time.monotonic() + DECLARE_TIMEOUT
        while True:
            try:
                with pika.BlockingConnection(params) as conn:
                    if self.settings.get("quorum_queue"):
                        args = {"x-queue-type": "quorum"}
                        conn.channel().queue_declare(queue, durable=True, arguments=args)
                    else:
                        conn.channel().queue_declare(queue, durable=False)
                return f"/amq/queue/{queue}"
            except pika.exceptions.AMQPError as exc:
                # a node just started may refuse quorum queues for a moment
                if time.monotonic() > deadline:
                    raise BrokerGone(f"cannot declare queue {queue}: {exc!r}"[:300]) from None
                time.sleep(0.5)

    def _rcv(self, name: str) -> Any:
        if name not in self.links:
            raise Refused(f"no attached link {name!r}")
        return self.links[name][0]

    def flow(self, name: str, credit: int) -> None:
        self._rcv(name).flow(credit)
        self.wire.pump()

    def drain(self, name: str, credit: int) -> None:
        self._rcv(name).drain(credit)
        self.wire.pump()

    def transfer(self, name: str) -> None:
        """AD-AMQ-RMQ-OPS: one message into the link's queue, confirmed by the broker."""
        self._rcv(name)
        pub = self.publishers.get(name)
        if pub is None:
            pub = self.publisher.conn.session()
            pub.open()
            pub = pub.sender(f"pub-{self.queue}-{name}")
            pub.target.address = f"/amq/queue/{self.queue}-{name}"
            pub.open()
            self.publishers[name] = pub
        self.publisher.pump(lambda: pub.credit > 0, quiet=0.0)
        dlv = pub.delivery(str(self.sent))
        self.sent += 1
        pub.send(Message(body=b"x" * self.settings["message_size"]).encode())
        pub.advance()
        self.publisher.pump(lambda: dlv.remote_state == Delivery.ACCEPTED, quiet=0.0)
        dlv.settle()
        self.wire.pump()

    def settle(self, name: str, count: int, keep: int) -> None:
        rcv = self._rcv(name)
        held = [d for d in self.wire.received if d.link == rcv]
        for dlv in settled_slice(name, held, count, keep):
            dlv.update(Delivery.ACCEPTED)
            dlv.settle()
            self.wire.received.remove(dlv)
        self.wire.pump()

    def detach(self, name: str) -> None:
        self._rcv(name).close()
        self.wire.pump()

    def end(self, name: str) -> None:
        serving.known_session(self.sessions, name).close()
        self.wire.pump()

    def state(self) -> dict[str, Any]:
        """AD-AMQ-STATE: proton's view of its receiving end (the broker's end shows only
        on the wire)."""
        links = {
            name: {
                "receiver": receiver_state(rcv, sum(1 for d in self.wire.received if d.link == rcv))
            }
            for name, (rcv, _s) in self.links.items()
        }
        sessions = {
            name: {
                "server": {
                    "incoming_capacity": ssn.incoming_capacity,
                    "incoming_bytes": ssn.incoming_bytes,
                }
            }
            for name, ssn in self.sessions.items()
        }
        return {"links": links, "sessions": sessions}

    def close(self) -> None:
        for pub in self.publishers.values():
            pub.close()
        self.wire.close()


class Adapter:
    """The process's state: the broker's port, the publisher connection, the run."""

    def __init__(self, port: int, version: str) -> None:
        self.port = port
        self.run: BrokerRun | None = None
        self.publisher = Wire(port, SETTINGS, None)
        conn = self.publisher.conn
        self.publisher.pump(lambda: conn.state & Endpoint.REMOTE_ACTIVE, quiet=0.0)
        # AD-AMQ-RMQ-HELLO: the release the broker names in its OPEN (the plugin's)
        props = {str(k): v for k, v in (conn.remote_properties or {}).items()}
        self.version = str(props.get("version", version))

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "hello":
            name = f"rabbitmq-amqp1.0 {self.version}"
            return serving.hello_answer(name, self.version, ADAPTER_OPS, SETTINGS, broker_policy)
        if op not in ADAPTER_OPS:
            return {"ok": False, "error": f"unknown op {op!r}"}
        if op == "reset":
            try:
                settings = serving.reset_settings(req, SETTINGS)
            except serving.SettingsRefused as exc:
                return {"ok": False, "error": str(exc)}
            if self.run is not None:
                self.run.close()
            self.run = BrokerRun(self.port, settings, self.publisher)
            frames, self.run.frames[:] = list(self.run.frames), []
            return {
                "ok": True,
                "policy": broker_policy(settings),
                "frames": frames,
                "state": self.run.state(),
            }
        run = self.run
        if run is None:
            return {"ok": False, "error": f"{op} before reset"}
        if run.ended is not None:
            return {"ok": False, "error": f"{op}: the broker ended the run: {run.ended}"}
        try:
            if op == "flow":
                run.flow(str(req["link"]), int(req["credit"]))
            elif op == "drain":
                run.drain(str(req["link"]), int(req.get("credit", 0)))
            elif op == "drained":
                run._rcv(str(req["link"]))  # AD-AMQ-RMQ-OPS: the broker answers by itself
                run.wire.pump()
            else:
                serving.run_link_op(run, op, req)
        except BrokerEnded as exc:
            run.ended = str(exc)
            frames, run.frames[:] = list(run.frames), []
            error = f"{op}: the broker ended the session with {exc}"
            return {"ok": False, "error": error, "frames": frames}
        except (Refused, KeyError, ValueError, TypeError) as exc:
            return {"ok": False, "error": f"{op}: {exc}"}
        frames, run.frames[:] = list(run.frames), []
        return {"ok": True, "frames": frames, "state": run.state()}


def main() -> None:
    """AD-TRANSPORT: one JSON request per line in, one response per line out; a broker
    that closes or errs ends the process (an adapter failure, exit 3)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--version", default="?")
    args = parser.parse_args()
    try:
        adapter = Adapter(args.port, args.version)
    except (BrokerGone, OSError) as exc:
        print(f"rabbitmq-amqp1.0: no AMQP 1.0 broker on port {args.port}: {exc}", file=sys.stderr)
        sys.exit(3)
    serving.serve(adapter.handle, fatal=(BrokerGone, OSError), prefix="rabbitmq-amqp1.0")


if __name__ == "__main__":
    main()
