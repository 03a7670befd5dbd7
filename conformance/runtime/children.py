"""The child processes creditflow started, each the leader of its own process group,
and the one way to stop a whole group (SIG-CHILDREN, AD-TRANSPORT-GROUP).

Every subprocess that may outlive a request (adapters, Erlang sessions, brokers) is
started with ``start_new_session=True`` and :func:`track`-ed; :func:`stop_group` ends
it and everything it spawned (grandchildren in the same group), and :func:`kill_all`
does that for every tracked child on the way out (an interrupt, an error, exit).
A descendant that starts its own session has left the group and is not reached.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time

_lock = threading.Lock()
_live: dict[int, subprocess.Popen] = {}


def track(proc: subprocess.Popen) -> subprocess.Popen:
    """Remember ``proc`` (a process-group leader) so that :func:`kill_all` reaches it."""
    with _lock:
        _live[proc.pid] = proc
    return proc


def untrack(proc: subprocess.Popen) -> None:
    with _lock:
        _live.pop(proc.pid, None)


def live_pids() -> list[int]:
    with _lock:
        return list(_live)


def _exit_status(pid: int) -> int | None | bool:
    """``pid``'s (our child's) exit status if it has exited, without reaping it (``-N``
    if killed by signal N; ``True`` if it is gone already), else ``None``. While it is
    an unreaped zombie its process-group id cannot be reused, so killing the group is
    safe."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def peek_exit(proc: subprocess.Popen, timeout: float) -> int | None:
    """Wait up to ``timeout`` seconds for ``proc`` to exit; its status (``-N`` for
    signal N) or ``None``, leaving it unreaped so that its group can still be killed."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.returncode is not None:
            return proc.returncode
        status = _exit_status(proc.pid)
        if status is not None:
            return None if status is True else int(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def stop_group(proc: subprocess.Popen, grace: float = 0.0) -> int | None:
    """SIG-CHILDREN: give ``proc`` up to ``grace`` seconds to exit on its own, then kill
    its whole process group (grandchildren too) with SIGKILL and reap it. Returns its
    exit status (``None`` if it was already reaped)."""
    if grace > 0:
        peek_exit(proc, grace)
    # Even after the leader exited its group may live on in a grandchild; a pid is not
    # reused while it names a live process group, so this reaches only our group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(OSError):
            proc.kill()
    code = None
    with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
        code = proc.wait(timeout=5)
    untrack(proc)
    return code


def kill_all(keep: frozenset[int] = frozenset()) -> None:
    """SIG-CHILDREN: stop every tracked child's process group at once, except those
    whose pids are in ``keep`` (children that were running before a command started,
    e.g. a test's broker when the command runs in-process)."""
    with _lock:
        procs = [p for pid, p in _live.items() if pid not in keep]
    for proc in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    for proc in procs:
        stop_group(proc)


atexit.register(kill_all)
