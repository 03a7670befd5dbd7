"""Distributing batches in waves and isolating failures (SW-ENGINE, SW-FAILURE).

The engine knows nothing about cases: it runs a module-level function ``fn(batch) ->
list[result]`` over batches through a :class:`Runner` (Spark, or a process pool for the
benchmark), a *wave* of batches per job with two waves in flight, so the driver commits
results while executors keep working. When a job fails (a worker crashed or was
killed), its batches are rerun one per job, and a failing batch is halved until the
failing unit is one case: that case alone gets a failure result; nothing else is lost.
"""

from __future__ import annotations

import queue as queues
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

B = TypeVar("B")
Result = dict[str, Any]
WorkFn = Callable[[Any], list[Result]]


class Runner(Protocol):
    """An engine that runs ``fn`` over batches on its workers, one task per batch."""

    parallelism: int

    def run(self, fn: WorkFn, batches: Sequence[Any], group: str) -> list[list[Result]]: ...

    def cancel_all(self) -> None: ...


class EngineError(RuntimeError):
    """The engine itself is broken (every task fails): the sweep stops, keeping what was
    committed. The message is one line."""


def failure_summary(exc: BaseException) -> str:
    """One line saying why a job failed, without the JVM's stack traces."""
    text = str(exc)
    match = re.search(r"most recent failure: [^\n]*?\): ([^\n]+)", text)
    if match:
        line = match.group(1)
    else:
        exception_line = re.compile(r"\s*\w+(\.\w+)*(Error|Exception)\b")
        python_lines = [ln.strip() for ln in text.splitlines() if exception_line.match(ln)]
        line = python_lines[-1] if python_lines else (text.strip().splitlines() or [repr(exc)])[0]
    line = re.sub(r"^(org\.apache\.spark\.|java\.\w+\.)[\w.]*?(\w+Exception): ", r"\2: ", line)
    line = line.split(". Consider setting")[0]
    return line.strip().rstrip(":").strip()[:300] or type(exc).__name__


@dataclass
class _Job(Generic[B]):
    batches: list[B]
    #: 0: a wave; 1: one batch; 2: a half or smaller piece of a batch
    level: int
    started: float = field(default_factory=time.monotonic)


@dataclass
class EngineStats:
    jobs: int = 0
    failed_jobs: int = 0
    isolated_failures: int = 0


def waves_of(batches: Sequence[B], per_wave: int) -> Iterator[list[B]]:
    """Fixed batches cut into waves of ``per_wave``."""
    for i in range(0, len(batches), per_wave):
        yield list(batches[i : i + per_wave])


def run_waves(
    waves: Iterator[list[B]],
    runner: Runner,
    fn: WorkFn,
    *,
    size: Callable[[B], int],
    split: Callable[[B], tuple[B, B]],
    failure_results: Callable[[B, str, float], list[Result]],
    on_results: Callable[[list[tuple[B, list[Result]]]], None],
    probe: B,
    observe: Callable[[list[Result]], None] | None = None,
    in_flight: int = 2,
) -> EngineStats:
    """SW-ENGINE: run ``fn`` over every batch of every wave, one job per wave, ``in_flight``
    jobs at a time; call ``on_results([(batch, results), …])`` in this thread as each job
    finishes. ``waves`` is consumed lazily, so it may size later batches from earlier
    results. SW-FAILURE: a failed job is split (waves into batches, batches into halves);
    a single item that still fails gets ``failure_results(batch, reason, seconds)``. If a
    ``probe`` job fails too, the engine is broken: :class:`EngineError`. ``observe``
    sees each finished job's results before the next wave is made."""
    queue: deque[_Job[B]] = deque()
    stats = EngineStats()
    counter = iter(range(1 << 62))
    finished: queues.SimpleQueue[tuple[_Job[B], Any, BaseException | None]] = queues.SimpleQueue()
    running = 0

    def launch(job: _Job[B]) -> None:
        group = f"creditflow-{next(counter)}"

        def target() -> None:
            try:
                finished.put((job, runner.run(fn, job.batches, group), None))
            except BaseException as exc:  # reported to the driver thread
                finished.put((job, None, exc))

        job.started = time.monotonic()
        # daemon threads: an interrupted sweep must not wait for its jobs at exit
        threading.Thread(target=target, name=group, daemon=True).start()
        stats.jobs += 1

    def submit() -> None:
        nonlocal running
        while running < in_flight:
            if not queue:
                wave = next(waves, None)
                if wave is None:
                    return
                queue.append(_Job(wave, 0))
            launch(queue.popleft())
            running += 1

    def handle_failure(job: _Job[B], exc: BaseException) -> None:
        stats.failed_jobs += 1
        reason = failure_summary(exc)
        try:
            runner.run(fn, [probe], "creditflow-probe")
        except Exception as probe_exc:
            raise EngineError(
                f"every task fails, even an empty one: {failure_summary(probe_exc)}"
            ) from None
        if len(job.batches) > 1:
            queue.extendleft(_Job([b], 1) for b in reversed(job.batches))
            return
        batch = job.batches[0]
        if size(batch) > 1:
            first, second = split(batch)
            queue.extendleft([_Job([second], 2), _Job([first], 2)])
            return
        stats.isolated_failures += 1
        on_results([(batch, failure_results(batch, reason, time.monotonic() - job.started))])

    try:
        submit()
        while running:
            try:
                job, results, error = finished.get(timeout=0.5)
            except queues.Empty:
                continue
            running -= 1
            if error is not None:
                if not isinstance(error, Exception):
                    raise error
                handle_failure(job, error)
                submit()
            else:
                if observe is not None:
                    observe([r for batch_results in results for r in batch_results])
                submit()  # keep the executors busy while this job's rows are committed
                on_results(list(zip(job.batches, results, strict=True)))
    except BaseException:
        # Ctrl-C, a broken engine or a failed commit: stop the jobs still running (what
        # was committed stays committed).
        runner.cancel_all()
        raise
    return stats
