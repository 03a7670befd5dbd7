"""Known findings of the queue end and its replay (AD-AMQ-FIFO-EXPECTATIONS,
AD-AMQ-FIFO-REPLAY).

The expectations file is the NET family's (AD-EXPECTATIONS: ``known_divergences``
naming traces), here queue-run traces (AD-AMQ-FIFO-TRACE). Each listed trace is run on
the adapter: one that fails gives the signature ``conform`` masks (FIND-SIGNATURE,
``QueueMasker``), one that passes is an unexpected pass. ``replay`` runs queue-run
traces with the same judgement."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from creditflow.conformance import exit_codes
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.expected import find_witness
from creditflow.conformance.differential.replay import status_counts
from creditflow.conformance.differential.traces import SUFFIX
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.conformance.families.amqp.queue_conform import (
    QueueExpectations,
    QueueMasker,
    QueueRun,
    queue_finding,
    run_queue_ops,
)
from creditflow.conformance.families.amqp.queue_traces import LoadedQueueTrace, load_queue_trace
from creditflow.conformance.inputs.expectations import Expectations, ExpectationsError
from creditflow.conformance.inputs.itf import TraceFormatError


def queue_corpus_dir() -> Path:
    """AD-AMQ-FIFO-EXPECTATIONS: the shipped queue-run traces (package data), a folder of
    their own so that a link-end replay of ``corpus/amqp/`` never meets one."""
    return Path(str(resources.files("creditflow.conformance") / "corpus" / "amqp_queue"))


def resolve_queue(
    adapter: AmqpAdapter,
    expectations: Expectations,
    folders: Iterable[Path] = (),
    loaded: Sequence[LoadedQueueTrace] = (),
) -> QueueExpectations:
    """AD-AMQ-FIFO-EXPECTATIONS: run every listed trace (one of ``loaded`` by name, else
    looked up as AD-EXPECTATIONS-CONFORM says, then in the shipped queue-run corpus,
    ``corpus/amqp_queue/``).
    Raises :class:`ExpectationsError` for a trace that cannot be found or read, and
    ``AdapterFailure``."""
    by_name = {t.name: t for t in loaded}
    known: list[tuple[str, str, str]] = []
    passes: list[str] = []
    for name, reason in expectations.known.items():
        trace = by_name.get(name)
        if trace is None:
            path = find_witness(name, expectations, [*folders, queue_corpus_dir()])
            if path is None:
                raise ExpectationsError(
                    f"{expectations.path}: no trace {name}{SUFFIX} in the expectations' "
                    "folder, the traces given or the shipped corpus"
                )
            try:
                trace = load_queue_trace(path)
            except TraceFormatError as exc:
                raise ExpectationsError(str(exc)) from None
        run = run_queue_ops(adapter, trace.trace.sizes, trace.trace.ops)
        if run.failed:
            known.append((name, reason, run.signature))
        else:
            passes.append(name)
    return QueueExpectations(tuple(known), tuple(passes))


QueueReplayStatus = Literal["PASS", "XFAIL", "XPASS", "DIVERGED"]


@dataclass(frozen=True)
class QueueReplayOutcome:
    trace: LoadedQueueTrace
    status: QueueReplayStatus
    run: QueueRun
    reason: str = ""  #: the expectation's reason (XFAIL, XPASS)


@dataclass(frozen=True)
class QueueReplayReport:
    """``replay --adapter rabbit-fifo`` (AD-AMQ-FIFO-REPLAY, OUT-TYPED-RESULT)."""

    adapter: str
    version: str
    outcomes: tuple[QueueReplayOutcome, ...] = ()
    expectations: QueueExpectations | None = None
    failure: str | None = None
    expectations_error: str | None = None

    @property
    def exit_code(self) -> int:
        """2 a bad expectations file, 3 the adapter failed, 1 a divergence or an
        unexpected pass, 4 nothing ran (REPLAY-NOTHING-RAN), else 0."""
        unexpected = self.expectations.unexpected_passes if self.expectations else ()
        return exit_codes.replay_exit_code(
            bad_input=self.expectations_error is not None,
            adapter_failed=self.failure is not None,
            diverged=bool(unexpected)
            or any(o.status in ("DIVERGED", "XPASS") for o in self.outcomes),
            ran=len(self.outcomes),
        )

    @property
    def counts(self) -> dict[str, int]:
        return status_counts(get_args(QueueReplayStatus), self.outcomes)

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``replay --json``'s document for the queue end."""
        traces = []
        for o in self.outcomes:
            entry: dict[str, Any] = {
                "trace": str(o.trace.path),
                "ops": len(o.trace.trace.ops),
                "status": o.status,
                "run": o.run.to_json(),
            }
            if o.reason:
                entry["expected"] = o.reason
            if o.run.failed:
                entry["finding"] = queue_finding(o.run, "replay", str(o.trace.path)).to_json()
            traces.append(entry)
        return {
            "family": "amqp",
            "adapter": self.adapter,
            "version": self.version,
            "exit_code": self.exit_code,
            "counts": self.counts,
            "traces": traces,
            "failure": self.failure,
        }


def replay_queue_traces(
    factory: Any,
    traces: Sequence[LoadedQueueTrace],
    expectations: Expectations | None = None,
) -> QueueReplayReport:
    """AD-AMQ-FIFO-REPLAY: each trace from ``reset``; with ``expectations`` a failure
    with a listed signature is masked (as ``conform`` does) and, if nothing else fails,
    expected (XFAIL); a listed trace that passes is an XPASS."""
    name, version = "rabbit-fifo", "?"
    try:
        adapter: AmqpAdapter = factory()
    except AdapterFailure as exc:
        return QueueReplayReport(name, version, failure=str(exc))
    outcomes: list[QueueReplayOutcome] = []
    resolved: QueueExpectations | None = None
    try:
        name, version = str(adapter.name), str(adapter.info.get("version"))
        if expectations is not None:
            try:
                resolved = resolve_queue(adapter, expectations, [t.path for t in traces], traces)
            except ExpectationsError as exc:
                return QueueReplayReport(name, version, expectations_error=str(exc))
        known = {sig: n for n, _r, sig in resolved.known} if resolved else {}
        reasons = dict(expectations.known) if expectations else {}
        mask = QueueMasker(adapter, known)
        for t in traces:
            run = run_queue_ops(adapter, t.trace.sizes, t.trace.ops)
            listed = reasons.get(t.name, "")
            if not run.failed:
                status: QueueReplayStatus = "XPASS" if listed else "PASS"
                outcomes.append(QueueReplayOutcome(t, status, run, listed))
                continue
            masked = mask(t.trace.sizes, t.trace.ops, run)
            if masked.failed:
                outcomes.append(QueueReplayOutcome(t, "DIVERGED", masked, listed))
            else:
                why = listed or next((reasons.get(n, "") for n in mask.hits), "")
                outcomes.append(QueueReplayOutcome(t, "XFAIL", run, why))
    except AdapterFailure as exc:
        return QueueReplayReport(name, version, tuple(outcomes), resolved, str(exc))
    finally:
        adapter.close()
    return QueueReplayReport(name, version, tuple(outcomes), resolved)
