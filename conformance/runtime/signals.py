"""The one signal policy of every command (SIG-POLICY, SIG-Z3).

While a command runs (:func:`policy`), SIGINT and SIGTERM raise :class:`Interrupted`
(a ``KeyboardInterrupt``, so Hypothesis and every ``finally`` let it through) in the
main thread. The command's wrapper then stops every child process group
(SIG-CHILDREN), prints one line with the seed and what was saved, and exits
``128 + signal``: 130 for SIGINT, 143 for SIGTERM. A second signal while that happens
exits at once with the same code.

Native code (a Z3 solver call) does not return to Python until it finishes, so the
signal is also written to a wake-up pipe read by a watcher thread, which calls the
registered interrupt hooks (:func:`on_interrupt`: ``z3.Context.interrupt``); Z3's own
SIGINT handler is switched off (``ctrl_c=false``) so it cannot swallow the signal and
return ``unknown`` as if the solver had given up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from creditflow.conformance import exit_codes
from creditflow.conformance.runtime import children

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_hooks: list[Callable[[], None]] = []
_received: list[int] = []
_notes: dict[str, Any] = {}


class Interrupted(KeyboardInterrupt):  # noqa: N818 - a signal, named as one
    """SIGINT or SIGTERM arrived (SIG-POLICY)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(exc: BaseException) -> int:
    """SIG-POLICY: 130 for SIGINT (and a plain ``KeyboardInterrupt``), 143 for SIGTERM."""
    signum = getattr(exc, "signum", signal.SIGINT)
    return exit_codes.INTERRUPTED_SIGTERM if signum == signal.SIGTERM else (
        exit_codes.INTERRUPTED)


def signal_name(exc: BaseException) -> str:
    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name


def on_interrupt(hook: Callable[[], None]) -> None:
    """SIG-Z3: call ``hook`` (from a watcher thread) as soon as a signal arrives, even
    while the main thread is inside native code."""
    if hook not in _hooks:
        _hooks.append(hook)


def note(**facts: Any) -> None:
    """Remember what an interrupt message must say (``seed=…``, ``out=…``)."""
    _notes.update(facts)


def notes() -> dict[str, Any]:
    return dict(_notes)


def _handler(signum: int, frame: Any) -> None:
    if _received:  # a second signal while stopping: stop now
        children.kill_all()
        os._exit(128 + _received[0])
    _received.append(signum)
    raise Interrupted(signum)


def _watch(fd: int) -> None:
    """The watcher thread: on SIGINT/SIGTERM, call the interrupt hooks (SIG-Z3)."""
    try:
        while data := os.read(fd, 64):
            if any(b in SIGNALS for b in data):
                for hook in list(_hooks):
                    with contextlib.suppress(Exception):
                        hook()
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def policy() -> Iterator[None]:
    """Install the policy for the duration of one command (main thread only; elsewhere
    it does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _notes.clear()
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_fd,), name="creditflow-signals",
                     daemon=True).start()
    for s in SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        children.kill_all()
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(old_fd)
        os.close(write_fd)  # the watcher sees end of file, closes its end and returns
