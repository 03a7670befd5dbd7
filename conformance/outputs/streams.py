"""The ``creditflow`` program's standard streams (OUT-STREAM, OUT-TEXT).

:func:`guard` replaces ``sys.stdout`` and ``sys.stderr`` with text streams over a raw
writer that never raises: a write that fails (a full device, a pipe whose reader left,
a stream that was closed when the program started) is remembered and the rest of that
stream's output is dropped, so the command finishes and its verdict decides the exit
code (:func:`exit_code`, OUT-EXIT). Text that cannot be encoded (a lone surrogate from
a JSON ``\\ud800``) is written as a backslash escape instead of raising.

:func:`printable` is the one escaping of names from inputs and adapters before any
renderer shows them (OUT-TEXT).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import select
import sys
from typing import Any

from creditflow.conformance import exit_codes

#: OUT-TEXT: how text that the stream's encoding cannot represent is written
ENCODING_ERRORS = "backslashreplace"


class GuardedWriter(io.RawIOBase):
    """OUT-STREAM: a raw writer on one file descriptor whose ``write`` never raises an
    ``OSError``: the first failure is kept in :attr:`failure` and later bytes dropped."""

    def __init__(self, name: str, fd: int, closed: OSError | None = None) -> None:
        super().__init__()
        self.name = name
        self.fd = fd
        self.closed_at_start = closed  #: the first write fails with this
        self.failure: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return self.closed_at_start is None and os.isatty(self.fd)

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if self.closed_at_start is not None and len(view):
            self.failure = self.failure or self.closed_at_start
        done = 0
        while self.failure is None and done < len(view):
            try:
                done += os.write(self.fd, view[done:])
            except BlockingIOError:  # a stream left non-blocking by another program
                select.select([], [self.fd], [])
            except OSError as exc:
                self.failure = exc
        return len(view)  # the descriptor stays open: it is the process's, not ours


_writers: list[GuardedWriter] = []


def _hold(fd: int) -> OSError | None:
    """A descriptor closed when the program started is reopened on ``/dev/null``, so a
    file opened later cannot take its number and receive what was meant for the stream;
    the closure is returned: the stream's first write fails with it."""
    try:
        os.fstat(fd)
        return None
    except OSError:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        return OSError(errno.EBADF, "the stream was closed when creditflow started")


def guard() -> None:
    """OUT-STREAM, OUT-TEXT: install the guarded ``sys.stdout`` and ``sys.stderr`` (the
    ``creditflow`` program only; a host such as pytest keeps its own streams)."""
    _hold(0)
    del _writers[:]
    for name, fd in (("stdout", 1), ("stderr", 2)):
        previous = getattr(sys, name)
        writer = GuardedWriter(name, fd, _hold(fd))
        _writers.append(writer)
        interactive = writer.isatty()
        stream = io.TextIOWrapper(
            io.BufferedWriter(writer),
            encoding=getattr(previous, "encoding", None) or "utf-8",
            errors=ENCODING_ERRORS,
            line_buffering=interactive,
            write_through=name == "stderr",
        )
        if previous is not None:
            try:
                previous.flush()
            except (OSError, ValueError) as exc:
                writer.failure = writer.failure or (exc if isinstance(exc, OSError) else None)
        setattr(sys, name, stream)


def failures() -> list[GuardedWriter]:
    """The guarded streams that could not be written, after flushing both."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    return [w for w in _writers if w.failure is not None]


def exit_code(code: Any) -> Any:
    """OUT-STREAM: ``code`` (a ``SystemExit`` code) once the streams are flushed; if one
    of them could not be written, OUT-EXIT's code for it (the verdict's own if not 0,
    else 5), after one line on stderr naming the stream when stderr still works. An
    interrupt's code (SIG-POLICY) and a non-integer code are left as they are."""
    failed = failures()
    if not failed or (code is not None and not isinstance(code, int)):
        return code
    verdict = code or exit_codes.OK
    if verdict in (exit_codes.INTERRUPTED, exit_codes.INTERRUPTED_SIGTERM):
        return verdict
    if not any(w.name == "stderr" for w in failed):
        reasons = "; ".join(f"{w.name}: {_reason(w.failure)}" for w in failed)
        sys.stderr.write(f"creditflow: error: output could not be written ({reasons})\n")
        sys.stderr.flush()
    return exit_codes.with_write_failure(verdict)


def _reason(failure: OSError | None) -> str:
    if failure is None:
        return "unknown"
    return failure.strerror or str(failure)


def encoded(text: str) -> bytes:
    """OUT-TEXT: ``text`` as UTF-8 for a file or a pipe; a lone surrogate (from a JSON
    ``\\ud800`` in an input) is written as its backslash escape instead of raising."""
    return text.encode("utf-8", ENCODING_ERRORS)


def printable(text: object, limit: int | None = None) -> str:
    """OUT-TEXT: ``text`` as one printable line: line breaks, control characters and
    terminal escapes (ESC, CSI, OSC, BEL), and lone surrogates are shown as Python
    escapes (``\\x1b``, ``\\n``, ``\\ud800``); cut to ``limit`` characters (``…``)."""
    text = str(text)
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if limit is not None and len(shown) > limit:
        shown = shown[: max(limit - 1, 0)] + "…"
    return shown
