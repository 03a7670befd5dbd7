"""``creditflow conform``: search for an op sequence on which an implementation and the
model disagree (AD-DIVERGENCE), and write the minimal one to disk before reporting.

Four phases share one adapter session and stop at the first divergence or adapter
failure:

0. ``batched-ops``: whole examples of random ops, each written at once and compared
   after (AD-BATCHED, :mod:`~creditflow.conformance.differential.batched`), the fast
   first pass;
1. ``process-ops``: :class:`~creditflow.conformance.differential.machines.ProcessOpsMachine`;
2. ``network-runs``: :class:`~creditflow.conformance.differential.machines.NetworkRunMachine`;
3. ``explorer-runs``: every preset under small settings, the explorer's shortest
   counterexample and a seeded run to the end, projected to ops (TRACE-PROJECTION) and
   sent in batches; a divergence there is shrunk by delta debugging.

:func:`run_conform` returns a :class:`ConformResult`; the CLI renders it.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import FlakyFailure, FlakyStrategyDefinition
from hypothesis.stateful import get_state_machine_test

from creditflow.conformance.differential.adapter import Adapter, AdapterFailure
from creditflow.conformance.differential.batched import run_batched
from creditflow.conformance.differential.expected import (
    Judgement,
    KnownDivergence,
    divergence_signature,
    judge,
    known_divergence,
    resolve,
)
from creditflow.conformance.differential.findings import VERDICT_EXIT_CODES
from creditflow.conformance.differential.hypothesis_home import private_hypothesis_storage
from creditflow.conformance.differential.machines import (
    AdapterAbort,
    DivergenceFound,
    MachineContext,
    NetworkRunMachine,
    ProcessOpsMachine,
    ShrinkBudgetSpent,
)
from creditflow.conformance.differential.projection import run_ops
from creditflow.conformance.differential.protocol import DEFAULT_SPEC, Op
from creditflow.conformance.differential.session import (
    Divergence,
    ProcessTrace,
    model_trace,
)
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.conformance.differential.traces import (
    SUFFIX,
    trace_digest,
    write_process_trace,
)
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CreditNetwork, Step
from creditflow.conformance.inputs.expectations import Expectations
from creditflow.conformance.inputs.graphs import load_preset, preset_names
from creditflow.conformance.outputs import OutputError, derived_path
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph

DEFAULT_MAX_EXAMPLES = 200
DEFAULT_STEPS = 100
#: Settings of the explorer-runs phase: small enough to block and deadlock quickly for
#: the explorer's counterexamples, longer for the random runs.
EXPLORER_SETTINGS = ((CreditSpec(2, 1), 6), (CreditSpec(3, 2), 8), (CreditSpec(1, 1), 4))
RANDOM_RUN_SETTINGS = (
    (CreditSpec(2, 1), 40),
    (CreditSpec(5, 3), 60),
    (CreditSpec(4, 1), 60),
    (CreditSpec(0, 0), 10),
)
RUN_LIMIT = 600
#: The ops a network run's projection uses (TRACE-PROJECTION).
NETWORK_OPS = frozenset({"send", "ack", "bump", "state"})
PHASES = ("batched-ops", "process-ops", "network-runs", "explorer-runs")
#: AD-BATCHED: examples of the batched-ops phase per example of the op machine
BATCHED_PER_EXAMPLE = 5


@dataclass(frozen=True)
class ConformOptions:
    """Budget and output of a conform run."""

    max_examples: int = DEFAULT_MAX_EXAMPLES
    steps: int = DEFAULT_STEPS
    seed: int | None = None
    out_dir: Path = Path("counterexamples")
    corpus: Path | None = None
    network_examples: int | None = None  #: default: half of ``max_examples``
    #: AD-BATCHED: examples of the batched-ops phase (default: BATCHED_PER_EXAMPLE ×
    #: ``max_examples``), each of at most ``steps`` ops
    batched_examples: int | None = None
    phases: tuple[str, ...] = PHASES  #: which phases to run, in this order
    shrink_seconds: float = 5.0  #: Hypothesis's shrinking budget per divergence
    #: Known divergences of the implementation (AD-EXPECTATIONS-CONFORM).
    expectations: Expectations | None = None
    #: Folders searched for the traces the expectations name (after the expectations
    #: file's own folder and ``corpus``; the shipped corpus last).
    trace_dirs: tuple[Path, ...] = ()


@dataclass
class PhaseReport:
    name: str
    examples: int = 0
    ops: int = 0
    seconds: float = 0.0


#: AD-EXPECTATIONS-CONFORM: the verdict of a conform run
ConformVerdict = Literal["conformant", "divergence", "unexpected-pass", "adapter-failure"]


@dataclass
class ConformRun:
    """A conform run as it goes: the engine fills it in, phase by phase, and hands out
    its frozen :class:`ConformResult` at the end (OUT-TYPED-RESULT); a failing trace
    is already on disk."""

    adapter: str
    implementation: str
    seed: int
    phases: list[PhaseReport] = field(default_factory=list)
    divergence: Divergence | None = None
    failure: AdapterFailure | None = None
    trace: ProcessTrace | None = None
    trace_path: Path | None = None
    found_by: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    unexercised: tuple[str, ...] = ()
    known: list[KnownDivergence] = field(default_factory=list)
    expected_hits: dict[str, int] = field(default_factory=dict)
    unexpected_passes: list[str] = field(default_factory=list)
    known_not_run: dict[str, tuple[str, ...]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    write_error: OutputError | None = None

    def result(self) -> ConformResult:
        """The run's verdict, frozen (OUT-TYPED-RESULT)."""
        return ConformResult(
            adapter=self.adapter,
            implementation=self.implementation,
            seed=self.seed,
            phases=tuple(self.phases),
            divergence=self.divergence,
            failure=self.failure,
            trace=self.trace,
            trace_path=self.trace_path,
            found_by=self.found_by,
            seconds=self.seconds,
            notes=tuple(self.notes),
            unexercised=self.unexercised,
            known=tuple(self.known),
            expected_hits=dict(self.expected_hits),
            unexpected_passes=tuple(self.unexpected_passes),
            known_not_run=dict(self.known_not_run),
            info=dict(self.info),
            write_error=self.write_error,
        )


@dataclass(frozen=True, slots=True)
class ConformResult:
    """The verdict of a conform run (OUT-TYPED-RESULT); a failing trace is already on
    disk."""

    adapter: str
    implementation: str
    seed: int
    phases: tuple[PhaseReport, ...] = ()
    divergence: Divergence | None = None
    failure: AdapterFailure | None = None
    trace: ProcessTrace | None = None
    trace_path: Path | None = None
    found_by: str = ""
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    #: AD-CAPABILITIES: the ops the implementation does not offer (never exercised).
    unexercised: tuple[str, ...] = ()
    #: AD-EXPECTATIONS-CONFORM: the known divergences, and how often each was met.
    known: tuple[KnownDivergence, ...] = ()
    expected_hits: dict[str, int] = field(default_factory=dict)
    #: Listed traces that no longer diverge (unexpected passes: exit 1).
    unexpected_passes: tuple[str, ...] = ()
    #: AD-CAPABILITIES: listed traces not replayed, with the ops they need that the
    #: implementation does not offer (neither pass nor fail).
    known_not_run: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: ``hello``'s whole answer (AD-HELLO), for reports.
    info: dict[str, Any] = field(default_factory=dict)
    write_error: OutputError | None = None  #: OUT-FAILURE: the trace could not be written

    @property
    def verdict(self) -> ConformVerdict:
        if self.failure is not None:
            return "adapter-failure"
        if self.divergence is not None:
            return "divergence"
        if self.unexpected_passes:
            return "unexpected-pass"
        return "conformant"

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT_CODES[self.verdict]

    @property
    def ops(self) -> int:
        return sum(p.ops for p in self.phases)

    @property
    def examples(self) -> int:
        return sum(p.examples for p in self.phases)

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA, OUT-TYPED-RESULT: ``conform --json``'s document (without the
        CLI's ``replay`` command line)."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "adapter": self.adapter,
            "implementation": self.implementation,
            "seed": self.seed,
            "examples": self.examples,
            "ops": self.ops,
            "seconds": round(self.seconds, 3),
            "phases": [
                {
                    "name": p.name,
                    "examples": p.examples,
                    "ops": p.ops,
                    "seconds": round(p.seconds, 3),
                }
                for p in self.phases
            ],
            "trace": str(self.trace_path) if self.trace_path else None,
            "found_by": self.found_by or None,
            "notes": list(self.notes),
            "implementation_info": self.info.get("implementation"),
            "ops_not_exercised": list(self.unexercised),
            "expected_divergences": [
                {
                    "trace": k.name,
                    "why": k.reason,
                    "op": k.op,
                    "fields": sorted(k.fields),
                    "signature": sorted(k.signature.differences),
                    "runs": self.expected_hits.get(k.name, 0),
                }
                for k in self.known
            ],
            "unexpected_passes": list(self.unexpected_passes),
            "expectations_not_run": {k: list(v) for k, v in self.known_not_run.items()},
        }
        if self.divergence is not None:
            d = self.divergence
            out["divergence"] = {
                "op_index": d.index + 1,
                "op": d.op.request(),
                "fields": [f.field for f in d.diffs],
                # AD-EXPECTATIONS-MATCH: what an expectation listing this trace matches
                "signature": sorted(divergence_signature(d).differences),
                "model": d.model.to_json(),
                "implementation": d.implementation.to_json(),
                "ops": [op.request() for op in self.trace.ops] if self.trace else [],
                # AD-RESET: the default spec the ops run under (send/ack without "spec").
                "spec": (
                    [self.trace.spec.initial, self.trace.spec.more_after] if self.trace else None
                ),
            }
        if self.failure is not None:
            out["failure"] = {"kind": self.failure.kind, "message": str(self.failure)}
        return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "adapter"


def write_failure_trace(
    result: ConformRun, trace: ProcessTrace, options: ConformOptions, kind: str
) -> Path | None:
    """Write the (minimal) failing trace into the corpus or the output folder before
    anything is reported (AD-DIVERGENCE); identical traces share one file name."""
    folder = options.corpus or options.out_dir
    name = f"{_slug(result.adapter)}-{kind}-{trace_digest(trace)}"
    path = derived_path(folder, name, SUFFIX)
    extra: dict[str, Any] = {
        "adapter": result.adapter,
        "implementation": result.implementation,
        "found_by": result.found_by,
        "seed": result.seed,
    }
    if result.divergence is not None:
        d = result.divergence
        extra["divergence"] = {
            "state": d.index + 1,
            "op": d.op.request(),
            "fields": [f.field for f in d.diffs],
            "implementation": d.implementation.to_json(),
        }
        description = (
            f"{result.adapter} diverges from the model at op {d.index + 1} of "
            f"{len(trace.steps)}: {d.op} ({', '.join(f.field for f in d.diffs)})"
        )
    else:
        assert result.failure is not None
        extra["failure"] = {"kind": result.failure.kind, "message": result.failure.message}
        description = f"{result.adapter} failed ({result.failure.kind}) on this trace"
    source = f"creditflow conform, {result.found_by}, seed {result.seed}"
    try:
        return write_process_trace(trace, path, description, source, extra)
    except OutputError as exc:  # OUT-FAILURE: the verdict is still reported, then this
        result.write_error = exc
        return None


def _settings(options: ConformOptions, examples: int) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=options.steps,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        phases=(Phase.generate, Phase.shrink),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


def _divergence_in(exc: BaseException) -> DivergenceFound | None:
    if isinstance(exc, DivergenceFound):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _divergence_in(inner)
            if found is not None:
                return found
    return None


def _run_machine(
    factory: Callable[[MachineContext], Any],
    context: MachineContext,
    options: ConformOptions,
    examples: int,
    machine_seed: int,
) -> tuple[DivergenceFound | AdapterAbort | None, bool]:
    """Run one machine; the (shrunk) divergence or the adapter failure, and whether
    Hypothesis could reproduce it."""
    machine = partial(factory, context)
    budget = _settings(options, examples)
    test = get_state_machine_test(machine, settings=budget)  # type: ignore[arg-type]  # only called

    test = seed(machine_seed)(test)
    try:
        test()
    except AdapterAbort as abort:
        return abort, True
    except ShrinkBudgetSpent:
        assert context.smallest is not None
        return context.smallest, True
    except DivergenceFound as divergence:
        return divergence, True
    except FlakyFailure as flaky:
        found = _divergence_in(flaky)
        if found is None:
            raise
        return found, False
    except FlakyStrategyDefinition:
        # AD-SHRINK-FLAKY: Hypothesis replayed an example and it drew differently (an
        # adapter slow under load, or one whose answers vary); the smallest divergence
        # already seen was checked against the model and stands; no divergence: re-raise
        if context.smallest is None:
            raise
        return context.smallest, False
    return None, True


# -- explorer runs -----------------------------------------------------------------------


def _explorer_runs(run_seed: int) -> Iterator[tuple[str, FlowGraph, list[Step]]]:
    """For each preset: the explorer's shortest counterexample under small settings (if
    there is one), and seeded random runs to the end (or :data:`RUN_LIMIT` steps) under
    longer ones."""
    rng = random.Random(run_seed)
    for name in preset_names():
        for spec, publishes in EXPLORER_SETTINGS:
            graph = load_preset(name).with_credit(spec).with_publishes(publishes)
            system, result = check_graph(graph, CheckOptions())
            finding = result.primary()
            if finding is not None:
                net = CreditNetwork(graph)
                run = finding.path + finding.continuation
                steps = [net.decode(a) for a, _ in run if a is not None]
                yield f"{name} {spec} x{publishes}: {finding.property_id}", graph, steps
        for spec, publishes in RANDOM_RUN_SETTINGS:
            graph = load_preset(name).with_credit(spec).with_publishes(publishes)
            net = CreditNetwork(graph)
            state, steps = net.initial(), []
            for _ in range(RUN_LIMIT):
                enabled = list(net.enabled(state))
                if not enabled:
                    break
                action = rng.choice(enabled)
                steps.append(net.decode(action))
                state = net.apply(state, action)
            yield f"{name} {spec} x{publishes}: random run", graph, steps


class ExplorerRunFailure(Exception):
    """The adapter failed during an explorer run; ``trace`` is that run's ops."""

    def __init__(self, failure: AdapterFailure, label: str, trace: ProcessTrace) -> None:
        super().__init__(str(failure))
        self.failure, self.label, self.trace = failure, label, trace


def _polish(
    adapter: Adapter, trace: ProcessTrace, report: PhaseReport, result: ConformRun
) -> tuple[Divergence, ProcessTrace] | None:
    """Delta-debug Hypothesis's result further (it may have run out of time, and a
    network run's projection holds ops a per-process trace does not need); a candidate
    fails only with a divergence that is not a known one, known ones masked
    (AD-EXPECTATIONS-CONFORM, AD-EXPECTATIONS-MASK)."""

    def fails(candidate: list[Op]) -> int | None:
        report.ops += len(candidate)
        judged = judge(adapter, trace.spec, candidate, result.known)
        return judged.cut

    ops = list(trace.ops)
    if fails(ops) is None:
        return None  # not reproducible outside Hypothesis: keep its trace
    judged = judge(adapter, trace.spec, shrink_sequence(ops, fails), result.known)
    return None if judged.divergence is None else (judged.divergence, judged.executed)


def _shrink_run(
    adapter: Adapter, label: str, ops: list[Op], report: PhaseReport, result: ConformRun
) -> tuple[str, Divergence, ProcessTrace]:
    """Delta-debug a diverging explorer run down to a 1-minimal op sequence that
    diverges in a way no expectation lists, known divergences masked
    (AD-EXPECTATIONS-CONFORM, AD-EXPECTATIONS-MASK); the trace written is the masked
    sequence, whose first divergence is the new one."""

    def attempt(candidate: list[Op]) -> Judgement:
        report.ops += len(candidate)
        try:
            return judge(adapter, DEFAULT_SPEC, candidate, result.known)
        except AdapterFailure as exc:
            trace = model_trace(DEFAULT_SPEC, candidate)
            raise ExplorerRunFailure(exc, f"{label}, while shrinking", trace) from None

    judged = attempt(shrink_sequence(ops, lambda candidate: attempt(candidate).cut))
    divergence, trace = judged.divergence, judged.executed
    assert divergence is not None
    return f"explorer-runs ({label}, shrunk from {len(ops)} ops)", divergence, trace


def _explorer_phase(
    adapter: Adapter, run_seed: int, report: PhaseReport, result: ConformRun
) -> tuple[str, Divergence, ProcessTrace] | None:
    """The explorer runs; a known divergence is masked and the run goes on
    (AD-EXPECTATIONS-MASK)."""
    for label, graph, steps in _explorer_runs(run_seed):
        ops = run_ops(graph, steps)
        report.examples += 1
        report.ops += len(ops)
        try:
            judged = judge(adapter, DEFAULT_SPEC, ops, result.known)
        except AdapterFailure as exc:
            raise ExplorerRunFailure(exc, label, model_trace(DEFAULT_SPEC, ops)) from None
        for known in judged.met:
            result.expected_hits[known] = result.expected_hits.get(known, 0) + 1
        if judged.divergence is None:
            continue
        return _shrink_run(adapter, label, ops, report, result)
    return None


# -- known divergences (AD-EXPECTATIONS-CONFORM) ----------------------------------------


def known_divergences(adapter: Adapter, options: ConformOptions, result: ConformRun) -> None:
    """Replay every trace the expectations list (AD-EXPECTATIONS-CONFORM,
    AD-EXPECTATIONS-MATCH: :func:`~creditflow.conformance.differential.expected.resolve`,
    as ``replay`` and the pytest plugin do). Raises ``ExpectationsError`` for a trace that
    cannot be found or read."""
    if options.expectations is None:
        return
    folders = [*([options.corpus] if options.corpus is not None else []), *options.trace_dirs]
    resolved = resolve(adapter, options.expectations, folders)
    result.known.extend(resolved.known)
    result.unexpected_passes.extend(resolved.unexpected_passes)
    result.known_not_run.update(resolved.not_run)


# -- the whole run -----------------------------------------------------------------------


def run_conform(open_adapter: Callable[[], Adapter], options: ConformOptions) -> ConformResult:
    """Check an implementation against the model (AD-DIVERGENCE, AD-FAILURE)."""
    started = time.perf_counter()
    run_seed = options.seed if options.seed is not None else random.randrange(2**32)
    try:
        adapter = open_adapter()
    except AdapterFailure as exc:
        return ConformResult(
            exc.adapter, "", run_seed, failure=exc, seconds=time.perf_counter() - started
        )
    run = ConformRun(
        adapter.name, adapter.description, run_seed, info=dict(getattr(adapter, "info", {}))
    )
    run.unexercised = adapter.missing_ops
    try:
        try:
            known_divergences(adapter, options, run)
        except AdapterFailure as exc:
            run.failure = exc
            run.found_by = "the traces of the expectations file"
        else:
            with private_hypothesis_storage():
                _run_phases(adapter, options, run)
    finally:
        adapter.close()
        run.seconds = time.perf_counter() - started
    return run.result()


def _batched_phase(adapter: Adapter, options: ConformOptions, result: ConformRun) -> bool:
    """AD-BATCHED: the batched-ops phase; whether it ended the run (a divergence or an
    adapter failure, written to disk)."""
    report = PhaseReport("batched-ops")
    result.phases.append(report)
    t0 = time.perf_counter()
    n_examples = (
        options.batched_examples
        if options.batched_examples is not None
        else BATCHED_PER_EXAMPLE * options.max_examples
    )
    outcome = run_batched(
        adapter,
        result.seed,
        n_examples,
        options.steps,
        lambda d, spec, ops: known_divergence(result.known, adapter, spec, ops, d),
        result.expected_hits,
    )
    report.examples, report.ops = outcome.examples, outcome.ops
    report.seconds = time.perf_counter() - t0
    if outcome.trace is None:
        return False
    where = f"example {outcome.found_in[0]}, op {outcome.found_in[1]}, " if outcome.found_in else ""
    result.found_by = f"batched-ops ({where}seed {result.seed})"
    result.trace = outcome.trace
    if outcome.failure is not None:
        result.failure = outcome.failure
        result.trace_path = write_failure_trace(result, outcome.trace, options, "failure")
        return True
    result.divergence = outcome.divergence
    result.trace_path = write_failure_trace(result, outcome.trace, options, "divergence")
    return True


def _run_phases(adapter: Adapter, options: ConformOptions, result: ConformRun) -> None:
    if "batched-ops" in options.phases and _batched_phase(adapter, options, result):
        return
    network_examples = (
        options.network_examples
        if options.network_examples is not None
        else max(1, options.max_examples // 2)
    )
    machines = (
        ("process-ops", ProcessOpsMachine, options.max_examples, result.seed),
        # AD-REPRODUCE: one seed for both machines, the one printed and given with --seed.
        ("network-runs", NetworkRunMachine, network_examples, result.seed),
    )
    offered = frozenset(adapter.supported_ops)
    network_ops = offered >= NETWORK_OPS
    if not network_ops:
        result.notes.append(
            "network-runs and explorer-runs skipped: they need "
            f"{', '.join(sorted(NETWORK_OPS))}, and the implementation does not offer "
            f"{', '.join(sorted(NETWORK_OPS - offered))}"
        )
    for name, factory, examples, machine_seed in machines:
        if name not in options.phases or (name != "process-ops" and not network_ops):
            continue
        report = PhaseReport(name)
        result.phases.append(report)
        t0 = time.perf_counter()
        context = MachineContext(
            adapter,
            shrink_seconds=options.shrink_seconds,
            offered=offered,
            expected=(
                (lambda d, t: known_divergence(result.known, adapter, t.spec, list(t.ops), d))
                if result.known
                else None
            ),
        )
        outcome, reproducible = _run_machine(factory, context, options, examples, machine_seed)
        report.examples, report.ops = context.examples, context.ops
        report.seconds = time.perf_counter() - t0
        for known, hits in context.expected_hits.items():
            result.expected_hits[known] = result.expected_hits.get(known, 0) + hits
        if outcome is None:
            continue
        result.found_by = f"{name} ({outcome.machine}, seed {machine_seed})"
        if not reproducible:
            result.notes.append(
                "Hypothesis could not reproduce the divergence when it "
                "replayed the shrunk example: the implementation may be "
                "nondeterministic"
            )
        result.trace = outcome.trace
        if isinstance(outcome, AdapterAbort):
            result.failure = outcome.failure
            result.trace_path = write_failure_trace(result, outcome.trace, options, "failure")
            return
        result.divergence = outcome.divergence
        try:
            polished = _polish(adapter, outcome.trace, report, result)
        except AdapterFailure as exc:
            result.notes.append(f"the final shrink stopped: {exc}")
            polished = None
        if polished is not None:
            result.divergence, result.trace = polished
        result.trace_path = write_failure_trace(result, result.trace, options, "divergence")
        return
    if "explorer-runs" not in options.phases or not network_ops:
        return
    report = PhaseReport("explorer-runs")
    result.phases.append(report)
    t0 = time.perf_counter()
    try:
        found = _explorer_phase(adapter, result.seed, report, result)
    except ExplorerRunFailure as exc:
        report.seconds = time.perf_counter() - t0
        result.failure, result.trace = exc.failure, exc.trace
        result.found_by = f"explorer-runs ({exc.label})"
        result.trace_path = write_failure_trace(result, exc.trace, options, "failure")
        return
    report.seconds = time.perf_counter() - t0
    if found is not None:
        result.found_by, result.divergence, result.trace = found
        result.trace_path = write_failure_trace(result, result.trace, options, "divergence")
