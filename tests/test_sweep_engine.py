"""The wave engine's failure isolation, driven by an in-process runner that fails a job
the way Spark does when a worker dies (the real Spark path: test_sweep_spark.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from creditflow.conformance.sweep.engine import EngineError, failure_summary, run_waves, waves_of


class Poisoned(RuntimeError):
    pass


class InlineRunner:
    """Runs each job in this process; a job containing a poisoned item fails whole."""

    parallelism = 2

    def __init__(self, poison: set[int], broken: bool = False) -> None:
        self.poison = poison
        self.broken = broken
        self.jobs: list[list[tuple[int, ...]]] = []

    def run(self, fn, batches: Sequence[tuple[int, ...]], group: str):
        self.jobs.append(list(batches))
        if self.broken or any(i in self.poison for b in batches for i in b):
            raise Poisoned(
                "Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 "
                "times, most recent failure: Lost task 0.0 in stage 3.0 (TID 9) "
                "(localhost executor driver): org.apache.spark.SparkException: "
                "Python worker exited unexpectedly (crashed). Consider setting x"
            )
        return [fn(b) for b in batches]

    def cancel_all(self) -> None:
        pass


def square_all(batch: tuple[int, ...]) -> list[dict]:
    return [{"item": i, "value": i * i} for i in batch]


def run(items: list[int], batch: int, runner: InlineRunner):
    batches = [tuple(items[i : i + batch]) for i in range(0, len(items), batch)]
    got: dict[int, dict] = {}

    def on_results(finished):
        for _, results in finished:
            for r in results:
                assert r["item"] not in got
                got[r["item"]] = r

    stats = run_waves(
        waves_of(batches, 4),
        runner,
        square_all,
        size=len,
        split=lambda b: (b[: len(b) // 2], b[len(b) // 2 :]),
        failure_results=lambda b, reason, s: [{"item": b[0], "failed": reason}],
        on_results=on_results,
        probe=(),
    )
    return got, stats


def test_every_item_once_without_failures():
    """SW-ENGINE: every batch runs once, a wave per job."""
    runner = InlineRunner(set())
    got, stats = run(list(range(100)), 7, runner)
    assert sorted(got) == list(range(100))
    assert all(r["value"] == r["item"] ** 2 for r in got.values())
    assert stats.failed_jobs == 0
    assert max(len(job) for job in runner.jobs) == 4


def test_a_crash_costs_only_its_own_item():
    """SW-FAILURE: failing jobs are split until the poisoned items are alone; exactly those
    get failure results, with the engine's one-line reason; everything else is computed."""
    poison = {13, 14, 77}
    got, stats = run(list(range(100)), 10, InlineRunner(poison))
    assert sorted(got) == list(range(100))
    failed = {i for i, r in got.items() if "failed" in r}
    assert failed == poison
    assert got[13]["failed"] == "SparkException: Python worker exited unexpectedly (crashed)"
    assert stats.isolated_failures == 3
    assert all(got[i]["value"] == i * i for i in set(range(100)) - poison)


def test_a_broken_engine_stops_instead_of_failing_every_case():
    """SW-FAILURE: when even the empty probe job fails, the engine raises EngineError."""
    with pytest.raises(EngineError, match="every task fails"):
        run(list(range(10)), 5, InlineRunner(set(), broken=True))


def test_failure_summary_of_python_exceptions():
    """SW-FAILURE: a Python traceback's last exception line is the reason."""
    text = (
        'Traceback (most recent call last):\n  File "x.py", line 1\n'
        "ModuleNotFoundError: No module named 'creditflow'\n"
    )
    assert failure_summary(RuntimeError(text)) == (
        "ModuleNotFoundError: No module named 'creditflow'"
    )
