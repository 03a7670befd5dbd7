"""The ``nghttp2`` adapter (AD-H2-NGHTTPD): Debian's ``nghttpd`` (the nghttp2 library's
own server) on 127.0.0.1 with an OS-chosen port, plain TCP (``--no-tls``), serving a
private document root; our peer is the client over loopback (AD-H2-LOOPBACK).

``nghttpd`` has no application to drive, so the ops are requests: ``open(stream)`` is a
POST whose body nghttpd echoes once it ends (``--echo-upload``; until then the stream
stays open and nghttpd reads its DATA as it comes), and ``send(stream, octets)`` is a GET
of a file of that many octets that the adapter writes first — the stream's one send,
with END_STREAM (AD-H2-POLICY ``x-send: request``). nghttpd's port is read from
``/proc`` (the socket it listens on), since it prints the port it was given (0).

Run: ``python -m creditflow.adapters.http2.nghttpd_server`` (``CREDITFLOW_H2_PROGRAM``
names nghttpd; AD-H2-VERSION sets it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from creditflow.adapters.http2 import serving
from creditflow.adapters.http2.peer import Peer
from creditflow.adapters.http2.serving import ChildFailed, Loopback, LoopbackHarness, Refused

START_TIMEOUT = 10.0
_RELEASE = re.compile(r"(\d+\.\d+\.\d+)")


def nghttpd_program() -> str:
    return os.environ.get("CREDITFLOW_H2_PROGRAM") or shutil.which("nghttpd") or "nghttpd"


def listening_port(pid: int) -> int | None:
    """The TCP port process ``pid`` listens on (from ``/proc``), or ``None`` yet."""
    inodes: set[str] = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        cols = line.split()
        if len(cols) > 9 and cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
            return int(cols[1].rsplit(":", 1)[1], 16)
    return None


class NghttpdHarness(LoopbackHarness):
    """AD-H2-NGHTTPD: nghttpd against our peer (the client)."""

    library = "nghttp2"
    role = "server"
    app_ops = ("open", "send")

    def __init__(self) -> None:
        self.program = nghttpd_program()
        self.version = self._release()
        self.peer = Peer("client")
        self.proc: subprocess.Popen[bytes] | None = None
        self.link: Loopback | None = None
        self.root: str | None = None

    def _release(self) -> str:
        try:
            out = subprocess.run(
                [self.program, "--version"], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ChildFailed(f"cannot run {self.program}: {exc}") from None
        found = _RELEASE.search(out.stdout + out.stderr)
        return found.group(1) if found else "unknown"

    def policy(self) -> dict[str, Any]:
        return serving.flow_policy(
            # nghttp2's automatic WINDOW_UPDATE: nghttpd consumes DATA as it reads it and
            # the library returns the credit once half of the window is consumed
            {"policy": "receipt", "threshold": "half", "returns": "consumed"},
            reset_credit="x-untested",
            discard_credit="connection",
            split="nghttp2: min(file left, stream window, connection window, "
            "SETTINGS_MAX_FRAME_SIZE)",
            initial_window=65_535,
            max_frame_size=16_384,
            more={"x-send": "request"},
        )

    def start(self, peer_settings: dict[str, int]) -> None:
        self.peer = serving.new_peer(self.role, peer_settings)
        self.root = tempfile.mkdtemp(prefix="creditflow-nghttpd-")
        argv = [self.program, "--no-tls", "--echo-upload", "-a", "127.0.0.1"]
        try:
            # in the adapter's process group: the driver's group kill reaches it
            self.proc = subprocess.Popen(
                [*argv, "-d", self.root, "0"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise ChildFailed(f"cannot start {self.program}: {exc.strerror}") from None
        deadline = time.monotonic() + START_TIMEOUT
        port = None
        while port is None:
            if self.proc.poll() is not None:
                raise ChildFailed(f"nghttpd exited ({self.proc.returncode})")
            if time.monotonic() > deadline:
                raise ChildFailed(f"nghttpd did not listen within {START_TIMEOUT:g} s")
            port = listening_port(self.proc.pid)
            if port is None:
                time.sleep(0.01)
        self.link = Loopback.connect(self.peer, port)
        self.pump()

    def app(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        sid = serving.stream_id(op, req)
        if sid != self.peer.next_stream:
            raise Refused(f"{op}: the next stream is {self.peer.next_stream}")
        if op == "open":
            self.peer.open(sid)
        else:
            octets = req.get("octets", 0)
            if not isinstance(octets, int) or octets < 0 or not req.get("end_stream"):
                raise Refused("send: a new stream, octets >= 0 and end_stream (x-send: request)")
            assert self.root is not None
            name = f"blob-{octets}"
            path = Path(self.root) / name
            if not path.exists():
                with path.open("wb") as out:
                    out.truncate(octets)
            self.peer.request(sid, f"/{name}")
        self.pump()
        return {}

    def close(self) -> None:
        self.close_link()
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


def main() -> None:
    serving.Server(NghttpdHarness).run()


if __name__ == "__main__":
    main()
