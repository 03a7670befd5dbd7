"""The ``hypercorn`` adapter (AD-H2-HYPERCORN): hypercorn serving an ASGI application on a
listening socket of ours (127.0.0.1, OS-chosen port, handed over as ``fd://``), plain TCP
with prior knowledge; our peer is the client over loopback (AD-H2-LOOPBACK). hypercorn
runs on its own asyncio loop in a thread of the adapter process.

The application knows a request's stream by its path (``/creditflow/<stream>``, the
peer's). It starts the ``200`` response on the first ``send`` and sends ``send``'s
octets as one ``http.response.body`` (hypercorn splits and schedules them); it calls
``receive()`` only as far as ``consume`` allows (AD-H2-OPS), so what hypercorn does with
DATA the application has not read is hypercorn's own.

Run: ``python -m creditflow.adapters.http2.hypercorn_server``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, cast

from hypercorn.asyncio import serve
from hypercorn.config import Config

from creditflow.adapters.http2 import serving
from creditflow.adapters.http2.peer import Peer
from creditflow.adapters.http2.serving import Loopback, LoopbackHarness, Refused

#: AD-H2-QUIESCE: how long the adapter waits for the application's loop to take a command.
COMMAND_TIMEOUT = 5.0


@dataclass
class AppStream:
    """One request as the ASGI application holds it."""

    quota: int = 0  # octets ``consume`` allowed the application to read
    read: int = 0  # octets it has read
    messages: int = 0  # http.request messages it has received
    responded: bool = False
    ended: bool = False
    outbox: asyncio.Queue[tuple[int, bool]] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class HypercornHarness(LoopbackHarness):
    """AD-H2-HYPERCORN: hypercorn against our peer (the client)."""

    library = "hypercorn"
    role = "server"
    app_ops = ("open", "send", "consume")

    def __init__(self) -> None:
        self.version = version("hypercorn")
        self.peer = Peer("client")
        self.link: Loopback | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.streams: dict[int, AppStream] = {}
        self.config = Config()
        self.stop: asyncio.Event | None = None

    def policy(self) -> dict[str, Any]:
        return serving.flow_policy(
            # hypercorn acknowledges each DATA frame once it has queued it for the
            # application (h2's WindowManager: a WINDOW_UPDATE at half the window); its
            # application queue holds max_app_queue_size messages
            {"policy": "receipt", "threshold": "half", "returns": "queued"},
            reset_credit="x-untested",
            discard_credit="connection",
            split="h2 through hypercorn: min(queued, stream window, connection window, "
            "SETTINGS_MAX_FRAME_SIZE)",
            initial_window=65_535,
            max_frame_size=self.config.h2_max_inbound_frame_size,
            more={"x-app-queue": self.config.max_app_queue_size},
        )

    async def asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI application (see the module's docstring)."""
        if scope["type"] != "http":
            return
        sid = int(str(scope["path"]).rsplit("/", 1)[-1] or 0)
        entry = self.streams.setdefault(sid, AppStream())
        entry.outbox = asyncio.Queue()

        async def reader() -> None:
            while True:
                while entry.read >= entry.quota:
                    entry.wake.clear()
                    await entry.wake.wait()
                message = await receive()
                entry.messages += 1
                entry.read += len(message.get("body", b""))
                if message["type"] != "http.request" or not message.get("more_body"):
                    return

        task = asyncio.ensure_future(reader())
        try:
            while True:
                octets, end = await entry.outbox.get()
                if not entry.responded:
                    entry.responded = True
                    await send({"type": "http.response.start", "status": 200, "headers": []})
                await send(
                    {"type": "http.response.body", "body": bytes(octets), "more_body": not end}
                )
                if end:
                    entry.ended = True
                    await task
                    return
        finally:
            task.cancel()

    def start(self, peer_settings: dict[str, int]) -> None:
        self.peer = serving.new_peer(self.role, peer_settings)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        listener.listen(4)
        self.listener = listener
        # plain TCP: ``bind`` (no TLS); hypercorn owns (and closes) a duplicate
        self.config.bind = [f"fd://{os.dup(listener.fileno())}"]
        self.config.accesslog = None
        self.config.errorlog = None
        self.config.graceful_timeout = 0.1
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self.loop = loop
            self.stop = asyncio.Event()
            ready.set()
            stop = self.stop
            loop.run_until_complete(
                serve(cast(Any, self.asgi), self.config, shutdown_trigger=stop.wait, mode="asgi")
            )
            loop.close()

        self.thread = threading.Thread(target=run, name="hypercorn", daemon=True)
        self.thread.start()
        ready.wait(COMMAND_TIMEOUT)
        self.link = Loopback.connect(self.peer, port)
        self.pump()

    def _call(self, fn: Any) -> None:
        """Run ``fn`` on hypercorn's loop and wait for it."""
        assert self.loop is not None
        done = threading.Event()

        def go() -> None:
            try:
                fn()
            finally:
                done.set()

        self.loop.call_soon_threadsafe(go)
        if not done.wait(COMMAND_TIMEOUT):
            raise serving.ChildFailed("hypercorn's loop did not take the command")

    def app(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        sid = serving.stream_id(op, req)
        if op == "open":
            return self.peer_opens(sid)
        entry = self.streams.get(sid)
        if entry is None or entry.outbox is None:
            raise Refused(f"{op}: the application has no request on stream {sid}")
        octets = serving.app_octets(op, req)
        if op == "send":
            if entry.ended:
                raise Refused(f"send: stream {sid} has ended")
            outbox = entry.outbox
            item = (octets, bool(req.get("end_stream")))
            self._call(lambda: outbox.put_nowait(item))
        elif op == "consume":

            def grant() -> None:
                entry.quota += octets
                entry.wake.set()

            self._call(grant)
        self.pump()
        return {}

    def implementation_state(self) -> dict[str, Any]:
        """AD-H2-STATE: what the application holds per stream (hypercorn exposes no
        windows)."""
        return {
            "streams": {
                str(s): {"read": e.read, "messages": e.messages, "quota": e.quota}
                for s, e in sorted(self.streams.items())
            }
        }

    def close(self) -> None:
        self.close_link()
        if self.loop is not None and self.stop is not None and self.thread is not None:
            stop = self.stop
            self.loop.call_soon_threadsafe(stop.set)
            self.thread.join(COMMAND_TIMEOUT)
            self.loop = None
        if getattr(self, "listener", None) is not None:
            self.listener.close()


def main() -> None:
    serving.Server(HypercornHarness).run()


if __name__ == "__main__":
    main()
