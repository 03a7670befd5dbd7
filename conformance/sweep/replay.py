"""Replaying a corpus of traces across executors, with a pluggable replay function
(SW-REPLAY).

A *replay function* takes the path of one trace file. It returns normally when the
trace replays, and signals the outcome otherwise by what it raises:

* a divergence: :class:`~creditflow.conformance.traces.network.TraceReplayError`, an
  ``AssertionError``, or any exception with a true ``divergence`` attribute;
* a file that is not a usable trace: :class:`~creditflow.conformance.inputs.itf.TraceFormatError`;
* anything else: the replay function (adapter) itself failed.

It may also return an object with ``ok = False`` (and a ``message``) for a divergence;
``states`` (a list) or ``steps`` (an int) on the returned object give the row's step
count. Built in: ``network`` = ``replay_network_trace`` (the explorer's network traces
through the model), and ``adapter:NAME`` for every adapter of ``creditflow adapters``
(``adapter:rabbitmq`` = the real ``credit_flow`` module in an Erlang VM, ``adapter:reference``,
``adapter:mutant:…``): per-process and network traces replayed by
:func:`creditflow.conformance.differential.replay.replay_trace`, one adapter kept open per executor
process (restarted after it fails). Any other function: ``package.module:function``.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from creditflow.conformance import exit_codes
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.sweep.driver import SweepProgress, auto_batch_size, new_run_id
from creditflow.conformance.sweep.engine import run_waves, waves_of
from creditflow.conformance.sweep.named_functions import import_named_function
from creditflow.conformance.traces.network import TraceReplayError

BUILTIN_REPLAY = {"network": "creditflow.conformance.traces.network:replay_network_trace"}
ADAPTER_PREFIX = "adapter:"
STATUSES = ("ok", "diverged", "bad-trace", "error", "crashed")

ReplayFn = Callable[[str], Any]


class ReplayError(ValueError):
    """Bad usage of the replay job; the message is one line."""


def resolve_replay(name: str) -> ReplayFn:
    """SW-REPLAY: the replay function called ``name`` (built in, or module:function).
    ``adapter:NAME`` lives one layer up: :func:`creditflow.adapters.corpus_replay.resolve`
    handles it and hands everything else to this function."""
    if name.startswith(ADAPTER_PREFIX):
        raise ReplayError(
            f"replay function {name!r}: adapters are resolved by the command line "
            "(creditflow.adapters.corpus_replay.resolve), not here"
        )
    target = BUILTIN_REPLAY.get(name, name)
    if ":" not in target:
        raise ReplayError(
            f"unknown replay function {name!r} (built in: {', '.join(BUILTIN_REPLAY)}, "
            "adapter:NAME; or name one as package.module:function)"
        )
    return import_named_function(target, f"replay function {name!r}", ReplayError)


def check_glob(pattern: str) -> None:
    """SW-GLOB: a ``--glob`` pattern is relative, inside the corpus (no ``..``), with
    ``**`` only as a whole path component, and no NUL; else :class:`ReplayError`."""
    parts = pattern.split("/")
    problem = (
        "is empty"
        if not pattern.strip()
        else "is not relative to the corpus"
        if pattern.startswith("/")
        else "leaves the corpus (..)"
        if ".." in parts
        else "has a NUL character"
        if "\0" in pattern
        else "has '**' inside a path component (use it as a whole component: **/x)"
        if any("**" in part and part != "**" for part in parts)
        else None
    )
    if problem is not None:
        raise ReplayError(f"--glob {pattern!r} {problem}")


def corpus_files(corpus: Path, pattern: str) -> list[str]:
    """The trace files under ``corpus``, as absolute paths (executors do not share the
    driver's working directory)."""
    check_glob(pattern)
    try:
        files = sorted(str(p.resolve()) for p in corpus.glob(pattern) if p.is_file())
    except (ValueError, NotImplementedError, OSError) as exc:
        raise ReplayError(f"--glob {pattern!r}: {exc}") from None
    if not files:
        raise ReplayError(f"{corpus}: no files match {pattern!r}")
    return files


class ReplayBatch(NamedTuple):
    """One executor task: ``resolver(replay)`` is the replay function for ``paths``
    (a module-level function, so that it pickles by reference)."""

    replay: str
    paths: tuple[str, ...]
    resolver: Callable[[str], ReplayFn] = resolve_replay


def _steps(outcome: Any) -> int | None:
    states = getattr(outcome, "states", None)
    if isinstance(states, list):
        return max(0, len(states) - 1)
    steps = getattr(outcome, "steps", None)
    return steps if isinstance(steps, int) else None


#: SW-REPLAY: how one trace's replay ended
TraceStatus = Literal["ok", "diverged", "bad-trace", "error", "crashed"]


@dataclass(frozen=True, slots=True)
class TraceReplayResult:
    """SW-REPLAY, OUT-TYPED-RESULT: one trace's replay; :meth:`to_row` is its stored row
    (without ``run_id``, which the commit adds)."""

    path: str
    replay: str
    status: TraceStatus
    message: str | None
    steps: int | None
    seconds: float | None
    host: str
    finished_at: float

    def to_row(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "replay": self.replay,
            "status": self.status,
            "message": self.message,
            "steps": self.steps,
            "seconds": self.seconds,
            "host": self.host,
            "finished_at": self.finished_at,
        }


def _row(
    path: str,
    replay: str,
    status: TraceStatus,
    message: str | None,
    steps: int | None,
    seconds: float | None,
) -> TraceReplayResult:
    return TraceReplayResult(
        path, replay, status, message, steps, seconds, socket.gethostname(), time.time()
    )


def _message(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    if not isinstance(exc, (TraceReplayError, InputError, AssertionError)):
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        text = f"{type(exc).__name__}: {text}{where}"
    return text[:500]


def replay_one(fn: ReplayFn, path: str, replay: str) -> TraceReplayResult:
    """SW-REPLAY: one trace's row; never raises for the trace's own outcome."""
    started = time.monotonic()
    try:
        outcome = fn(path)
    except InputError as exc:  # IN-ONE-LINE: any unusable trace file (TraceFormatError, …)
        return _row(path, replay, "bad-trace", _message(exc), None, time.monotonic() - started)
    except (TraceReplayError, AssertionError) as exc:
        return _row(path, replay, "diverged", _message(exc), None, time.monotonic() - started)
    except Exception as exc:
        status: TraceStatus = "diverged" if getattr(exc, "divergence", False) else "error"
        return _row(path, replay, status, _message(exc), None, time.monotonic() - started)
    seconds = time.monotonic() - started
    if getattr(outcome, "ok", True) is False:
        message = str(getattr(outcome, "message", "") or "the replay function reported ok=False")
        return _row(path, replay, "diverged", message[:500], _steps(outcome), seconds)
    return _row(path, replay, "ok", None, _steps(outcome), seconds)


def replay_batch(batch: ReplayBatch) -> list[dict[str, Any]]:
    """The function executors run: every trace of ``batch``, in order."""
    try:
        fn = batch.resolver(batch.replay)
    except ReplayError as exc:
        return [_row(p, batch.replay, "error", str(exc), None, None).to_row() for p in batch.paths]
    return [replay_one(fn, path, batch.replay).to_row() for path in batch.paths]


def _schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("path", pa.string()),
            ("replay", pa.string()),
            ("status", pa.string()),
            ("message", pa.string()),
            ("steps", pa.int64()),
            ("seconds", pa.float64()),
            ("host", pa.string()),
            ("finished_at", pa.timestamp("ms", tz="UTC")),
            ("run_id", pa.string()),
        ]
    )


@dataclass
class ReplayRun:
    run_id: str
    path: Path
    statuses: Counter[str]
    seconds: float
    problems: list[dict[str, Any]] = field(default_factory=list)


def run_replay(
    files: list[str],
    replay: str,
    runner: Any,
    out: Path,
    *,
    batch_size: int | None = None,
    progress: Callable[[Any], None] | None = None,
    resolver: Callable[[str], ReplayFn] = resolve_replay,
) -> ReplayRun:
    """SW-REPLAY: replay ``files`` on ``runner``; rows go to ``out`` as Parquet parts,
    committed as each job finishes (SW-COMMIT), crashes isolated (SW-FAILURE).
    ``resolver`` turns the replay name into a function on each executor."""
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    run_id = new_run_id()
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    size = batch_size or auto_batch_size(len(files), runner.parallelism)
    batches = [
        ReplayBatch(replay, tuple(files[i : i + size]), resolver)
        for i in range(0, len(files), size)
    ]
    state = SweepProgress(total=len(files))
    run = ReplayRun(run_id, out, Counter(), 0.0)
    seq = 0

    def commit(finished: list[tuple[ReplayBatch, list[dict[str, Any]]]]) -> None:
        nonlocal seq
        rows = [row for _, batch_rows in finished for row in batch_rows]
        for row in rows:
            row["run_id"] = run_id
            row["finished_at"] = datetime.datetime.fromtimestamp(
                row["finished_at"], tz=datetime.UTC
            )
            run.statuses[row["status"]] += 1
            state.verdicts[row["status"]] += 1
            if row["status"] != "ok":
                run.problems.append(row)
        path = out / f"replay-{run_id}-{seq:05d}.parquet"
        tmp = out / f".{path.name}.tmp"
        pq.write_table(pa.Table.from_pylist(rows, schema=_schema()), tmp)
        os.replace(tmp, path)
        seq += 1
        state.done += len(rows)
        if progress is not None:
            progress(state)

    def halves(batch: ReplayBatch) -> tuple[ReplayBatch, ReplayBatch]:
        mid = len(batch.paths) // 2
        return (
            ReplayBatch(replay, batch.paths[:mid], resolver),
            ReplayBatch(replay, batch.paths[mid:], resolver),
        )

    def crashed(batch: ReplayBatch, reason: str, seconds: float) -> list[dict[str, Any]]:
        return [
            _row(
                batch.paths[0], replay, "crashed", f"task failed: {reason}", None, seconds
            ).to_row()
        ]

    if progress is not None:
        progress(state)
    run_waves(
        waves_of(batches, 2 * runner.parallelism),
        runner,
        replay_batch,
        size=lambda b: len(b.paths),
        split=halves,
        failure_results=crashed,
        on_results=commit,
        probe=ReplayBatch(replay, (), resolver),
    )
    run.seconds = time.monotonic() - started
    return run


def summary_exit_code(statuses: Counter[str]) -> int:
    """SW-REPLAY: 3 if the replay function failed anywhere, else 1 if a trace diverged,
    else 2 if a file was not a usable trace, else 0."""
    if statuses.get("error") or statuses.get("crashed"):
        return exit_codes.ADAPTER_FAILURE
    if statuses.get("diverged"):
        return exit_codes.DIVERGENCE
    if statuses.get("bad-trace"):
        return exit_codes.USAGE
    return exit_codes.OK
