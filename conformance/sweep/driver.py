"""A sweep from file to Parquet: plan what is left, run it, commit as it finishes.

:func:`plan_sweep` expands the sweep file and subtracts the cases already in the
output folder (SW-RESUME); :func:`run_sweep` batches the rest, runs them on a
:class:`~creditflow.conformance.sweep.engine.Runner` and commits each finished job's
rows, traces first (SW-TRACE, SW-COMMIT). Neither prints: the command line renders the
:class:`SweepProgress` callbacks and the :class:`SweepRun` result.
"""

from __future__ import annotations

import math
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.sweep.cases import Case, GraphInstance, expand
from creditflow.conformance.sweep.engine import EngineStats, Runner, run_waves
from creditflow.conformance.sweep.schema import FAILED
from creditflow.conformance.sweep.store import SweepStore, Written
from creditflow.conformance.sweep.sweepfile import SweepSpec
from creditflow.conformance.sweep.worker import (
    HARD_KILL_FACTOR,
    HARD_KILL_GRACE,
    HARD_KILL_MARK,
    Batch,
    failure_result,
    run_batch,
)

MAX_BATCH = 512
#: SW-ENGINE: the first batches (before any case has been timed) hold this many cases.
FIRST_BATCH = 8
#: SW-ENGINE: later batches are sized to take about this long on one slot.
TARGET_TASK_SECONDS = 4.0


@dataclass
class SweepPlan:
    sweep: SweepSpec
    cases: list[Case]
    graphs: dict[str, GraphInstance]
    written: dict[str, Written]
    pending: list[Case]
    #: rows in the folder whose case is not in this sweep file (kept, never touched)
    foreign: int

    def per_family(self) -> dict[str, tuple[int, int, int]]:
        """Family -> (graphs, cases, pending)."""
        out: dict[str, list[int]] = {}
        for g in self.graphs.values():
            out.setdefault(g.family, [0, 0, 0])[0] += 1
        for c in self.cases:
            out[c.graph.family][1] += 1
        for c in self.pending:
            out[c.graph.family][2] += 1
        return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def plan_sweep(sweep: SweepSpec, store: SweepStore, retry: Iterable[str] = ()) -> SweepPlan:
    """SW-RESUME: every case of ``sweep`` without a row in ``store`` is pending, and so is
    every case whose latest row's verdict is in ``retry``."""
    cases, graphs = expand(sweep)
    written = store.written()
    retry = frozenset(retry)
    pending = [c for c in cases if c.case_id not in written or written[c.case_id].verdict in retry]
    ids = {c.case_id for c in cases}
    foreign = sum(1 for case_id in written if case_id not in ids)
    return SweepPlan(sweep, cases, graphs, written, pending, foreign)


@dataclass
class SweepProgress:
    total: int
    done: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)


@dataclass
class SweepRun:
    run_id: str
    cases: int
    pending: int
    written: int
    verdicts: Counter[str]
    seconds: float
    parts: int
    #: the size of every batch, in the order they were made (SW-ENGINE)
    batch_sizes: list[int]
    parallelism: int
    stats: EngineStats


def auto_batch_size(pending: int, parallelism: int) -> int:
    """A fixed batch size for work of unknown cost: about eight batches per slot, at
    most :data:`MAX_BATCH` items."""
    return max(1, min(MAX_BATCH, math.ceil(pending / (parallelism * 8))))


def shuffled(cases: list[Case]) -> list[Case]:
    """Cases in a fixed pseudo-random order, so slow families spread over all tasks."""
    order = list(cases)
    random.Random(0).shuffle(order)
    return order


def batch_of(cases: list[Case], batch_id: str) -> Batch:
    """A batch carrying the graphs its cases use."""
    graphs = {c.task.graph_key: c.graph.node_link for c in cases}
    return Batch(batch_id, graphs, tuple(c.task for c in cases))


def make_batches(cases: list[Case], batch_size: int) -> list[Batch]:
    order = shuffled(cases)
    return [batch_of(order[i : i + batch_size], f"b{i}") for i in range(0, len(order), batch_size)]


class Batcher:
    """SW-ENGINE: cuts pending cases into waves of ``2 x slots`` batches. With no fixed
    size, the first batches hold :data:`FIRST_BATCH` cases and later ones as many as
    take about :data:`TARGET_TASK_SECONDS` at the mean case time seen so far (at most
    :data:`MAX_BATCH`); near the end, batches shrink so every slot gets work."""

    def __init__(self, cases: list[Case], slots: int, fixed: int | None = None) -> None:
        self.cases = shuffled(cases)
        self.slots = max(1, slots)
        self.fixed = fixed
        self.position = 0
        self.timed = 0
        self.case_seconds = 0.0
        self.sizes: list[int] = []

    def observe(self, results: list[dict[str, Any]]) -> None:
        for r in results:
            if r.get("seconds") is not None:
                self.timed += 1
                self.case_seconds += r["seconds"]

    def next_size(self) -> int:
        if self.fixed:
            return self.fixed
        if not self.timed:
            size = FIRST_BATCH
        else:
            mean = max(self.case_seconds / self.timed, 1e-4)
            size = max(1, min(MAX_BATCH, int(TARGET_TASK_SECONDS / mean)))
        remaining = len(self.cases) - self.position
        return max(1, min(size, math.ceil(remaining / (2 * self.slots))))

    def waves(self) -> Iterator[list[Batch]]:
        while self.position < len(self.cases):
            wave = []
            size = self.next_size()  # one size per wave: the last wave splits evenly
            for _ in range(2 * self.slots):
                if self.position >= len(self.cases):
                    break
                chunk = self.cases[self.position : self.position + size]
                wave.append(batch_of(chunk, f"b{self.position}"))
                self.sizes.append(len(chunk))
                self.position += len(chunk)
            yield wave


def _halves(batch: Batch) -> tuple[Batch, Batch]:
    mid = len(batch.tasks) // 2
    parts = []
    for suffix, tasks in (("a", batch.tasks[:mid]), ("b", batch.tasks[mid:])):
        graphs = {t.graph_key: batch.graphs[t.graph_key] for t in tasks}
        parts.append(Batch(batch.batch_id + suffix, graphs, tasks))
    return parts[0], parts[1]


def _isolated_failure(batch: Batch, reason: str, seconds: float) -> list[dict[str, Any]]:
    """SW-FAILURE: the one case of a task that failed alone: ``timeout`` if the watchdog
    killed it at its hard limit (SW-BUDGET), otherwise ``crashed`` with the engine's
    reason."""
    task = batch.tasks[0]
    if HARD_KILL_MARK in reason:
        hard = task.max_seconds * HARD_KILL_FACTOR + HARD_KILL_GRACE
        return [
            failure_result(
                task.case_id,
                "timeout",
                f"worker killed after the hard limit of {hard:g} s (the case ignored its "
                f"{task.max_seconds:g} s alarm)",
                seconds,
            ).to_row()
        ]
    return [failure_result(task.case_id, "crashed", f"task failed: {reason}", seconds).to_row()]


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def run_sweep(
    plan: SweepPlan,
    store: SweepStore,
    runner: Runner,
    *,
    batch_size: int | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    run_id: str | None = None,
    master: str = "",
) -> SweepRun:
    """Run every pending case of ``plan`` on ``runner`` and commit the rows to ``store``."""
    run_id = run_id or new_run_id()
    started = time.monotonic()
    batcher = Batcher(plan.pending, runner.parallelism, batch_size)
    by_id = {c.case_id: c for c in plan.pending}
    state = SweepProgress(total=len(plan.pending))
    parts = 0

    def commit(finished: list[tuple[Batch, list[dict[str, Any]]]]) -> None:
        nonlocal parts
        results = [r for _, batch_results in finished for r in batch_results]
        rows = []
        for result in results:
            case = by_id[result["case_id"]]
            trace_z = result.pop("trace_z", None)
            trace_path = (
                store.write_trace(case.graph.family, case.case_id, trace_z)
                if (trace_z is not None)
                else None
            )
            previous = plan.written.get(case.case_id)
            rows.append(
                {
                    **case.static_fields(),
                    **result,
                    "trace_path": trace_path,
                    "run_id": run_id,
                    "attempt": previous.attempt + 1 if previous else 1,
                }
            )
            state.verdicts[result["verdict"]] += 1
        store.commit(rows, run_id, parts)
        parts += 1
        state.done += len(rows)
        if progress is not None:
            progress(state)

    if progress is not None:
        progress(state)
    stats = EngineStats()
    try:
        if plan.pending:
            stats = run_waves(
                batcher.waves(),
                runner,
                run_batch,
                size=lambda b: len(b.tasks),
                split=_halves,
                failure_results=_isolated_failure,
                on_results=commit,
                observe=batcher.observe,
                probe=Batch("probe", {}, ()),
            )
    finally:
        store.log_run(
            {
                "run_id": run_id,
                "sweep": plan.sweep.name,
                "sweep_file": plan.sweep.path,
                "sweep_digest": plan.sweep.digest,
                "master": master,
                "parallelism": runner.parallelism,
                "cases": len(plan.cases),
                "pending": len(plan.pending),
                "written": state.done,
                "verdicts": dict(state.verdicts),
                "seconds": round(time.monotonic() - started, 3),
                "complete": state.done == len(plan.pending),
            }
        )
    return SweepRun(
        run_id=run_id,
        cases=len(plan.cases),
        pending=len(plan.pending),
        written=state.done,
        verdicts=state.verdicts,
        seconds=time.monotonic() - started,
        parts=parts,
        batch_sizes=batcher.sizes,
        parallelism=runner.parallelism,
        stats=stats,
    )


def failed_verdicts(include_incomplete: bool) -> frozenset[str]:
    """SW-RESUME: the verdicts ``--retry-failed`` (and ``--retry-incomplete``) rerun."""
    return frozenset(FAILED) | ({"incomplete"} if include_incomplete else frozenset())
