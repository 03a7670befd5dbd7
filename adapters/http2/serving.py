"""The adapter side of the ``http2`` family (AD-H2-TRANSPORT): the JSON Lines loop every
HTTP/2 adapter shares, the ops our peer carries out (AD-H2-PEER-OPS), the answer of an op
(AD-H2-REPLY) and the loopback link between the peer and an implementation that speaks
over a socket (AD-H2-LOOPBACK).

An adapter supplies a :class:`Harness`: how it starts the implementation against a
fresh :class:`~creditflow.adapters.http2.peer.Peer`, how it moves octets until both
ends rest (AD-H2-QUIESCE), the application ops (``open``, ``send``, ``consume``,
``cancel``) through the library's own API, and the library's own view of its windows.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, NoReturn

from creditflow.adapters import json_lines
from creditflow.adapters.http2 import frames as fr
from creditflow.adapters.http2.peer import Peer

FAMILY = "http2"
Answer = dict[str, Any]
#: AD-H2-OPS: the application's ops (the implementation's side) and the peer's frames.
APP_OPS = ("open", "send", "consume", "cancel")
PEER_OPS = ("data", "window_update", "settings", "rst_stream", "ping")
SESSION_OPS = ("reset", "state")
#: AD-H2-RESET: the peer's settings a ``reset`` may choose, by their RFC 9113 names.
PEER_SETTINGS = {
    "initial_window_size": "SETTINGS_INITIAL_WINDOW_SIZE",
    "max_frame_size": "SETTINGS_MAX_FRAME_SIZE",
}
#: AD-H2-QUIESCE: seconds without an octet either way after which a loopback link rests.
QUIET = 0.06
#: AD-H2-QUIESCE: the longest one op may keep a link busy.
BUSY_LIMIT = 10.0


class Refused(Exception):
    """A well-formed op this adapter cannot carry out now: ``ok: false`` (AD-H2-REFUSE)."""


class Harness(ABC):
    """One implementation under test against our peer (AD-H2-ENDS)."""

    #: the library's name and release (AD-H2-HELLO)
    library: str
    version: str
    #: the implementation's role: ``client`` or ``server`` (the peer takes the other)
    role: str
    #: the application ops this adapter offers
    app_ops: tuple[str, ...] = APP_OPS
    peer: Peer

    @abstractmethod
    def policy(self) -> dict[str, Any]:
        """AD-H2-POLICY: what the implementation declares it does."""

    @abstractmethod
    def start(self, peer_settings: dict[str, int]) -> None:
        """AD-H2-RESET: a fresh connection, prefaces and SETTINGS exchanged, at rest."""

    @abstractmethod
    def pump(self) -> None:
        """AD-H2-QUIESCE: move octets both ways until nothing is in flight."""

    @abstractmethod
    def app(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        """An application op (AD-H2-OPS) through the library's API; extra answer members."""

    def implementation_state(self) -> dict[str, Any]:
        """AD-H2-STATE ``implementation``: the windows as the library reports them
        (``{}`` where it exposes none)."""
        return {}

    def close(self) -> None:
        """Tear the connection (and any process or thread of it) down."""
        return None


#: AD-H2-POLICY: how most implementations treat a window below zero and an empty END_STREAM.
TRACKED_NEGATIVE_WINDOW = "tracked: sends nothing flow-controlled until positive"
EMPTY_END_STREAM = "sent with no window left; accepted with no window left"


def flow_policy(
    credit: dict[str, Any],
    *,
    reset_credit: str,
    discard_credit: str,
    split: str,
    initial_window: int,
    max_frame_size: int,
    negative_window: str = TRACKED_NEGATIVE_WINDOW,
    more: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """AD-H2-POLICY: the policy keys every implementation declares, in one order (the
    initial SETTINGS it sends), then ``more`` of its own (``x-`` keys)."""
    return {
        "credit": credit,
        "reset_credit": reset_credit,
        "discard_credit": discard_credit,
        "split": split,
        "initial_settings": {
            "SETTINGS_INITIAL_WINDOW_SIZE": initial_window,
            "SETTINGS_MAX_FRAME_SIZE": max_frame_size,
        },
        "negative_window": negative_window,
        "empty_end_stream": EMPTY_END_STREAM,
        **(more or {}),
    }


def new_peer(role: str, peer_settings: dict[str, int]) -> Peer:
    """The peer for an implementation in ``role``, with the SETTINGS ``reset`` asked for."""
    # SETTINGS_MAX_CONCURRENT_STREAMS stated: some clients (httpcore) allow one stream
    # until the server names a limit
    initial = {"SETTINGS_MAX_CONCURRENT_STREAMS": 100}
    initial.update({PEER_SETTINGS[k]: v for k, v in peer_settings.items()})
    return Peer("server" if role == "client" else "client", initial)


def stream_id(op: str, req: dict[str, Any]) -> int:
    """AD-H2-OPS: the request's ``stream``, a positive integer, or :class:`Refused`."""
    sid = req.get("stream")
    if not isinstance(sid, int) or isinstance(sid, bool) or sid < 1:
        raise Refused(f"{op}: stream must be a positive integer")
    return sid


def _int(req: dict[str, Any], key: str, default: int | None = None, low: int = 0) -> int:
    value = req.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise Refused(f"{req.get('op')}: {key} must be an integer >= {low}")
    return value


def peer_op(peer: Peer, req: dict[str, Any]) -> None:
    """AD-H2-PEER-OPS: the frame our peer sends for ``req``."""
    op = req["op"]
    if op == "data":
        peer.data(_int(req, "stream", low=1), _int(req, "octets"), bool(req.get("end_stream")))
    elif op == "window_update":
        increment = _int(req, "increment")
        if increment > fr.MAX_WINDOW:  # §6.9: 31 bits
            raise Refused("window_update: an increment is at most 2^31 - 1")
        peer.window_update(_int(req, "stream"), increment)
    elif op == "settings":
        values = {k: v for k, v in req.items() if k in PEER_SETTINGS}
        if not values or len(values) != len(req) - 1 - ("id" in req):
            raise Refused(f"settings: give any of {', '.join(PEER_SETTINGS)} and nothing else")
        peer.send_settings({PEER_SETTINGS[k]: _int(req, k) for k in values})
    elif op == "rst_stream":
        error = req.get("error", "CANCEL")
        if error not in fr.ERROR_CODES:
            raise Refused(f"rst_stream: unknown error code {error!r}")
        peer.rst_stream(_int(req, "stream", low=1), error)
    elif op == "ping":
        peer.ping()


class Server:
    """AD-H2-TRANSPORT: the op loop of one adapter process around a :class:`Harness`."""

    def __init__(self, make: Callable[[], Harness]) -> None:
        self.make = make
        self.harness: Harness | None = None
        self.sample: Harness
        self.sent = 0  # frames of the peer's log already reported

    def hello(self) -> Answer:
        h = self.sample
        return {
            "ok": True,
            "name": h.library,
            "version": h.version,
            "families": [FAMILY],
            "role": h.role,
            "ops": [*SESSION_OPS, *h.app_ops, *PEER_OPS],
            "settings": sorted(PEER_SETTINGS),
            "policy": h.policy(),
        }

    def answer(self, **extra: Any) -> Answer:
        """AD-H2-REPLY: the frames since the last answer and both ends' views."""
        h = self.harness
        assert h is not None
        frames = h.peer.log[self.sent :]
        self.sent = len(h.peer.log)
        return {
            "ok": True,
            "frames": frames,
            "state": {"peer": h.peer.state(), "implementation": h.implementation_state()},
            **extra,
        }

    def handle(self, req: dict[str, Any]) -> Answer:
        op = req.get("op")
        if op == "hello":
            return self.hello()
        if op == "reset":
            given = req.get("settings") or {}
            unknown = sorted(set(given) - set(PEER_SETTINGS))
            if unknown:
                return {"ok": False, "error": f"reset: unknown settings: {', '.join(unknown)}"}
            if self.harness is not None:
                self.harness.close()
            self.harness = self.make()
            self.sent = 0
            self.harness.start({k: int(v) for k, v in given.items()})
            return self.answer(policy=self.harness.policy())
        h = self.harness
        if op not in (*SESSION_OPS, *APP_OPS, *PEER_OPS) or (
            op in APP_OPS and op not in self.sample.app_ops
        ):
            return {"ok": False, "error": f"unknown op {op!r}"}
        if h is None:
            return {"ok": False, "error": f"{op}: no connection: send reset first"}
        try:
            extra: dict[str, Any] = {}
            if op in PEER_OPS:
                peer_op(h.peer, req)
                h.pump()
            elif op in APP_OPS:
                extra = h.app(op, req)
            else:
                h.pump()
        except Refused as exc:
            return {"ok": False, "error": str(exc)}
        return self.answer(**extra)

    def fail(self, what: str, exc: BaseException) -> NoReturn:
        """AD-H2-FAILURE: one line on stderr, exit 3."""
        print(f"{what}: {exc}", file=sys.stderr, flush=True)
        sys.exit(3)

    def run(self) -> None:
        """One JSON request per stdin line, one answer per stdout line (AD-TRANSPORT)."""
        try:
            self.sample = self.make()  # hello answers before any reset
        except (ChildFailed, OSError) as exc:
            self.fail("adapter", exc)
        try:
            for req in json_lines.requests(sys.stdin):
                if not isinstance(req, dict):
                    print(json.dumps({"ok": False, "error": "not an object"}), flush=True)
                    continue
                try:
                    resp = self.handle(req)
                except (ChildFailed, fr.FrameError, OSError) as exc:
                    # AD-H2-FAILURE: the implementation's process or link broke
                    self.fail(self.sample.library, exc)
                json_lines.write_answer(req, resp)
        finally:
            if self.harness is not None:
                self.harness.close()
            if hasattr(self, "sample"):
                self.sample.close()


class Loopback:
    """AD-H2-LOOPBACK: the peer's end of one TCP connection on 127.0.0.1, pumped until it
    has been quiet for :data:`QUIET` seconds (AD-H2-QUIESCE)."""

    def __init__(self, peer: Peer, sock: socket.socket) -> None:
        self.peer = peer
        self.sock = sock
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(sock, selectors.EVENT_READ)
        self.closed = False

    @classmethod
    def connect(cls, peer: Peer, port: int, timeout: float = 10.0) -> Loopback:
        deadline = time.monotonic() + timeout
        while True:
            try:
                return cls(peer, socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def pump(self, quiet: float = QUIET, busy: Callable[[], bool] | None = None) -> None:
        """Write what the peer has, read what comes, until quiet for ``quiet`` seconds
        (and ``busy()``, the implementation's own has-work test, is false), at most
        :data:`BUSY_LIMIT` seconds."""
        limit = time.monotonic() + BUSY_LIMIT
        last = time.monotonic()
        while time.monotonic() < limit:
            out = self.peer.take_output()
            if out and not self.closed:
                try:
                    self.sock.setblocking(True)
                    self.sock.sendall(out)
                except OSError:
                    self.closed = True
                finally:
                    self.sock.setblocking(False)
                last = time.monotonic()
            if self.closed:
                return
            events = self.selector.select(0.01)
            if events:
                try:
                    chunk = self.sock.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    self.closed = True
                    return
                self.peer.receive(chunk)
                last = time.monotonic()
                continue
            if time.monotonic() - last >= quiet and not (busy and busy()):
                return

    def close(self) -> None:
        self.selector.close()
        self.sock.close()


class LoopbackHarness(Harness):
    """A :class:`Harness` whose implementation speaks to our peer over a
    :class:`Loopback` link (AD-H2-LOOPBACK)."""

    link: Loopback | None = None

    def pump(self) -> None:
        """AD-H2-QUIESCE: the loopback link's octets until it rests."""
        assert self.link is not None
        self.link.pump()

    def close_link(self) -> None:
        """Close the loopback link, if there is one."""
        if self.link is not None:
            self.link.close()
            self.link = None

    def peer_opens(self, sid: int) -> dict[str, Any]:
        """AD-H2-OPS ``open`` against a server: our peer (the client) opens stream ``sid``,
        which must be its next one (else :class:`Refused`)."""
        if sid != self.peer.next_stream:
            raise Refused(f"open: the next stream is {self.peer.next_stream}")
        self.peer.open(sid)
        self.pump()
        return {}


def app_octets(op: str, req: dict[str, Any]) -> int:
    """AD-H2-OPS ``send``/``consume``: the request's ``octets`` (0 if absent), an integer
    >= 0, or :class:`Refused`."""
    octets = req.get("octets", 0)
    if not isinstance(octets, int) or octets < 0:
        raise Refused(f"{op}: octets must be an integer >= 0")
    return octets


class ChildFailed(Exception):
    """A helper process of an adapter (Node, nghttpd) died, hung or spoke nonsense."""


class Child:
    """AD-H2-CHILD: a helper process of an adapter (Node's server, nghttpd), in the
    adapter's own process group (so that the driver's group kill, AD-TRANSPORT-GROUP,
    reaches it), stdin/stdout pipes read with a deadline; killed and reaped on
    :meth:`close`."""

    def __init__(self, argv: list[str], timeout: float = 10.0) -> None:
        self.timeout = timeout
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
        except OSError as exc:
            raise ChildFailed(f"cannot start {argv[0]}: {exc.strerror}") from None
        assert self.proc.stdout is not None
        self._out = self.proc.stdout
        self._buf = b""
        self.selector = selectors.DefaultSelector()
        self.selector.register(self._out, selectors.EVENT_READ)

    def line(self) -> dict[str, Any]:
        """The child's next JSON line, within :attr:`timeout` seconds."""
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise ChildFailed(f"no answer within {self.timeout:g} s")
            chunk = os.read(self._out.fileno(), 1 << 16)
            if not chunk:
                raise ChildFailed(f"exited ({self.proc.poll()})")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\n")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise ChildFailed(f"not JSON: {raw[:80]!r}") from None
        if not isinstance(value, dict):
            raise ChildFailed(f"not an object: {raw[:80]!r}")
        return value

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        except OSError as exc:
            raise ChildFailed(f"cannot write: {exc}") from None
        return self.line()

    def close(self) -> None:
        self.selector.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
