"""Engines that run batches (SW-ENGINE): Spark, and a process pool for the benchmark.

:class:`SparkRunner` is the pipeline's engine: one Spark job per wave, one partition
(task) per batch, ``mapPartitions`` calling the work function once per batch, so there
is no per-case Python overhead between the JVM and the workers. :class:`PoolRunner`
(``multiprocessing.Pool``) exists for ``benchmarks/sweep_bench.py``'s comparison; it
does not survive a worker crash, so the command line never uses it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from creditflow.conformance.sweep.engine import Result, WorkFn

if TYPE_CHECKING:
    from pyspark import SparkContext


def _apply(fn: WorkFn, batches: Iterator[Any]) -> Iterator[list[Result]]:
    for batch in batches:
        yield fn(batch)


def _warm(slots: Iterable[int]) -> Iterator[int]:
    import time

    started = time.monotonic()
    importlib.import_module("creditflow.conformance.sweep.worker")
    time.sleep(max(0.0, 0.5 - (time.monotonic() - started)))  # keep every slot busy
    yield os.getpid()


class SparkRunner:
    """Runs each wave as one Spark job; jobs are tagged with a group so they can be
    cancelled (Ctrl-C)."""

    def __init__(self, sc: SparkContext) -> None:
        self.sc = sc
        self.parallelism = max(1, int(sc.defaultParallelism))

    def warm_up(self) -> int:
        """Start a Python worker per slot and import the sweep code in it (part of the
        engine's start-up; a pool's forked workers inherit the imports). Returns how many
        worker processes answered."""
        slots = self.parallelism
        pids = self.sc.parallelize(range(slots), slots).mapPartitions(_warm).collect()
        return len(set(pids))

    def run(self, fn: WorkFn, batches: Sequence[Any], group: str) -> list[list[Result]]:
        self.sc.setJobGroup(group, f"creditflow: {len(batches)} batches", interruptOnCancel=True)
        rdd = self.sc.parallelize(list(batches), numSlices=len(batches))
        return rdd.mapPartitions(partial(_apply, fn)).collect()

    def cancel_all(self) -> None:
        with contextlib.suppress(Exception):  # the context may be gone (Ctrl-C at shutdown)
            self.sc.cancelAllJobs()


class PoolRunner:
    """``multiprocessing.Pool(processes)``: the benchmark's comparison engine."""

    def __init__(self, processes: int) -> None:
        import multiprocessing

        self.parallelism = processes
        self.pool = multiprocessing.get_context("fork").Pool(processes)

    def run(self, fn: WorkFn, batches: Sequence[Any], group: str) -> list[list[Result]]:
        return self.pool.map(fn, batches, chunksize=1)

    def cancel_all(self) -> None:
        self.pool.terminate()

    def close(self) -> None:
        self.pool.close()
        self.pool.join()
