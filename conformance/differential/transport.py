"""JSON Lines over a subprocess's stdin/stdout, the transport of every adapter family
(AD-TRANSPORT, AD-PIPELINE, AD-TIMEOUTS, AD-FAILURE).

Requests are pipelined: a batch is written while responses are read, with both pipes
non-blocking, so a batch of any size cannot dead-lock on full pipe buffers. An adapter
hangs when a response line is not complete ``timeout`` seconds after the driver started
waiting for it (AD-TRANSPORT-DEADLINE: chunks, partial lines and blank lines do not
extend it); it breaks the protocol when a line grows past :data:`MAX_LINE_BYTES`
(AD-TRANSPORT-LINE) or is not a valid response (AD-TRANSPORT-PARSE); it crashes when
its stdout closes. The adapter leads its own process group, which is killed as a whole
when the transport closes, fails, or the command is interrupted (AD-TRANSPORT-GROUP,
SIG-CHILDREN). stderr goes to a temporary file whose last line is quoted, sanitised, in
failure messages (AD-TRANSPORT-STDERR).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from creditflow.conformance.differential.adapter import (
    CRASH,
    HANG,
    PROTOCOL,
    REFUSED,
    AdapterFailure,
    printable,
)
from creditflow.conformance.differential.protocol import FAMILY, ProtocolError, parse_response
from creditflow.conformance.runtime import children

DEFAULT_TIMEOUT = 10.0
DEFAULT_START_TIMEOUT = 30.0
#: AD-START-DEADLINE: seconds the adapter's ``hello`` may take, for every adapter (a
#: loaded CI machine starts an Erlang VM slowly); unset: the caller's (30 s by default)
START_TIMEOUT_ENV = "CREDITFLOW_ADAPTER_START_TIMEOUT"


def start_deadline(default: float) -> float:
    """AD-START-DEADLINE: :data:`START_TIMEOUT_ENV` if set (a positive number of seconds,
    at most a day), else ``default``; a bad value is a one-line ``ValueError``."""
    raw = os.environ.get(START_TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 86_400:
        raise ValueError(
            f"{START_TIMEOUT_ENV}={printable(raw, 40)!s}: expected seconds, a number "
            "above 0 and at most 86400 (AD-START-DEADLINE)"
        )
    return value


#: AD-TRANSPORT-LINE: the longest response line accepted; the bytes buffered for a
#: partial line never exceed this plus one read.
MAX_LINE_BYTES = 1 << 20
_READ_BYTES = 1 << 16
#: AD-ERRORS: an op no family defines; the adapter must refuse it and keep going.
PROBE_OP = "creditflow.unknown-op-probe"


#: Linux's F_SETPIPE_SZ; larger pipes let a whole batch of requests and of responses
#: sit in the kernel while both sides work (AD-PIPELINE).
_F_SETPIPE_SZ = 1031
PIPE_BYTES = 1 << 20


def _grow_pipe(fd: int) -> None:
    """Best effort: Linux only, and capped by /proc/sys/fs/pipe-max-size."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)


#: AD-HELLO: adapters started to read their ``hello``, by command, for the next driver
_handed_over: dict[tuple[str, ...], JsonLinesProcess] = {}


class JsonLinesProcess:
    """A subprocess spoken to in JSON Lines: one request per line on its stdin, exactly
    one response line per request on its stdout, in order (AD-TRANSPORT). Speaks the
    session ops every family shares (AD-HELLO, AD-ERRORS) and raises
    :class:`AdapterFailure` for crashes, hangs and protocol errors (AD-FAILURE)."""

    #: The protocol family the adapter must list in its ``hello`` response.
    family = FAMILY

    def __init__(
        self,
        command: Sequence[str] | str,
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("empty adapter command")
        self.argv = argv
        self.name = name or Path(argv[0]).name
        self.timeout = timeout
        self._next_id = 0
        self._pending = b""  # a partial response line
        self._ready: list[bytes] = []  # complete response lines not yet collected
        self._outq: deque[memoryview] = deque()  # request bytes not yet written
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._buffered = 0  # bytes in self._pending
        self._broken = False  # set by a failure: close() then kills without waiting
        self._handed = False  # AD-HELLO: its process was handed to another driver
        started = _handed_over.pop(tuple(argv), None)
        if started is not None:
            self._adopt(started)
        else:
            self._start(argv, env, cwd)
        #: AD-START-DEADLINE: which deadline a hang names
        self._deadline_name = "the response deadline (--timeout)"
        try:
            try:
                start_timeout = start_deadline(start_timeout)
            except ValueError as exc:
                self._fail(REFUSED, str(exc))
            self._deadline_name = f"the start-up deadline ({START_TIMEOUT_ENV})"
            self.info = self._hello(start_timeout)
            self._deadline_name = "the response deadline (--timeout)"
            if name is None:
                self.name = self.info["name"]  # AD-HELLO: named by what it says it is
            self._probe()
        except BaseException:
            self.close()
            raise

    def hand_over(self) -> None:
        """AD-HELLO: keep this adapter running for the next driver of the same command,
        which takes its process instead of starting another (an adapter started to read
        its family from ``hello`` is started once, not twice)."""
        previous = _handed_over.pop(tuple(self.argv), None)
        if previous is not None:
            previous.close()
        _handed_over[tuple(self.argv)] = self

    def _adopt(self, other: JsonLinesProcess) -> None:
        """Take ``other``'s running process, its pipes and what it has buffered."""
        for attr in ("_proc", "_stderr", "_in", "_out", "_selector", "_next_id", "_pending"):
            setattr(self, attr, getattr(other, attr))
        self._ready, self._outq, self._buffered = other._ready, other._outq, other._buffered
        other._handed = True  # its close() leaves the process to this one

    def _start(self, argv: list[str], env: dict[str, str] | None, cwd: str | Path | None) -> None:
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            self._stderr.close()
            raise AdapterFailure(
                self.name, CRASH, f"cannot start {argv[0]!r}: {exc.strerror}"
            ) from None
        children.track(self._proc)  # SIG-CHILDREN: killed on every way out
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in = self._proc.stdin.fileno()
        self._out = self._proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        for fd in (self._in, self._out):
            _grow_pipe(fd)
        self._selector = selectors.DefaultSelector()

    # -- session -------------------------------------------------------------------------

    def _named_hello(self, start_timeout: float) -> dict[str, Any]:
        """AD-HELLO: ``hello``'s answer; refused, or without a name, is a failure."""
        resp = self.request({"op": "hello"}, timeout=start_timeout)
        if resp.get("ok") is not True:
            self._fail(REFUSED, f"hello refused: {resp.get('error', resp)!r}")
        if not isinstance(resp.get("name"), str):
            self._fail(PROTOCOL, 'hello response lacks a "name" string')
        return resp

    def _hello(self, start_timeout: float) -> dict[str, Any]:
        """AD-HELLO: the adapter names itself and lists its families."""
        resp = self._named_hello(start_timeout)
        families = resp.get("families")
        if not isinstance(families, list) or self.family not in families:
            self._fail(
                PROTOCOL, f'hello response does not list family "{self.family}": {families!r}'
            )
        return resp

    def _probe(self) -> None:
        """AD-ERRORS: an unknown op must be answered with ``ok: false``."""
        resp = self.request({"op": PROBE_OP})
        if resp.get("ok") is not False or not isinstance(resp.get("error"), str):
            self._fail(PROTOCOL, f'an unknown op must get {{"ok":false,"error":…}}, got {resp!r}')

    def request(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request object and return its (parsed) response."""
        rid = self._take_ids(1)
        line = json.dumps({"id": rid, **req}, separators=(",", ":")).encode() + b"\n"
        (raw,) = self.exchange(line, 1, timeout)
        return self._parse(raw, rid, req.get("op", "?"))

    def _parse(self, raw: bytes, request_id: int, what: str) -> dict[str, Any]:
        try:
            return parse_response(raw, request_id)
        except ProtocolError as exc:
            self._fail(PROTOCOL, f"response to {what}: {exc}")
            raise  # unreachable

    def _take_ids(self, n: int) -> int:
        first = self._next_id
        self._next_id += n
        return first

    # -- transport -----------------------------------------------------------------------

    def exchange(self, payload: bytes, count: int, timeout: float | None = None) -> list[bytes]:
        """Write ``payload`` (``count`` request lines) and read ``count`` response lines."""
        self.submit(payload)
        return self.collect(count, timeout)

    def submit(self, payload: bytes) -> None:
        """Queue request lines; write what the pipe takes now, the rest while
        collecting (AD-PIPELINE: the adapter can work while the driver compares)."""
        if payload:
            self._outq.append(memoryview(payload))
            self._flush_some()

    def _flush_some(self) -> None:
        while self._outq:
            view = self._outq[0]
            n = self._write(view)
            if n < len(view):
                self._outq[0] = view[n:]
                return
            self._outq.popleft()

    def collect(self, count: int, timeout: float | None = None) -> list[bytes]:
        """The next ``count`` response lines, pumping queued requests meanwhile. Each
        response must be complete within ``timeout`` seconds of the driver starting to
        wait for it (AD-TRANSPORT-DEADLINE); a line longer than :data:`MAX_LINE_BYTES`
        is a protocol error (AD-TRANSPORT-LINE); stdout closing is a crash."""
        limit = self.timeout if timeout is None else timeout
        ready = self._ready
        sel = self._selector
        deadline = time.monotonic() + limit
        while len(ready) < count:
            want_write = bool(self._outq)
            sel.register(self._out, selectors.EVENT_READ)
            if want_write:
                sel.register(self._in, selectors.EVENT_WRITE)
            try:
                remaining = deadline - time.monotonic()
                events = sel.select(remaining) if remaining > 0 else []
            finally:
                sel.unregister(self._out)
                if want_write:
                    sel.unregister(self._in)
            if not events:
                partial = f", {self._buffered:,} bytes of a partial line" if self._pending else ""
                self._fail(
                    HANG,
                    f"response not complete within {limit:g} s, {self._deadline_name} "
                    f"({len(ready)} of {count} responses received{partial})",
                )
            for key, _ in events:
                if key.fd == self._in:
                    self._flush_some()
                    continue
                chunk = self._read()
                if chunk is None:
                    continue
                if not chunk:
                    self._crashed(len(ready), count)
                before = len(ready)
                self._take(chunk)
                if len(ready) > before:  # a new response: the next one gets its own limit
                    deadline = time.monotonic() + limit
        out = ready[:count]
        del ready[:count]
        return out

    def _take(self, chunk: bytes) -> None:
        """Split ``chunk`` into lines; keep non-blank ones (AD-TRANSPORT-LINE)."""
        if b"\n" not in chunk:
            self._pending += chunk
            self._buffered += len(chunk)
        else:
            parts = (self._pending + chunk).split(b"\n")
            self._pending = parts.pop()
            self._buffered = len(self._pending)
            for part in parts:
                if len(part) > MAX_LINE_BYTES:
                    self._fail(
                        PROTOCOL,
                        f"a response line of {len(part):,} bytes (at most {MAX_LINE_BYTES:,})",
                    )
                if part.strip():
                    self._ready.append(part)
        if self._buffered > MAX_LINE_BYTES:
            self._fail(
                PROTOCOL, f"a response line longer than {MAX_LINE_BYTES:,} bytes without a newline"
            )

    def _write(self, view: memoryview) -> int:
        if not view:
            return 0
        try:
            return os.write(self._in, view)
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError):
            self._crashed(0, 0)
            raise  # unreachable

    def _read(self) -> bytes | None:
        """Whatever the adapter has written; ``b""`` at end of file, ``None`` if nothing
        was there after all."""
        try:
            return os.read(self._out, _READ_BYTES)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _crashed(self, got: int, count: int) -> None:
        code = children.peek_exit(self._proc, 2.0)  # unreaped: its group can still be killed
        if code is None:
            how = "closed its stdout"
        else:
            how = f"exited with code {code}" if code >= 0 else f"killed by signal {-code}"
        self._fail(CRASH, how + (f" after {got} of {count} responses" if count else ""))

    def _fail(self, kind: str, message: str) -> None:
        self._broken = True  # close() kills at once: no grace for a broken adapter
        tail = self.stderr_tail()
        raise AdapterFailure(self.name, kind, message + (f" (stderr: {tail})" if tail else ""))

    def stderr_tail(self) -> str:
        """The last non-empty line the adapter wrote on stderr, sanitised: control
        characters and terminal escapes shown escaped, at most 300 characters
        (AD-TRANSPORT-STDERR)."""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 4096))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return printable(lines[-1], 300) if lines else ""

    def close(self) -> None:
        """Close stdin (the adapter should exit), then kill its whole process group,
        grandchildren included (AD-TRANSPORT-GROUP)."""
        proc = getattr(self, "_proc", None)
        if proc is None or getattr(self, "_handed", False):
            return
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        children.stop_group(proc, grace=0.0 if self._broken else 2.0)
        if proc.stdout:
            proc.stdout.close()
        self._selector.close()
        self._stderr.close()
        self._proc = None  # type: ignore[assignment]  # closed: no process any more
