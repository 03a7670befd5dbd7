"""The ``httpcore`` adapter (AD-H2-HTTPCORE): httpx's transport library ``httpcore`` as an
HTTP/2 client (``ConnectionPool(http1=False, http2=True)``: prior knowledge over plain
TCP) against our peer as the server, listening on 127.0.0.1 with an OS-chosen port
(AD-H2-LOOPBACK). Each request runs in a thread of its own, as an application would.

``open(stream)`` starts a POST whose body is what ``send`` hands over (httpcore splits
and sends it; ``end_stream`` ends the body); once the body has ended the application
reads the response, one DATA frame's chunk at a time, as far as ``consume`` allows
(httpcore acknowledges each chunk as it is read); ``cancel`` closes the response
early. httpcore connects on the first request, so ``reset`` only listens
(AD-H2-POLICY ``x-connects``).

Run: ``python -m creditflow.adapters.http2.httpcore_client``.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import httpcore

from creditflow.adapters.http2 import serving
from creditflow.adapters.http2.peer import Peer
from creditflow.adapters.http2.serving import Loopback, LoopbackHarness, Refused

#: AD-H2-QUIESCE: how long a request thread may take to reach the wire or to stop.
THREAD_TIMEOUT = 5.0
#: AD-H2-QUIESCE: how long the application waits, at most, for a ``consume`` or a ``send``
#: (a run ends long before; the thread then ends with the connection).
IDLE_LIMIT = 120.0


@dataclass
class Request:
    """One request's application side."""

    body: queue.Queue[tuple[int, bool]] = field(default_factory=queue.Queue)
    body_ended: bool = False
    quota: int = 0
    read: int = 0
    closing: bool = False
    status: int | None = None
    error: str | None = None
    done: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)
    thread: threading.Thread | None = None

    def chunks(self) -> Iterator[bytes]:
        """The request body: what ``send`` hands over, until ``end_stream``."""
        while True:
            octets, end = self.body.get(timeout=IDLE_LIMIT)
            if octets:
                yield bytes(octets)
            if end:
                return


class HttpcoreHarness(LoopbackHarness):
    """AD-H2-HTTPCORE: an httpcore client against our peer (the server)."""

    library = "httpcore"
    role = "client"

    def __init__(self) -> None:
        self.version = version("httpcore")
        self.peer = Peer("server")
        self.link: Loopback | None = None
        self.listener: socket.socket | None = None
        self.pool: httpcore.ConnectionPool | None = None
        self.requests: dict[int, Request] = {}

    def policy(self) -> dict[str, Any]:
        return serving.flow_policy(
            # httpcore acknowledges each DATA frame as the application reads its chunk
            # (h2's WindowManager then sends WINDOW_UPDATE at half the window); it opens
            # its receive windows by 2^24 at once (connection and every stream)
            {
                "policy": "consume",
                "threshold": "half",
                "returns": "read",
                "window": 65_535 + (1 << 24),
            },
            # with receive windows of 2^24 + 65,535 a run of one window cannot tell
            reset_credit="x-large-window",
            discard_credit="x-large-window",
            split="min(chunk, stream window, connection window, SETTINGS_MAX_FRAME_SIZE)",
            initial_window=65_535,
            max_frame_size=16_384,
            negative_window="x-unknown",
            more={
                "x-connects": "on open",
                "x-reads-after-body": True,
                "x-receive-window-increment": 1 << 24,
            },
        )

    def start(self, peer_settings: dict[str, int]) -> None:
        self.peer = serving.new_peer(self.role, peer_settings)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(THREAD_TIMEOUT)
        self.listener = listener
        self.port = listener.getsockname()[1]
        self.pool = httpcore.ConnectionPool(http1=False, http2=True, retries=0)

    def pump(self) -> None:
        """AD-H2-QUIESCE: the loopback link, once the client has connected."""
        if self.link is not None:
            self.link.pump()

    def _run(self, sid: int, req: Request) -> None:
        """The application's thread for one request."""
        assert self.pool is not None
        url = f"http://127.0.0.1:{self.port}/creditflow/{sid}"
        try:
            with self.pool.stream("POST", url, content=req.chunks()) as resp:
                req.status = resp.status
                stream = resp.iter_stream()
                while True:
                    with req.cond:
                        req.cond.wait_for(lambda: req.read < req.quota or req.closing, IDLE_LIMIT)
                        if req.closing:
                            break
                    chunk = next(stream, None)
                    if chunk is None:
                        break
                    req.read += len(chunk)
        except Exception as exc:  # the library's own failure is what the run reports
            req.error = f"{type(exc).__name__}: {exc}"
        finally:
            req.done = True

    def _wait(self, what: str, test: Any) -> None:
        deadline = time.monotonic() + THREAD_TIMEOUT
        while not test():
            if time.monotonic() > deadline:
                raise serving.ChildFailed(f"httpcore did not {what}")
            self.pump() if self.link is not None else time.sleep(0.005)

    def app(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        sid = serving.stream_id(op, req)
        if op == "open":
            expected = 2 * len(self.requests) + 1
            if sid != expected:
                raise Refused(f"open: the next stream is {expected}")
            request = Request()
            self.requests[sid] = request
            request.thread = threading.Thread(
                target=self._run, args=(sid, request), name=f"httpcore-{sid}", daemon=True
            )
            request.thread.start()
            if self.link is None:
                assert self.listener is not None
                conn, _ = self.listener.accept()
                self.link = Loopback(self.peer, conn)
            self._wait(
                f"open stream {sid}",
                lambda: sid in self.peer.streams or request.done,
            )
            self.pump()
            return {}
        held = self.requests.get(sid)
        if held is None:
            raise Refused(f"{op}: no request on stream {sid}")
        octets = serving.app_octets(op, req)
        if op == "send":
            if held.body_ended:
                raise Refused(f"send: the body of stream {sid} has ended")
            held.body_ended = bool(req.get("end_stream"))
            held.body.put((octets, held.body_ended))
        elif op == "consume":
            with held.cond:
                held.quota += octets
                held.cond.notify_all()
        elif op == "cancel":
            if not held.body_ended:
                raise Refused(
                    "cancel: httpcore reads (and so closes) a response only after its body"
                )
            with held.cond:
                held.closing = True
                held.cond.notify_all()
        self.pump()
        return {}

    def implementation_state(self) -> dict[str, Any]:
        """AD-H2-STATE: each request's application state (httpcore exposes no windows)."""
        return {
            "streams": {
                str(s): {
                    "read": r.read,
                    "quota": r.quota,
                    "done": r.done,
                    **({"error": r.error} if r.error else {}),
                }
                for s, r in sorted(self.requests.items())
            }
        }

    def close(self) -> None:
        for request in self.requests.values():
            with request.cond:
                request.closing = True
                request.cond.notify_all()
            request.body.put((0, True))
        self.close_link()
        if self.pool is not None:
            self.pool.close()
        for request in self.requests.values():
            if request.thread is not None:
                request.thread.join(THREAD_TIMEOUT)
        if self.listener is not None:
            self.listener.close()
            self.listener = None


def main() -> None:
    serving.Server(HttpcoreHarness).run()


if __name__ == "__main__":
    main()
