"""Running a batch of cases on an executor (SW-ENGINE, SW-BUDGET, SW-FAILURE).

:func:`run_batch` is the only function Spark (or a process pool) calls: one batch in,
one list of result dicts out, in task order. Each case runs within its budgets; a
case that raises becomes an ``error`` result and one that runs out of time a
``timeout`` result, so one bad case never costs the rest of its batch. Executors do no
file I/O: counterexample traces travel back compressed and the driver writes them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple

from creditflow.conformance.inputs.amqp_topologies import AmqpInput, is_amqp_document
from creditflow.conformance.inputs.graphs import graph_from_node_link
from creditflow.conformance.sweep.amqp import case_input as amqp_case_input
from creditflow.conformance.sweep.cases import CaseTask
from creditflow.conformance.sweep.checkers import (
    CaseBudget,
    CaseTimeout,
    CheckerOutcome,
    resolve_checker,
)
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph

#: SW-BUDGET: a case still running this long after its wall-clock budget (the alarm could
#: not interrupt it: a long native call) has its worker process killed.
HARD_KILL_FACTOR = 2.0
HARD_KILL_GRACE = 5.0
#: exit status of a worker killed by the watchdog, and what it says about it
KILLED_EXIT = 86
HARD_KILL_MARK = "overran its hard time limit"


class Batch(NamedTuple):
    """One task's work: the graphs (node-link JSON by key) and the cases using them."""

    batch_id: str
    graphs: dict[str, str]
    tasks: tuple[CaseTask, ...]


_graph_cache: dict[str, FlowGraph | dict[str, Any]] = {}


def _base_graph(key: str, node_link: str) -> FlowGraph | dict[str, Any]:
    """The family's graph of a case: a process graph, or for an AMQP family (SW-AMQP)
    its topology document (read into a topology per case, with the case's supply)."""
    graph = _graph_cache.get(key)
    if graph is None:
        if len(_graph_cache) > 4096:
            _graph_cache.clear()
        data = json.loads(node_link)
        if is_amqp_document(data):
            graph = data
        else:
            graph = graph_from_node_link(data, name=key.partition(":")[2])
        _graph_cache[key] = graph
    return graph


def case_input(base: FlowGraph | dict[str, Any], task: CaseTask) -> FlowGraph | AmqpInput:
    """What the case's checker takes (SW-CASE): the process graph with the case's
    settings (:func:`case_graph`), or the AMQP topology with the case's supply (SW-AMQP)."""
    if isinstance(base, dict):
        return amqp_case_input(base, task.graph_key.partition(":")[2], task.publishes)
    return case_graph(base, task)


def case_graph(base: FlowGraph, task: CaseTask) -> FlowGraph:
    """The graph of one case (SW-CASE): its credits (CF-SPEC), supplies (NET-SOURCE) and
    variant (SW-VARIANT: NET-ALL-CHECK for ``all-check``) applied to the family's graph."""
    graph = base
    if task.edge_credits is not None:
        graph = replace(
            graph,
            edges=tuple(
                replace(e, credit=CreditSpec(*c))
                for e, c in zip(graph.edges, task.edge_credits, strict=True)
            ),
        )
    elif task.credit is not None:
        graph = graph.with_credit(CreditSpec(*task.credit))
    graph = graph.with_publishes(task.publishes)
    if task.variant == "all-check":
        graph = graph.with_all_checking()
    return graph


class _Watchdog:
    """Kills this worker process when a case overruns its hard limit (SW-BUDGET)."""

    def __init__(self) -> None:
        self._kill_at: float | None = None
        self._case = ""
        self._thread: threading.Thread | None = None

    def arm(self, case_id: str, kill_at: float) -> None:
        self._case, self._kill_at = case_id, kill_at
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="sweep-watchdog", daemon=True)
            self._thread.start()

    def disarm(self) -> None:
        self._kill_at = None

    def _run(self) -> None:
        while True:
            time.sleep(0.25)
            kill_at = self._kill_at
            if kill_at is not None and time.monotonic() > kill_at:
                message = f"creditflow: case {self._case} {HARD_KILL_MARK}; worker killed\n"
                sys.stderr.write(message)
                sys.stderr.flush()
                # Spark reports a crashed worker with the contents of its faulthandler
                # file (spark.python.worker.faulthandler.enabled): say why it died there.
                directory = os.environ.get("PYTHON_FAULTHANDLER_DIR")
                if directory:
                    try:
                        with open(os.path.join(directory, str(os.getpid())), "a") as log:
                            log.write(message)
                    except OSError:
                        pass
                os._exit(KILLED_EXIT)


_watchdog = _Watchdog()


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """SW-BUDGET: raise :class:`CaseTimeout` after ``seconds`` (SIGALRM, main thread only;
    elsewhere the checker's ``tick`` enforces the deadline)."""
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not main:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: SW-ROW, SW-FAILURE: a case's verdict, or why it has none
CaseVerdict = Literal["deadlock", "violation", "incomplete", "holds", "timeout", "error", "crashed"]
#: SW-FAILURE: why a case produced no verdict
CaseFailure = Literal["timeout", "error", "crashed"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """SW-ROW, OUT-TYPED-RESULT: the result of one case; :meth:`to_row` is the row the
    sweep stores (the trace zlib-compressed ITF JSON, SW-TRACE)."""

    case_id: str
    verdict: CaseVerdict
    complete: bool
    deadlock: bool | None
    deadlock_kind: str | None
    blocked_forever: tuple[str, ...]
    conservation: bool | None
    violated: tuple[str, ...]
    states: int | None
    transitions: int | None
    seconds: float | None
    shortest_counterexample: int | None
    exit_code: int | None
    error: str | None
    trace_z: bytes | None
    host: str
    finished_at: float
    #: SW-AMQP-CLAIM: what the verdict claims, as a scope and in words (``None`` for a
    #: checker that states none)
    claim_scope: str | None = None
    claim: str | None = None

    def to_row(self) -> dict[str, Any]:
        """SW-ROW: the stored row, columns in their order."""
        return {
            "case_id": self.case_id,
            "verdict": self.verdict,
            "complete": self.complete,
            "deadlock": self.deadlock,
            "deadlock_kind": self.deadlock_kind,
            "blocked_forever": list(self.blocked_forever),
            "conservation": self.conservation,
            "violated": list(self.violated),
            "states": self.states,
            "transitions": self.transitions,
            "seconds": self.seconds,
            "shortest_counterexample": self.shortest_counterexample,
            "exit_code": self.exit_code,
            "error": self.error,
            "claim_scope": self.claim_scope,
            "claim": self.claim,
            "trace_z": self.trace_z,
            "host": self.host,
            "finished_at": self.finished_at,
        }


def verdict(outcome: CheckerOutcome) -> CaseVerdict:
    """SW-ROW: ``deadlock``, ``violation``, ``incomplete`` or ``holds``."""
    if outcome.deadlock:
        return "deadlock"
    if outcome.violated:
        return "violation"
    if not outcome.complete:
        return "incomplete"
    return "holds"


def _error_text(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}".strip().rstrip(":")
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        text += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})"
    return text[:500]


def failure_result(
    case_id: str,
    status: CaseFailure,
    error: str,
    seconds: float | None = None,
    states: int | None = None,
) -> CaseResult:
    """SW-FAILURE: the result of a case that produced no verdict."""
    return CaseResult(
        case_id=case_id,
        verdict=status,
        complete=False,
        deadlock=None,
        deadlock_kind=None,
        blocked_forever=(),
        conservation=None,
        violated=(),
        states=states,
        transitions=None,
        seconds=seconds,
        shortest_counterexample=None,
        exit_code=None,
        error=error,
        trace_z=None,
        host=socket.gethostname(),
        finished_at=time.time(),
    )


def run_case(task: CaseTask, base: FlowGraph | dict[str, Any]) -> CaseResult:
    """One case within its budgets (SW-BUDGET); never raises for a case's own failure."""
    started = time.monotonic()
    budget = CaseBudget(task.max_states, started + task.max_seconds)
    _watchdog.arm(task.case_id, started + task.max_seconds * HARD_KILL_FACTOR + HARD_KILL_GRACE)
    try:
        with _alarm(task.max_seconds):
            checker: Any = resolve_checker(task.checker)
            outcome = checker(case_input(base, task), budget)
            trace_z = (
                zlib.compress(json.dumps(outcome.trace, separators=(",", ":")).encode(), 1)
                if outcome.trace is not None
                else None
            )
    except CaseTimeout:
        explored = f" ({budget.states:,} states explored)" if budget.states else ""
        return failure_result(
            task.case_id,
            "timeout",
            f"no verdict within max_seconds = {task.max_seconds:g}{explored}",
            time.monotonic() - started,
            budget.states or None,
        )
    except Exception as exc:  # a case's own failure becomes its row (SW-FAILURE)
        return failure_result(task.case_id, "error", _error_text(exc), time.monotonic() - started)
    finally:
        _watchdog.disarm()
    return CaseResult(
        case_id=task.case_id,
        verdict=verdict(outcome),
        complete=outcome.complete,
        deadlock=outcome.deadlock,
        deadlock_kind=outcome.deadlock_kind,
        blocked_forever=tuple(outcome.blocked_forever),
        conservation=outcome.conservation,
        violated=tuple(outcome.violated),
        states=outcome.states,
        transitions=outcome.transitions,
        seconds=time.monotonic() - started,
        shortest_counterexample=outcome.shortest_counterexample,
        exit_code=outcome.exit_code,
        error=None,
        trace_z=trace_z,
        host=socket.gethostname(),
        finished_at=time.time(),
        claim_scope=outcome.claim_scope,
        claim=outcome.claim,
    )


def run_batch(batch: Batch) -> list[dict[str, Any]]:
    """SW-ENGINE: every case of ``batch``, in order (the function executors run)."""
    results = []
    for task in batch.tasks:
        try:
            base = _base_graph(task.graph_key, batch.graphs[task.graph_key])
        except Exception as exc:
            results.append(failure_result(task.case_id, "error", _error_text(exc)).to_row())
            continue
        results.append(run_case(task, base).to_row())
    return results
