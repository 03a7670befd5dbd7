"""A whole-command wall-clock budget (IN-WORK).

``--timeout`` of ``prove``/``synth`` bounds each solver call *and* the whole command:
:func:`wall_clock` arms a real-time timer that interrupts Python code (encoding a
2,000-node chain, unrolling ``--depth 100000``) with :class:`OutOfTime`, and the solver
calls get at most the time left (``ProveOptions.deadline``). The command then says so in
one line and exits 4 (no answer within the budget), never runs on for minutes.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class OutOfTime(BaseException):
    """The command's wall-clock budget ran out (a ``BaseException`` so that no
    ``except Exception`` in the work swallows it)."""


@contextmanager
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
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
