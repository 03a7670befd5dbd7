"""``creditflow replay``: run saved traces against an adapter, deterministically
(TRACE-PROCESS-REPLAY), with an optional expectations file (AD-EXPECTATIONS).

:func:`replay_traces` returns one :class:`ReplayOutcome` per trace; the CLI and the
pytest plugin render them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal, Protocol, get_args

from creditflow.conformance import exit_codes
from creditflow.conformance.differential.adapter import Adapter, AdapterFailure
from creditflow.conformance.differential.expected import ResolvedExpectations, judge, resolve
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import Divergence, ProcessTrace
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.conformance.differential.traces import (
    SUFFIX,
    LoadedTrace,
    trace_digest,
    write_process_trace,
)
from creditflow.conformance.inputs.expectations import Expectations, ExpectationsError
from creditflow.conformance.outputs import OutputError, derived_path

PASS: Final = "pass"
DIVERGED: Final = "diverged"
XFAIL: Final = "xfail"
XPASS: Final = "xpass"
FAILED: Final = "adapter-failure"
#: AD-CAPABILITIES: the trace needs ops the implementation does not offer; not run.
NOT_OFFERED: Final = "not-offered"


#: How one replayed trace ended (``counts`` lists every one)
ReplayStatus = Literal["pass", "diverged", "xfail", "xpass", "adapter-failure", "not-offered"]


class _ListedPasses(Protocol):
    @property
    def unexpected_passes(self) -> Iterable[str]: ...


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _Outcome(Protocol):
    @property
    def trace(self) -> _Named: ...

    @property
    def status(self) -> str: ...


def unexpected_passes_among(
    expectations: _ListedPasses | None, outcomes: Iterable[_Outcome]
) -> tuple[str, ...]:
    """AD-EXPECTATIONS-MATCH: the listed traces that pass and were not among the traces
    replayed (those are ``xpass`` outcomes)."""
    if expectations is None:
        return ()
    replayed = {o.trace.name for o in outcomes}
    return tuple(n for n in expectations.unexpected_passes if n not in replayed)


def status_counts(statuses: Iterable[str], outcomes: Sequence[_Outcome]) -> dict[str, int]:
    """How many traces ended with each of ``statuses``, every status listed."""
    return {s: sum(1 for o in outcomes if o.status == s) for s in statuses}


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """One trace replayed: how it ended and why (OUT-TYPED-RESULT)."""

    trace: LoadedTrace
    status: ReplayStatus
    divergence: Divergence | None = None
    executed: ProcessTrace | None = None  #: the ops run, up to the divergence
    failure: AdapterFailure | None = None
    reason: str | None = None  #: the expectation, if the trace is listed
    shrunk: Path | None = None  #: where the shrunk trace was written (``--shrink``)
    missing_ops: tuple[str, ...] = ()  #: NOT_OFFERED: the ops the trace needs

    @property
    def ok(self) -> bool:
        return self.status in (PASS, XFAIL, NOT_OFFERED)


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """OUT-TYPED-RESULT: the outcome of each trace replayed, in order, built once the
    replay has ended."""

    adapter: str
    implementation: str
    outcomes: tuple[ReplayOutcome, ...] = ()
    failure: AdapterFailure | None = None  #: the adapter could not be started
    write_errors: tuple[OutputError, ...] = ()  #: OUT-FAILURE
    #: AD-EXPECTATIONS-MATCH: the expectations, each listed trace replayed
    expectations: ResolvedExpectations | None = None
    #: a bad expectations file (exit 2), found once the adapter ran its traces
    expectations_error: ExpectationsError | None = None

    @property
    def unexpected_passes(self) -> tuple[str, ...]:
        """Listed traces that pass and were not among the traces replayed (those are
        ``xpass`` outcomes)."""
        return unexpected_passes_among(self.expectations, self.outcomes)

    @property
    def exit_code(self) -> int:
        """``exit_codes.replay_exit_code``: 4 when every trace was NOT RUN
        (REPLAY-NOTHING-RAN)."""
        return exit_codes.replay_exit_code(
            bad_input=self.expectations_error is not None,
            adapter_failed=self.failure is not None
            or any(o.status == FAILED for o in self.outcomes),
            diverged=any(not o.ok for o in self.outcomes) or bool(self.unexpected_passes),
            ran=sum(o.status != NOT_OFFERED for o in self.outcomes),
        )

    @property
    def counts(self) -> dict[str, int]:
        """How many traces ended with each status, every status listed."""
        return {s: sum(1 for o in self.outcomes if o.status == s) for s in get_args(ReplayStatus)}

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA, OUT-TYPED-RESULT: ``replay --json``'s document."""
        traces = []
        for o in self.outcomes:
            entry: dict[str, Any] = {
                "trace": str(o.trace.path),
                "kind": o.trace.kind,
                "ops": len(o.trace.trace.steps),
                "status": o.status,
            }
            if o.reason:
                entry["expected"] = o.reason
            if o.divergence is not None:
                entry["divergence"] = {
                    "op_index": o.divergence.index + 1,
                    "op": o.divergence.op.request(),
                    "fields": [f.field for f in o.divergence.diffs],
                    "model": o.divergence.model.to_json(),
                    "implementation": o.divergence.implementation.to_json(),
                }
            if o.failure is not None:
                entry["failure"] = str(o.failure)
            if o.shrunk is not None:
                entry["shrunk"] = str(o.shrunk)
            if o.missing_ops:
                entry["ops_not_offered"] = list(o.missing_ops)
            traces.append(entry)
        out: dict[str, Any] = {
            "adapter": self.adapter,
            "implementation": self.implementation,
            "exit_code": self.exit_code,
            "traces": traces,
            "counts": self.counts,
        }
        if self.expectations is not None:
            out["expected_divergences"] = [
                {
                    "trace": k.name,
                    "why": k.reason,
                    "signature": sorted(k.signature.differences),
                    "op": k.op,
                }
                for k in self.expectations.known
            ]
            out["unexpected_passes"] = list(self.unexpected_passes)
            out["expectations_not_run"] = {k: list(v) for k, v in self.expectations.not_run.items()}
        if self.failure is not None:
            out["failure"] = str(self.failure)
        if self.expectations_error is not None:
            out["expectations_error"] = str(self.expectations_error)
        return out


def replay_trace(
    adapter: Adapter, loaded: LoadedTrace, expectations: ResolvedExpectations | None = None
) -> ReplayOutcome:
    """Replay one trace from a fresh ``reset``; the recorded answers are the model's
    (checked when the trace was loaded), so comparing with the model compares with the
    trace. With expectations (AD-EXPECTATIONS-MATCH, AD-EXPECTATIONS-MASK) every known
    divergence is masked: a trace whose only divergences are known ones is ``xfail``
    (listed or not: the same rule as ``conform``), one that diverges in another way
    ``diverged``, a listed one that passes ``xpass``. Raises :class:`AdapterFailure`."""
    listed = expectations.reason(loaded.name) if expectations else None
    offered = set(adapter.supported_ops)
    missing = tuple(sorted({op.kind for op in loaded.trace.ops} - offered))
    if missing:
        # AD-CAPABILITIES: reported as not run, never sent (and never a pass).
        return ReplayOutcome(loaded, NOT_OFFERED, reason=listed, missing_ops=missing)
    known = expectations.known if expectations else ()
    judged = judge(adapter, loaded.trace.spec, loaded.trace.ops, known)
    if judged.divergence is not None:
        return ReplayOutcome(loaded, DIVERGED, judged.divergence, judged.executed, reason=listed)
    if judged.met:
        reasons = {k.name: k.reason for k in known}
        why = listed or "; ".join(f"{reasons[n]} (as {n})" for n in dict.fromkeys(judged.met))
        return ReplayOutcome(loaded, XFAIL, reason=why)
    return ReplayOutcome(loaded, XPASS if listed else PASS, reason=listed)


def shrink_divergence(
    adapter: Adapter,
    outcome: ReplayOutcome,
    out_dir: Path,
    expectations: ResolvedExpectations | None = None,
) -> Path:
    """Delta-debug a diverging replay to a 1-minimal op sequence and write it; a
    candidate fails only with a divergence no expectation lists, known ones masked
    (AD-EXPECTATIONS-MASK), and the trace written is the masked sequence."""
    trace = outcome.trace.trace
    known = expectations.known if expectations else ()

    def fails(candidate: list[Op]) -> int | None:
        judged = judge(adapter, trace.spec, candidate, known)
        return judged.cut

    minimal = shrink_sequence(list(trace.ops), fails)
    judged = judge(adapter, trace.spec, minimal, known)
    divergence, shrunk = judged.divergence, judged.executed
    assert divergence is not None
    path = derived_path(out_dir, f"{outcome.trace.name}-shrunk-{trace_digest(shrunk)}", SUFFIX)
    return write_process_trace(
        shrunk,
        path,
        f"{outcome.trace.name} shrunk from {len(trace.steps)} to {len(shrunk.steps)} ops: "
        f"{adapter.name} diverges at op {divergence.index + 1}: {divergence.op}",
        f"creditflow replay --shrink {outcome.trace.path}",
        {
            "adapter": adapter.name,
            "divergence": {
                "state": divergence.index + 1,
                "implementation": divergence.implementation.to_json(),
            },
        },
    )


def replay_traces(
    open_adapter: Callable[[], Adapter],
    traces: Sequence[LoadedTrace],
    expectations: Expectations | None = None,
    shrink_to: Path | None = None,
) -> ReplayReport:
    """Replay every trace; after an adapter failure the adapter is restarted for the
    next trace. The expectations' traces are replayed first (AD-EXPECTATIONS-MATCH:
    looked up among ``traces``, then as ``conform`` does)."""
    try:
        adapter = open_adapter()
    except AdapterFailure as exc:
        return ReplayReport(exc.adapter, "", failure=exc)
    name, description = adapter.name, adapter.description
    outcomes: list[ReplayOutcome] = []
    write_errors: list[OutputError] = []
    resolved: ResolvedExpectations | None = None

    def report(failure: AdapterFailure | None = None) -> ReplayReport:
        return ReplayReport(
            name, description, tuple(outcomes), failure, tuple(write_errors), resolved
        )

    try:
        if expectations is not None:
            given = {t.name: t for t in traces}
            folders = dict.fromkeys(t.path.parent for t in traces)
            try:
                resolved = resolve(adapter, expectations, folders, given)
            except ExpectationsError as exc:
                return replace(report(), expectations_error=exc)
            except AdapterFailure as exc:
                return report(exc)
        for loaded in traces:
            try:
                outcome = replay_trace(adapter, loaded, resolved)
                if outcome.status == DIVERGED and shrink_to is not None:
                    try:
                        shrunk = shrink_divergence(adapter, outcome, shrink_to, resolved)
                        outcome = replace(outcome, shrunk=shrunk)
                    except OutputError as exc:  # OUT-FAILURE: reported after the verdicts
                        write_errors.append(exc)
            except AdapterFailure as exc:
                outcome = ReplayOutcome(loaded, FAILED, failure=exc)
                adapter.close()
                try:
                    adapter = open_adapter()
                except AdapterFailure as again:
                    outcomes.append(outcome)
                    return report(again)
            outcomes.append(outcome)
    finally:
        adapter.close()
    return report()
