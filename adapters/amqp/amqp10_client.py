"""The ``amqp10-client`` adapter (AD-AMQ-10): RabbitMQ's Erlang AMQP 1.0 client
``amqp10_client`` from the installed release's beams, connected over loopback to a
python-qpid-proton listener that plays the other end of every link.

Two halves: this process speaks the ``amqp`` family of the adapter protocol on
stdin/stdout (AD-AMQ-TRANSPORT) and runs the proton end over a real TCP socket; an
Erlang VM (``adapters/erlang/amqp10_client_adapter.erl``, compiled once into the cache)
runs ``amqp10_client`` and a small application driving its API
(``begin_session``, ``attach_sender_link``/``attach_receiver_link``, ``send_msg``,
``flow_link_credit/4``, ``accept_msg``, ``detach_link``, ``end_session``), answering
this process's requests on its own stdin/stdout.

The ebins are found like the ``rabbitmq`` and ``rabbit-fifo`` adapters': ``--rabbitmq-ebin
DIR`` (the ``amqp10_client`` ebin or any ebin beside it in the plugins folder),
``CREDITFLOW_RABBITMQ_EBIN``, then the Debian layout.

Run: ``python -m creditflow.adapters.amqp.amqp10_client --ebin DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from creditflow.adapters.amqp import serving
from creditflow.adapters.amqp.erlang_half import ErlangHalf
from creditflow.adapters.amqp.frames import frame_record
from creditflow.adapters.amqp.serving import Refused
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT
from creditflow.conformance.families.amqp.protocol import OPS, AmqpAdapter

NAME = "amqp10-client"
MODULE = "amqp10_client_adapter"
INSTALL_HINT = (
    "install it with `sudo apt-get install rabbitmq-server` (`make test` does it) or pass "
    "--rabbitmq-ebin DIR (the amqp10_client ebin, or an ebin beside it)"
)
#: AD-AMQ-10-SETTINGS: what ``reset`` accepts, with the defaults. ``client_receives``
#: 0: amqp10_client holds every link's sender (the proton end receives); 1: it holds
#: the receiver. ``credit_window`` W > 0 (receiving client only): the application calls
#: ``flow_link_credit(Link, W, renew_when)`` once attached; 0: credit by hand.
#: ``incoming_capacity``/``max_frame_size``: the proton end's session (its incoming
#: window when it receives; 0 = proton's defaults).
SETTINGS = {
    "client_receives": 0,
    "credit_window": 0,
    "renew_when": 0,
    "incoming_capacity": 0,
    "max_frame_size": 0,
    "message_size": 10,
}
#: amqp10_client's own incoming window: fixed, re-sent in every FLOW it sends.
CLIENT_INCOMING_WINDOW = 65535


_HALF = ErlangHalf(NAME, "amqp10_client", "amqp10_client_session.beam", MODULE, INSTALL_HINT)


def locate_client_ebin(explicit: str | Path | None = None) -> Path:
    """The ebin holding ``amqp10_client_session.beam``; :class:`AdapterFailure` (missing,
    exit 3) with the install hint otherwise (AD-AMQ-10)."""
    return _HALF.locate_ebin(explicit, "no amqp10_client there or beside it", "amqp10_client")


def erlang_command(ebin: Path) -> list[str]:
    """The Erlang half's command line."""
    return _HALF.command(ebin)


class Amqp10ClientAdapter(AmqpAdapter):
    """``amqp10_client`` behind the ``amqp`` family (AD-AMQ-10)."""

    def __init__(self, ebin: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.ebin = locate_client_ebin(ebin)
        erlang_command(self.ebin)  # compile now: a missing Erlang is one line, exit 3
        argv = [sys.executable, "-m", "creditflow.adapters.amqp.amqp10_client"]
        super().__init__([*argv, "--ebin", str(self.ebin)], name=NAME, timeout=timeout)


# -- the adapter process ---------------------------------------------------------------


class ErlangFailed(Exception):
    """The Erlang half died or did not answer (the adapter fails)."""


def policy(settings: dict[str, int]) -> dict[str, Any]:
    """AD-AMQ-10-POLICY: the model's policies (spec/amqp.md, AMQ-POL-*) the pair follows
    with these settings: the credit policy of the receiving end, how the sender reads a
    FLOW, the receiving end's session window."""
    if settings["client_receives"]:
        w = settings["credit_window"]
        if w:
            credit: dict[str, Any] = {
                "policy": "window",
                "window": w,
                "threshold": settings["renew_when"],
                "count": "outstanding",
                "encoding": "absolute",
                "renew_on": "settle",
                "x-api": "flow_link_credit(Link, W, RenewWhen): a FLOW of W when credit "
                "plus unsettled deliveries is at most RenewWhen",
            }
        else:
            credit = {"policy": "manual", "x-api": "flow_link_credit(Link, credit + n, never)"}
        return {
            "credit": credit,
            "sender_credit": {"formula": "serial", "x-api": "the proton end's Sender"},
            "window": {
                "policy": "x-unbounded",
                "window": CLIENT_INCOMING_WINDOW,
                "x-renewal": "every FLOW it sends re-advertises 65535",
            },
            "x-drain-echo": "by hand: the proton end's Sender.drained()",
        }
    if settings["incoming_capacity"]:
        window: dict[str, Any] = {
            "policy": "capacity",
            "capacity": settings["incoming_capacity"],
            "frame": settings["max_frame_size"] or None,
        }
    else:
        window = {"policy": "x-unbounded", "window": 2**31 - 1}
    return {
        "credit": {"policy": "manual", "x-api": "the proton end's Receiver.flow(n)"},
        "sender_credit": {
            "formula": "serial",
            "x-arithmetic": "delivery-count + link-credit - own delivery-count on plain "
            "integers (no wrap)",
        },
        "window": window,
        "x-sender-window": "send_msg checks link credit only, not the remote incoming window",
        "x-drain-echo": "by the library, at once, when nothing is available",
    }


class Pair:
    """amqp10_client (the Erlang half) and one proton connection over a loopback TCP
    socket (AD-AMQ-10-PEER)."""

    def __init__(self, erl: Erlang, listener: socket.socket, settings: dict[str, int]) -> None:
        # deferred: proton only in the adapter process (the registry imports this module)
        from proton import Transport

        # deferred: proton_end imports proton too
        from creditflow.adapters.amqp.proton_end import traced_connection

        self.erl, self.settings = erl, settings
        receives = bool(settings["client_receives"])
        # AD-AMQ-ENDS: "client" names the end holding the sender
        self.client_side = "server" if receives else "client"
        self.peer_side = "client" if receives else "server"
        self.frames: list[dict[str, Any]] = []
        self.erl_frames: list[dict[str, Any]] = []
        self.erl_state: dict[str, Any] = {}
        self.channels: dict[tuple[str, int], int] = {}
        self.conn, self.transport, self.collector = traced_connection(
            Transport.SERVER, settings["max_frame_size"], self._trace
        )
        self.sessions: dict[str, int] = {}
        self.links: dict[str, Any] = {}  # name -> the proton end's link
        self.held: dict[str, list[Any]] = {}  # proton receiver: read, not yet settled
        self.sent = 0
        self.bytes_in = self.bytes_out = 0
        self.sock: socket.socket | None = None
        mfs = settings["max_frame_size"] or 1048576
        req = {"op": "connect", "port": listener.getsockname()[1], "max_frame_size": mfs}
        got = erl.call(req, self)
        if got.get("ok") is not True:
            raise ErlangFailed(f"connect: {got.get('error')}")
        listener.settimeout(10)
        try:
            self.sock, _addr = listener.accept()
        except OSError as exc:
            raise ErlangFailed(f"the client did not connect: {exc}") from None
        self.sock.setblocking(False)
        self.local_port = _addr[1]
        self.quiesce()

    # -- the proton end ------------------------------------------------------------------

    def _trace(self, _transport: Any, message: str) -> None:
        # deferred: proton only in the adapter process (the registry imports this module)
        from creditflow.adapters.amqp.proton_server import parse_trace

        rec = parse_trace(self.peer_side, message)
        if rec is not None:
            # AD-AMQ-10-FRAMES: channel = the session's ordinal in the run at either end
            key = (rec["dir"], rec["channel"])
            if rec["frame"] == "begin" and key not in self.channels:
                self.channels[key] = sum(1 for d, _ in self.channels if d == rec["dir"])
            rec["channel"] = self.channels.get(key, rec["channel"])
            self.frames.append(rec)

    def pump(self) -> bool:
        """Move what is there: socket → proton, proton's reactions, proton → socket."""
        moved = False
        if self.sock is None:
            return False
        while True:
            cap = self.transport.capacity()
            if cap <= 0:
                break
            try:
                data = self.sock.recv(min(cap, 65536))
            except BlockingIOError:
                break
            if not data:
                self.transport.close_tail()
                break
            self.bytes_in += len(data)
            self.transport.push(data)
            moved = True
        if self._handle():
            moved = True
        while True:
            n = self.transport.pending()
            if n <= 0:
                break
            out = self.transport.peek(n) or b""
            self.sock.setblocking(True)
            try:
                self.sock.sendall(out)
            finally:
                self.sock.setblocking(False)
            self.transport.pop(len(out))
            self.bytes_out += len(out)
            moved = True
            self._handle()
        return moved

    def _handle(self) -> bool:
        """The proton end's applications (as the proton adapter's): it opens what the
        client opens, its receiver reads every complete delivery and keeps it unsettled
        until ``settle``, its sender settles what the client settled."""
        # deferred: proton only in the adapter process (the registry imports this module)
        from creditflow.adapters.amqp.proton_end import react

        return react(
            self.collector,
            self.settings["incoming_capacity"],
            self._peer_link_opened,
            lambda dlv: self.held.setdefault(dlv.link.name, []).append(dlv),
            lambda dlv: bool(dlv.remote_state and not dlv.settled),
        )

    def _peer_link_opened(self, link: Any) -> None:
        self.links[link.name] = link

    def wait(self, until: float) -> None:
        """Block until the socket is readable or ``until``; then pump."""
        if self.sock is None:
            return
        left = max(0.0, until - time.monotonic())
        select.select([self.sock], [], [], min(left, 0.05))
        self.pump()

    def quiesce(self) -> None:
        """AD-AMQ-10-QUIESCE: pump until the Erlang half took every byte proton wrote,
        proton took every byte the client wrote, and neither end has anything to do."""
        for _ in range(200):
            self.pump()
            out_before = self.bytes_out
            got = self.erl.call(
                {"op": "idle", "received": self.bytes_out, "local_port": self.local_port}, self
            )
            if got.get("ok") is not True:
                raise ErlangFailed(f"idle: {got.get('error')}")
            self.erl_frames.extend(got.get("frames") or [])
            self.erl_state = got.get("state") or {}
            deadline = time.monotonic() + 5
            while self.bytes_in < int(got.get("sent", 0)) and time.monotonic() < deadline:
                self.wait(deadline)
            moved = self.pump()
            if not moved and self.bytes_out == out_before and self.transport.pending() <= 0:
                return
        raise ErlangFailed("the pair did not come to rest")

    def take_frames(self) -> list[dict[str, Any]]:
        """AD-AMQ-FRAMES of both ends since the last answer: the proton end's in its
        order, then the client's in its session's order (AD-AMQ-10-FRAMES)."""
        own = [
            frame_record(
                self.client_side, str(f["dir"]), int(f["channel"]), str(f["frame"]), dict(f)
            )
            for f in self.erl_frames
        ]
        frames, self.frames, self.erl_frames = self.frames + own, [], []
        return frames

    # -- ops (AD-AMQ-OPS) --------------------------------------------------------------

    def _erl(self, req: dict[str, Any]) -> None:
        resp = self.erl.call(req, self)
        if resp.get("ok") is not True:
            raise Refused(str(resp.get("error")))

    def begin(self, name: str) -> None:
        serving.new_session(self.sessions, name)
        self._erl({"op": "begin", "session": name})
        self.sessions[name] = len(self.sessions)
        self.quiesce()

    def attach(self, session: str, name: str) -> None:
        role = "receiver" if self.settings["client_receives"] else "sender"
        self._erl(
            {
                "op": "attach",
                "session": session,
                "link": name,
                "role": role,
                "message_size": self.settings["message_size"],
            }
        )
        self.quiesce()
        if role == "receiver" and self.settings["credit_window"]:
            # AD-AMQ-10-POLICY: the application's one call for a credit window
            self._erl(
                {
                    "op": "flow",
                    "link": name,
                    "credit": self.settings["credit_window"],
                    "renew_when": self.settings["renew_when"],
                    "drain": False,
                }
            )
            self.quiesce()

    def _peer_link(self, name: str) -> Any:
        lk = self.links.get(name)
        if lk is None:
            raise Refused(f"no attached link {name!r}")
        return lk

    def grant(self, name: str, credit: int, drain: bool) -> None:
        if self.settings["client_receives"]:
            if self.settings["credit_window"]:
                raise Refused("credit is by the client's window policy, not by hand")
            self._erl({"op": "flow", "link": name, "add": credit, "drain": drain})
        elif drain:
            self._peer_link(name).drain(credit)
        else:
            self._peer_link(name).flow(credit)
        self.quiesce()

    def transfer(self, name: str) -> None:
        if self.settings["client_receives"]:
            # deferred: proton only in the adapter process (the registry imports this module)
            from proton import Message

            snd = self._peer_link(name)
            snd.delivery(str(self.sent).encode())
            self.sent += 1
            # an AMQP message (the client decodes what it receives): a data section
            snd.send(Message(body=b"x" * self.settings["message_size"]).encode())
            snd.advance()
        else:
            self._erl({"op": "transfer", "link": name})
        self.quiesce()

    def drained(self, name: str) -> int:
        n = 0
        if self.settings["client_receives"]:
            n = int(self._peer_link(name).drained())
        # else: amqp10_client answers a drain by itself; the application has no call
        self.quiesce()
        return n

    def settle(self, name: str, count: int, keep: int) -> None:
        if self.settings["client_receives"]:
            self._erl({"op": "settle", "link": name, "count": count, "keep": keep})
        else:
            # deferred: proton only in the adapter process (the registry imports this module)
            from creditflow.adapters.amqp.proton_end import accept_and_settle

            accept_and_settle(name, self.held.get(name, []), count, keep)
        self.quiesce()

    def detach(self, name: str) -> None:
        self._erl({"op": "detach", "link": name})
        self.quiesce()

    def end(self, name: str) -> None:
        serving.known_session(self.sessions, name)
        self._erl({"op": "end", "session": name})
        self.quiesce()

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def state(self) -> dict[str, Any]:
        """AD-AMQ-10-STATE: the client's own view (from its session process) and the
        proton end's, per link end and session end."""
        # deferred: proton only in the adapter process (the registry imports this module)
        from creditflow.adapters.amqp.proton_end import sender_state

        client_links = dict(self.erl_state.get("links") or {})
        links: dict[str, Any] = {}
        for name, own in client_links.items():
            peer = self.links.get(name)
            if self.settings["client_receives"]:
                entry: dict[str, Any] = {"receiver": own}
                if peer is not None:
                    entry["sender"] = sender_state(peer)
            else:
                entry = {"sender": own}
                if peer is not None:
                    entry["receiver"] = {
                        "credit": peer.credit,
                        "unsettled": len(self.held.get(name, [])),
                        "drain": peer.drain_mode,
                    }
            links[name] = entry
        sessions: dict[str, Any] = {}
        for name, own in dict(self.erl_state.get("sessions") or {}).items():
            sessions[name] = {self.client_side: own}
        out: dict[str, Any] = {"links": links, "sessions": sessions}
        if self.erl_state.get("crashed"):
            out["crashed"] = self.erl_state["crashed"]
        return out


class Erlang:
    """The Erlang half: one request line out, one answer line back, pumping the proton
    end meanwhile (the client may wait for it, e.g. an attach waits for BEGIN)."""

    def __init__(self, ebin: Path) -> None:
        fd, self.log = tempfile.mkstemp(prefix="creditflow-amqp10-", suffix=".log")
        try:
            self.proc = subprocess.Popen(
                erlang_command(ebin), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=fd
            )
        finally:
            os.close(fd)
        self.buf = b""

    def call(self, req: dict[str, Any], pair: Pair | None = None, timeout: float = 20) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if time.monotonic() > deadline:
                raise ErlangFailed(f"no answer to {req.get('op')} within {timeout} s")
            waiting: list[Any] = [fd]
            if pair is not None and pair.sock is not None:
                waiting.append(pair.sock)
            ready, _, _ = select.select(waiting, [], [], 0.05)
            if pair is not None:
                pair.pump()
            if fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    tail = Path(self.log).read_text(errors="replace")[-400:].strip()
                    raise ErlangFailed(f"the Erlang half exited: {tail or 'no output'}")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        Path(self.log).unlink(missing_ok=True)


class Server:
    """The adapter protocol's side of this process (AD-AMQ-10-OPS)."""

    def __init__(self, ebin: Path) -> None:
        self.erl = Erlang(ebin)
        self.info = self.erl.call({"op": "hello"})
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.pair: Pair | None = None

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "hello":  # AD-AMQ-10-HELLO
            # deferred: proton only in the adapter process (the registry imports this module)
            from proton import VERSION

            version = str(self.info.get("version"))
            implementation = {
                "module": self.info.get("module"),
                "md5": self.info.get("md5"),
                "otp": self.info.get("otp"),
                "peer": "python-qpid-proton " + ".".join(str(p) for p in VERSION),
            }
            name = f"amqp10_client {version}"
            return serving.hello_answer(
                name, version, OPS, SETTINGS, policy, implementation=implementation
            )
        if op not in OPS:
            return {"ok": False, "error": f"unknown op {op!r}"}
        if op == "reset":  # AD-AMQ-RESET
            try:
                settings = serving.reset_settings(req, SETTINGS)
            except serving.SettingsRefused as exc:
                return {"ok": False, "error": str(exc)}
            if settings["credit_window"] and not settings["renew_when"] < settings["credit_window"]:
                return {"ok": False, "error": "renew_when must be below credit_window"}
            if self.pair is not None:
                self.pair.close()
            self.pair = Pair(self.erl, self.listener, settings)
            out = {"ok": True, "policy": policy(settings)}
            return {**out, "frames": self.pair.take_frames(), "state": self.pair.state()}
        pair = self.pair
        if pair is None:
            return {"ok": False, "error": f"{op} before reset"}
        extra: dict[str, Any] = {}
        try:
            if op in ("flow", "drain"):
                pair.grant(str(req["link"]), int(req.get("credit", 0)), op == "drain")
            elif op == "offered":
                raise Refused("amqp10_client has no offered (available) API")
            elif op == "drained":
                extra["drained"] = pair.drained(str(req["link"]))
            elif op == "state":
                pair.quiesce()
            else:
                serving.run_link_op(pair, op, req)
        except (Refused, KeyError, ValueError, TypeError) as exc:
            return {"ok": False, "error": f"{op}: {exc}"}
        return {"ok": True, **extra, "frames": pair.take_frames(), "state": pair.state()}


def main() -> None:
    """AD-TRANSPORT: one JSON request per line in, one answer per line out."""
    parser = argparse.ArgumentParser(prog="amqp10_client adapter")
    parser.add_argument("--ebin", required=True)
    args = parser.parse_args()
    try:
        server = Server(Path(args.ebin))
    except (ErlangFailed, AdapterFailure, OSError) as exc:
        print(f"amqp10-client: {exc}", file=sys.stderr)
        sys.exit(3)
    serving.serve(server.handle, fatal=(ErlangFailed,), prefix="amqp10-client")
    server.erl.close()


if __name__ == "__main__":
    main()
