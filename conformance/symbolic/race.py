"""SCOPE-RACE: the proofs of ``check`` in a child process, raced against the exploration.

``check`` asks Z3-PROVE (without search, SCOPE-ORDER step 1) and, on a fault graph whose
default question that leaves open, Z3-BMC for every supply. Those run here in a child
process (SIG-CHILDREN: its own process group, tracked, killed with its group and reaped
however the command ends) while the parent explores; the first certain answer wins and
the other engine is stopped. The child reads one pickled :class:`ProofTask` on stdin and
writes one pickled :class:`ProofReply` on stdout (nothing of Z3 crosses: the answer is
the frozen :class:`~creditflow.conformance.symbolic.every_supply.SupplyAnswer`).

    python -m creditflow.conformance.symbolic.race   # the child; not for people
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

from creditflow.conformance.runtime import children

if TYPE_CHECKING:
    from creditflow.conformance.explore.check import CheckOptions
    from creditflow.conformance.symbolic.every_supply import SupplyAnswer
    from creditflow.model.network.graph import FlowGraph

#: the module the child runs
CHILD_MODULE = "creditflow.conformance.symbolic.race"


@dataclass(frozen=True)
class ProofTask:
    """What the child proves: ``graph`` under ``options``' overrides, within ``seconds``;
    ``search``: Z3-BMC for every supply too (Z3-PROVE with search), else SCOPE-ORDER's
    step 1 only."""

    graph: FlowGraph
    options: CheckOptions
    seconds: float
    search: bool = False


@dataclass(frozen=True)
class ProofReply:
    """The child's answer (``None``: the graph is too large for the proofs), or the
    traceback of the error that ended it."""

    answer: SupplyAnswer | None
    error: str | None = None


class ProofFailed(RuntimeError):
    """The proof child ended without an answer (it crashed, or was killed)."""


def run_task(task: ProofTask) -> SupplyAnswer | None:
    """The child's work (also callable in-process): SCOPE-ORDER step 1, then with
    ``task.search`` Z3-BMC for every supply when step 1 leaves the question open."""
    # deferred: the child imports Z3 only here
    from creditflow.conformance.symbolic.every_supply import answer_every_supply

    return answer_every_supply(task.graph, task.options, task.seconds, search=task.search)


class ProofProcess:
    """One proof child (SCOPE-RACE). :meth:`done` says whether its reply is in without
    waiting; :meth:`answer` waits for it; :meth:`stop` kills its group and reaps it (also
    on leaving the ``with`` block). Spawning never blocks: the child imports while the
    parent explores."""

    def __init__(self, task: ProofTask) -> None:
        self._proc = children.track(
            subprocess.Popen(
                [sys.executable, "-m", CHILD_MODULE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # SIG-CHILDREN: its own group, killed as one
            )
        )
        self._payload = pickle.dumps(task)
        self._out = b""
        self._err = b""
        self._arrived = threading.Event()
        self._stopped = False
        self._reply: ProofReply | ProofFailed | None = None
        self._reader = threading.Thread(target=self._read, name="creditflow-proof", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _read(self) -> None:
        try:
            self._out, self._err = self._proc.communicate(self._payload)
        except (OSError, ValueError):
            pass  # stopped while writing or reading: no reply
        finally:
            self._arrived.set()

    def done(self) -> bool:
        """Whether the child has finished (its reply, if any, can be read at once)."""
        return self._arrived.is_set()

    def answer(self) -> SupplyAnswer | None:
        """Wait for the child and return its answer; :class:`ProofFailed` if it ended
        without one."""
        if self._reply is None:
            self._arrived.wait()
            self._reader.join()
            self.stop()
            self._reply = self._read_reply()
        if isinstance(self._reply, ProofFailed):
            raise self._reply
        return self._reply.answer

    def _read_reply(self) -> ProofReply | ProofFailed:
        try:
            reply = pickle.loads(self._out)
        except Exception as exc:  # noqa: BLE001 - any unreadable reply is a failure
            why = self._err.decode("utf-8", "replace").strip().splitlines()[-1:] or [str(exc)]
            return ProofFailed(f"the proof process ended without an answer: {why[0]}")
        if not isinstance(reply, ProofReply):
            return ProofFailed("the proof process replied with something else")
        if reply.error is not None:
            return ProofFailed(f"the proof process failed:\n{reply.error}")
        return reply

    def stop(self) -> None:
        """SIG-CHILDREN: kill the child's process group and reap it (idempotent)."""
        if not self._stopped:
            self._stopped = True
            children.stop_group(self._proc)
            self._reader.join(timeout=5)

    def __enter__(self) -> ProofProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _child() -> None:
    """The child: one task from stdin, one reply on stdout."""
    # The classes of the importable module (this one runs as ``__main__``), so that the
    # parent can read the reply.
    # deferred: a module cannot import itself at its top
    from creditflow.conformance.symbolic import race

    task = pickle.loads(sys.stdin.buffer.read())
    try:
        reply = race.ProofReply(race.run_task(task))
    except BaseException:  # noqa: BLE001 - the parent reports it
        reply = race.ProofReply(None, traceback.format_exc())
    sys.stdout.buffer.write(pickle.dumps(reply))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    _child()
