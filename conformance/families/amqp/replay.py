"""``creditflow replay`` and ``conform --expectations`` for AMQP adapters (AD-AMQ-REPLAY,
AD-AMQ-EXPECTATIONS-MATCH, AD-AMQ-EXPECTATIONS-MASK): AMQP run traces (TRACE-AMQP-RUN)
replayed against any AMQP adapter, deterministically, held against the model with the
policy that adapter declares; typed results, rendered by the CLI and the pytest plugin.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, get_args

from creditflow.conformance import exit_codes
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.replay import (
    DIVERGED,
    FAILED,
    PASS,
    XFAIL,
    XPASS,
    status_counts,
    unexpected_passes_among,
)
from creditflow.conformance.families.amqp.conform import (
    AmqpConformOptions,
    AmqpConformResult,
    AmqpRun,
    PolicyError,
    run_amqp_conform,
)
from creditflow.conformance.families.amqp.expected import (
    Masker,
    ResolvedAmqpExpectations,
    cannot_run,
    judge_amqp,
    resolve_amqp,
)
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.conformance.families.amqp.run_traces import LoadedAmqpTrace
from creditflow.conformance.inputs.expectations import Expectations, ExpectationsError

#: AD-AMQ-REPLAY: the statuses of the one replay (``differential/replay.py``) and the
#: family's own two: a property the implementation broke, a trace not run (why)
PROPERTY: Final = "property-violated"
NOT_RUN: Final = "not-run"

AmqpReplayStatus = Literal[
    "pass", "diverged", "property-violated", "xfail", "xpass", "adapter-failure", "not-run"
]


@dataclass(frozen=True)
class AmqpReplayOutcome:
    """One AMQP trace replayed (OUT-TYPED-RESULT)."""

    trace: LoadedAmqpTrace
    status: AmqpReplayStatus
    run: AmqpRun | None = None  #: the failing run (known failures masked)
    reason: str | None = None  #: the expectation, if listed or met
    failure: str | None = None
    why_not_run: str | None = None
    version: str = ""

    @property
    def ok(self) -> bool:
        return self.status in (PASS, XFAIL, NOT_RUN)


def replay_amqp_trace(
    adapter: AmqpAdapter,
    loaded: LoadedAmqpTrace,
    expectations: ResolvedAmqpExpectations | None = None,
) -> AmqpReplayOutcome:
    """AD-AMQ-REPLAY: run the trace's ops with its sizes from a fresh ``reset``, the model
    following the policy the adapter declares, compared after every op; with
    expectations every known failure is masked (AD-AMQ-EXPECTATIONS-MASK): only known
    ones met is ``xfail``, another failure ``diverged`` or ``property-violated``, a
    listed trace that passes ``xpass``. Raises ``AdapterFailure`` and ``PolicyError``."""
    listed = expectations.reason(loaded.name) if expectations else None
    why = cannot_run(adapter, loaded)
    if why is not None:
        return AmqpReplayOutcome(loaded, NOT_RUN, reason=listed, why_not_run=why)
    known = expectations.known if expectations else ()
    judged = judge_amqp(adapter, loaded.trace.settings, loaded.trace.ops, known)
    if judged.run.failed:
        status: AmqpReplayStatus = DIVERGED if judged.run.verdict == "diverged" else PROPERTY
        return AmqpReplayOutcome(loaded, status, judged.run, reason=listed)
    if judged.met:
        reasons = {k.name: k.reason for k in known}
        met = "; ".join(f"{reasons[n]} (as {n})" for n in dict.fromkeys(judged.met))
        return AmqpReplayOutcome(loaded, XFAIL, reason=listed or met)
    return AmqpReplayOutcome(loaded, XPASS if listed else PASS, reason=listed)


@dataclass(frozen=True)
class AmqpReplayReport:
    """OUT-TYPED-RESULT: every trace's outcome, in order."""

    adapter: str
    version: str
    outcomes: tuple[AmqpReplayOutcome, ...] = ()
    failure: str | None = None  #: the adapter could not be started (or restarted)
    expectations: ResolvedAmqpExpectations | None = None
    expectations_error: str | None = None

    @property
    def unexpected_passes(self) -> tuple[str, ...]:
        """Listed traces that pass and were not among those replayed."""
        return unexpected_passes_among(self.expectations, self.outcomes)

    @property
    def exit_code(self) -> int:
        """AD-AMQ-REPLAY: 2 a bad expectations file, 3 the adapter failed, 1 a divergence
        or an unexpected pass, 12 a property violated by the implementation while the
        model agrees, 4 every trace NOT RUN (REPLAY-NOTHING-RAN), else 0
        (``exit_codes.replay_exit_code``)."""
        return exit_codes.replay_exit_code(
            bad_input=self.expectations_error is not None,
            adapter_failed=self.failure is not None
            or any(o.status == FAILED for o in self.outcomes),
            diverged=any(o.status in (DIVERGED, XPASS) for o in self.outcomes)
            or bool(self.unexpected_passes),
            violated=any(o.status == PROPERTY for o in self.outcomes),
            ran=sum(o.status != NOT_RUN for o in self.outcomes),
        )

    @property
    def counts(self) -> dict[str, int]:
        return status_counts(get_args(AmqpReplayStatus), self.outcomes)

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``replay --json`` for an AMQP adapter (``"family": "amqp"``)."""
        traces = []
        for o in self.outcomes:
            entry: dict[str, Any] = {
                "trace": str(o.trace.path),
                "ops": len(o.trace.trace.ops),
                "settings": o.trace.trace.settings,
                "status": o.status,
            }
            if o.reason:
                entry["expected"] = o.reason
            if o.run is not None:
                entry["run"] = o.run.to_json()
            if o.failure is not None:
                entry["failure"] = o.failure
            if o.why_not_run is not None:
                entry["not_run"] = o.why_not_run
            traces.append(entry)
        out: dict[str, Any] = {
            "family": "amqp",
            "adapter": self.adapter,
            "version": self.version,
            "exit_code": self.exit_code,
            "traces": traces,
            "counts": self.counts,
        }
        if self.expectations is not None:
            out["expected_divergences"] = [
                {"trace": k.name, "why": k.reason, "signature": str(k.signature)}
                for k in self.expectations.known
            ]
            out["unexpected_passes"] = list(self.unexpected_passes)
            out["expectations_not_run"] = dict(self.expectations.not_run)
        if self.failure is not None:
            out["failure"] = self.failure
        if self.expectations_error is not None:
            out["expectations_error"] = self.expectations_error
        return out


def replay_amqp_traces(
    open_adapter: Callable[[], AmqpAdapter],
    traces: Sequence[LoadedAmqpTrace],
    expectations: Expectations | None = None,
) -> AmqpReplayReport:
    """Replay every trace (AD-AMQ-REPLAY); the expectations' traces first (looked up
    among ``traces``, then as ``conform`` does). After an adapter failure the adapter
    is restarted for the next trace."""
    try:
        adapter = open_adapter()
    except AdapterFailure as exc:
        return AmqpReplayReport(exc.adapter, "", failure=str(exc))
    name, version = str(adapter.name), str(adapter.info.get("version"))
    outcomes: list[AmqpReplayOutcome] = []
    resolved: ResolvedAmqpExpectations | None = None

    def report(failure: str | None = None) -> AmqpReplayReport:
        return AmqpReplayReport(name, version, tuple(outcomes), failure, resolved)

    try:
        if expectations is not None:
            given = {t.name: t for t in traces}
            folders = dict.fromkeys(t.path.parent for t in traces)
            try:
                resolved = resolve_amqp(adapter, expectations, folders, given)
            except ExpectationsError as exc:
                return dataclasses.replace(report(), expectations_error=str(exc))
            except (AdapterFailure, PolicyError) as exc:
                return report(str(exc))
        for loaded in traces:
            try:
                outcome = replay_amqp_trace(adapter, loaded, resolved)
            except (AdapterFailure, PolicyError) as exc:
                outcome = AmqpReplayOutcome(loaded, FAILED, failure=str(exc))
                adapter.close()
                try:
                    adapter = open_adapter()
                except AdapterFailure as again:
                    outcomes.append(outcome)
                    return report(str(again))
            outcomes.append(outcome)
    finally:
        adapter.close()
    return report()


def run_amqp_conform_expecting(
    factory: Callable[[], AmqpAdapter],
    options: AmqpConformOptions,
    expectations: Expectations,
    folders: Iterable[Path] = (),
) -> AmqpConformResult:
    """``conform --expectations`` for an AMQP adapter (AD-AMQ-EXPECTATIONS-MATCH,
    AD-AMQ-EXPECTATIONS-MASK): the listed traces replayed on an adapter of their own,
    then the conform run with every known failure masked, so a second bug still fails.
    Raises :class:`ExpectationsError` (exit 2)."""
    try:
        adapter = factory()
    except AdapterFailure as exc:
        return AmqpConformResult("?", "?", {}, options.seed, (), None, None, str(exc))
    try:
        resolved = resolve_amqp(adapter, expectations, folders)
    except (AdapterFailure, PolicyError) as exc:
        return AmqpConformResult(str(adapter.name), "?", {}, options.seed, (), None, None, str(exc))
    finally:
        adapter.close()
    masker = Masker(resolved.known)
    result = run_amqp_conform(factory, dataclasses.replace(options, mask=masker))
    return dataclasses.replace(
        result,
        known=tuple((k.name, k.reason, str(k.signature)) for k in resolved.known),
        # FIND-EVERY: the findings of the run itself are masked too; only the listed count
        expected_hits={
            k.name: masker.hits[k.name] for k in resolved.known if k.name in masker.hits
        },
        unexpected_passes=resolved.unexpected_passes,
        known_not_run=dict(resolved.not_run),
    )
