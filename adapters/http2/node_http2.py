"""The ``node`` adapter (AD-H2-NODE): Node's built-in ``http2`` module (nghttp2 inside) as
an HTTP/2 server (``node_http2_server.js``, package data) on 127.0.0.1 with an
OS-chosen port; our peer is the client over loopback TCP (AD-H2-LOOPBACK).

The server's application answers a request stream with ``:status 200`` on its first
``send`` and writes what ``send`` asks (Node and nghttp2 split and schedule it); it
reads a request body only as far as ``consume`` allows (AD-H2-OPS), its stream paused
otherwise, so Node's own policy decides when credit goes back.

Run: ``python -m creditflow.adapters.http2.node_http2`` (``CREDITFLOW_H2_PROGRAM``
names the node program; AD-H2-VERSION sets it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from creditflow.adapters.http2 import serving
from creditflow.adapters.http2.peer import Peer
from creditflow.adapters.http2.serving import Child, Loopback, LoopbackHarness, Refused

SCRIPT = Path(__file__).resolve().parent / "node_http2_server.js"


def node_program() -> str:
    return os.environ.get("CREDITFLOW_H2_PROGRAM") or shutil.which("node") or "node"


class NodeHarness(LoopbackHarness):
    """AD-H2-NODE: Node's http2 server against our peer (the client)."""

    library = "node"
    role = "server"

    def __init__(self) -> None:
        self.child: Child | None = None
        self.link: Loopback | None = None
        self.peer = Peer("client")
        self.version = ""
        self.nghttp2 = ""
        self.defaults: dict[str, Any] = {}
        self._spawn()

    def _spawn(self) -> None:
        self.child = Child([node_program(), str(SCRIPT)])
        first = self.child.line()
        self.port = int(first["port"])
        self.version = str(first["version"])
        self.nghttp2 = str(first["nghttp2"])
        self.defaults = dict(self.child.ask({"cmd": "settings"})["settings"])

    def policy(self) -> dict[str, Any]:
        return serving.flow_policy(
            # Node consumes (nghttp2_session_consume) what its JS stream has read; nghttp2
            # sends a WINDOW_UPDATE once half of the window is consumed
            {"policy": "consume", "threshold": "half", "returns": "consumed"},
            reset_credit="connection",
            discard_credit="connection",
            split="nghttp2: min(queued, stream window, connection window, SETTINGS_MAX_FRAME_SIZE)",
            initial_window=self.defaults.get("initialWindowSize", 65_535),
            max_frame_size=self.defaults.get("maxFrameSize", 16_384),
            more={"x-nghttp2": self.nghttp2},
        )

    def start(self, peer_settings: dict[str, int]) -> None:
        self.peer = serving.new_peer(self.role, peer_settings)
        self.link = Loopback.connect(self.peer, self.port)
        self.pump()

    def app(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        sid = serving.stream_id(op, req)
        if op == "open":
            return self.peer_opens(sid)
        assert self.child is not None
        command: dict[str, Any] = {"cmd": op, "stream": sid}
        if op in ("send", "consume"):
            command["octets"] = serving.app_octets(op, req)
            command["end_stream"] = bool(req.get("end_stream"))
        got = self.child.ask(command)
        if got.get("ok") is not True:
            raise Refused(str(got.get("error")))
        self.pump()
        return {}

    def implementation_state(self) -> dict[str, Any]:
        """AD-H2-STATE: Node's ``session.state`` and each stream's ``state``."""
        if self.child is None:
            return {}
        return dict(self.child.ask({"cmd": "state"})["state"])

    def close(self) -> None:
        self.close_link()
        if self.child is not None:
            self.child.close()
            self.child = None


def main() -> None:
    serving.Server(NodeHarness).run()


if __name__ == "__main__":
    main()
