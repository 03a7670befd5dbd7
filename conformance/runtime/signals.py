"""The one signal policy of every command (SIG-POLICY, SIG-Z3).

While a command runs (:func:`policy`), SIGINT and SIGTERM raise :class:`Interrupted`
(a ``KeyboardInterrupt``, so Hypothesis and every ``finally`` let it through) in the
main thread. The command's wrapper then stops every child process group
(SIG-CHILDREN), prints one line with the seed and what was saved, and exits
``128 + signal``: 130 for SIGINT, 143 for SIGTERM. A second signal while that happens
exits at once with the same code.

A command's own wall-clock budget (``prove``/``synth --timeout``, IN-WORK) is the same
kind of mechanism: :func:`wall_clock` raises :class:`OutOfTime` in the main thread from
a SIGALRM timer.

Native code (a Z3 solver call) does not return to Python until it finishes, so the
signal is also written to a wake-up pipe read by a watcher thread, which calls the
registered interrupt hooks (:func:`on_interrupt`: ``z3.Context.interrupt``); Z3's own
SIGINT handler is switched off (``ctrl_c=false``) so it cannot swallow the signal and
return ``unknown`` as if the solver had given up.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

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


def exit_code(exc: BaseException | None = None) -> int:
    """SIG-POLICY: 130 for SIGINT (and a plain ``KeyboardInterrupt``), 143 for SIGTERM."""
    signum = getattr(exc, "signum", None) or received() or signal.SIGINT
    return exit_codes.INTERRUPTED_SIGTERM if signum == signal.SIGTERM else (exit_codes.INTERRUPTED)


def signal_name(exc: BaseException | None = None) -> str:
    return signal.Signals(getattr(exc, "signum", None) or received() or signal.SIGINT).name


def on_interrupt(hook: Callable[[], None]) -> None:
    """SIG-Z3: call ``hook`` (from a watcher thread) as soon as a signal arrives, even
    while the main thread is inside native code."""
    if hook not in _hooks:
        _hooks.append(hook)


def note(**facts: Any) -> None:
    """Remember what an interrupt message must say (``seed=…``, ``out=…``)."""
    _notes.update(facts)


def received() -> int | None:
    """The signal that interrupted the current command, if any."""
    return _received[0] if _received else None


def notes() -> dict[str, Any]:
    return dict(_notes)


class _State:
    handled = False  #: the command's wrapper caught the interrupt and is stopping
    ping = False  #: the next handler call is our own re-raise, not a user's signal
    rearming = False
    before: frozenset[int] = frozenset()  #: children already running when the command began


_state = _State()


def kill_ours() -> None:
    """SIG-CHILDREN: stop the process groups this command started."""
    children.kill_all(keep=_state.before)


def handled() -> None:
    """The command's wrapper has caught the interrupt: stop re-raising it; a further
    signal from now on exits at once."""
    _state.handled = True


def _handler(signum: int, frame: Any) -> None:
    if _state.handled:
        if _state.ping:  # our own re-raise arriving late: nothing to do
            _state.ping = False
            return
        children.kill_all()  # a second signal while stopping: stop now
        os._exit(128 + (_received[0] if _received else signum))
    _state.ping = False
    if not _received:
        _received.append(signum)
    raise Interrupted(_received[0])


def _rearm() -> None:
    """An exception raised by a signal handler is lost if it lands in a garbage
    collector callback or a ``__del__`` ("Exception ignored in …"). Until the command's
    wrapper has caught it, raise it again in the main thread every half second."""
    while not _state.handled and _received:
        time.sleep(0.5)
        if not _state.handled and _received:
            _state.ping = True
            _thread.interrupt_main(signal.Signals(_received[0]))
    _state.rearming = False


def _watch(fd: int) -> None:
    """The watcher thread: on SIGINT/SIGTERM, call the interrupt hooks (SIG-Z3) and make
    sure the interrupt reaches the command's wrapper."""
    try:
        while data := os.read(fd, 64):
            if any(b in SIGNALS for b in data):
                for hook in list(_hooks):
                    with contextlib.suppress(Exception):
                        hook()
                if not _state.rearming and not _state.handled:
                    _state.rearming = True
                    threading.Thread(target=_rearm, daemon=True).start()
    except OSError:
        pass
    finally:
        os.close(fd)


def early() -> None:
    """Before a command starts (while the program is still importing), SIGINT and
    SIGTERM just exit 130 / 143: nothing has been started or saved yet (SIG-POLICY).
    Only for the ``creditflow`` program itself, never for a host such as pytest."""
    if _is_program() and threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, _exit_now)


#: the module ``python -m creditflow.conformance.cli`` runs as ``__main__``
PROGRAM_MODULE = "creditflow.conformance.cli.__main__"


def _is_program() -> bool:
    """Whether this process is the ``creditflow`` program (not a host such as pytest):
    the console script, or ``python -m creditflow.conformance.cli`` (whose ``sys.argv[0]``
    is ``-m`` while it imports and the module's path once it runs)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name == PROGRAM_MODULE:
        return True
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    return program in ("creditflow", "-m")


def is_program() -> bool:
    """Whether this process is the ``creditflow`` program itself (OUT-STREAM applies)."""
    return _is_program()


def leave(code: int) -> NoReturn:
    """SIG-POLICY: end the command with ``code`` once an interrupt has been reported.
    The ``creditflow`` program ends without interpreter finalisation, after its atexit
    handlers (children, a Spark cluster) ran: objects the interrupt left half built
    (Z3's) have finalisers that fail at shutdown and would print past the one line. A
    host (pytest's CliRunner) gets ``SystemExit``."""
    if not _is_program():
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def _exit_now(signum: int, frame: Any) -> None:
    name = signal.Signals(signum).name
    os.write(2, f"creditflow: interrupted by {name} while starting; nothing was saved\n".encode())
    os._exit(128 + signum)


class OutOfTime(BaseException):
    """The command's wall-clock budget ran out (a ``BaseException`` so that no
    ``except Exception`` in the work swallows it)."""


@contextlib.contextmanager
def wall_clock(seconds: float) -> Iterator[None]:
    """IN-WORK: raise :class:`OutOfTime` in the main thread after ``seconds``."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    # repeating: an interruption that lands where Python ignores exceptions (a finaliser
    # of a solver object) is followed by another a quarter second later
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.25)
    try:
        yield
    except ctypes.ArgumentError as exc:
        # the timer fired while ctypes was converting the arguments of a native (Z3)
        # call: ctypes wraps the exception ("argument 3: OutOfTime: ")
        if _is_ours(exc) and ": OutOfTime" in str(exc):
            raise OutOfTime from None
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _is_ours(exc: BaseException | None) -> bool:
    """An interrupt or budget expiry, also as ctypes wraps one that lands while it
    converts the arguments of a native (Z3) call ("argument 1: Interrupted: SIGTERM")."""
    if isinstance(exc, (Interrupted, OutOfTime)):
        return True
    return isinstance(exc, ctypes.ArgumentError) and any(
        f": {name.__name__}" in str(exc) for name in (Interrupted, OutOfTime)
    )


def _unraisable(hook: Any) -> Callable[[Any], None]:
    """An interrupt raised inside a ``__del__`` or a garbage-collector callback cannot
    propagate and is re-raised (by :func:`_rearm`, or by the repeating budget timer);
    do not print it as an error."""

    def quiet(info: Any) -> None:
        # after an interrupt, a finaliser of an object the interrupt left half built
        # (Z3's AstRef without its ctx) fails as a consequence: not worth a traceback
        if not _received and not _is_ours(info.exc_value):
            hook(info)

    return quiet


@contextlib.contextmanager
def policy() -> Iterator[None]:
    """Install the policy for the duration of one command (main thread only; elsewhere
    it does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _notes.clear()
    _state.handled = _state.ping = False
    _state.before = frozenset(children.live_pids())
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_fd,), name="creditflow-signals", daemon=True).start()
    previous_unraisable = sys.unraisablehook
    sys.unraisablehook = _unraisable(previous_unraisable)
    for s in SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        _state.handled = True
        if _received and _is_program():
            # SIG-POLICY's one line has been printed and the program is exiting: the
            # finalisers of objects the interrupt left half built (Z3's) may still fail
            # at shutdown; they have nothing to tell the user
            sys.unraisablehook = lambda info: None
        else:
            sys.unraisablehook = previous_unraisable
        kill_ours()
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(old_fd)
        os.close(write_fd)  # the watcher sees end of file, closes its end and returns
