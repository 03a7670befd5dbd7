"""OUT-TYPED-RESULT: the engines return frozen, slotted dataclasses that grow by
``dataclasses.replace``, and each result's one JSON renderer (``to_json``) prints what
the command's schema (OUT-JSON-SCHEMA) admits, keys in the order the commands print."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import get_args, get_type_hints

import jsonschema
import pytest
from click.testing import CliRunner

from creditflow.adapters.rabbitmq.observe import RecordSummary, WorkloadResult
from creditflow.adapters.registry import adapter_factory
from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.conform import ConformOptions, ConformResult, run_conform
from creditflow.conformance.differential.replay import (
    ReplayOutcome,
    ReplayReport,
    ReplayStatus,
    replay_traces,
)
from creditflow.conformance.differential.traces import load_trace
from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.explore.counterexamples import (
    DeadlockKind,
    Finding,
    FindingKind,
    deadlock_kind,
)
from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.explore.results import (
    AccountBound,
    AccountsCheckResult,
    AlarmsCheckResult,
    CheckFiles,
    CheckResult,
    CheckScope,
    Settlement,
    SupplyDecision,
    WrittenTrace,
)
from creditflow.conformance.families.accounts.compare import (
    cycle_comparison,
    slow_consumer_comparison,
)
from creditflow.conformance.families.accounts.conform import (
    ConformResult as AccountsConformResult,
)
from creditflow.conformance.families.accounts.explore import accounts_summary, check_actor_graph
from creditflow.conformance.families.alarms.explore import alarms_summary
from creditflow.conformance.families.paging.compare import PagingStepRow, paging_step_row
from creditflow.conformance.inputs.actor_graphs import load_actor_graph
from creditflow.conformance.inputs.alarm_timelines import (
    AlarmStateView,
    TimelineRow,
    load_timeline,
    run_timeline,
    timeline_row,
)
from creditflow.conformance.inputs.graphs import load_graph, load_preset
from creditflow.conformance.inputs.paging_scenarios import iter_scenario, load_scenario
from creditflow.conformance.observe import snapshot as observe_snapshot
from creditflow.conformance.observe import validate as observe_validate
from creditflow.conformance.sweep.replay import TraceReplayResult
from creditflow.conformance.sweep.schema import COLUMN_NAMES, unstorable
from creditflow.conformance.sweep.worker import CaseResult, failure_result
from creditflow.conformance.symbolic.every_supply import decide_check
from creditflow.conformance.symbolic.prove import (
    ProveOptions,
    ProveReport,
    Verdict,
    VerdictStatus,
    prove_graph,
)
from creditflow.conformance.symbolic.prove_result import (
    BacklogFigures,
    BmcFigures,
    CounterexampleFigures,
    PropertyVerdict,
    ProveResult,
    ProveScope,
    prove_result,
)
from creditflow.conformance.symbolic.synthesis import (
    SynthesisGoal,
    SynthesisOptions,
    SynthesisResult,
    SynthesisStatus,
    synthesize,
)
from creditflow.model.alarms.rules import AlarmConfig, ConnectionSpec
from creditflow.model.alarms.system import CheckedAlarms
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.rules import StepKind
from creditflow.model.network.system import ReadableNetwork
from tests.json_schemas import schema

BUGS = Path(__file__).resolve().parents[1] / "spec" / "graphs" / "bugs"

RESULT_TYPES = [
    CaseResult,
    TraceReplayResult,
    observe_validate.Result,
    observe_validate.Divergence,
    observe_snapshot.Analysis,
    observe_snapshot.Process,
    observe_snapshot.Edge,
    CheckResult,
    AccountsCheckResult,
    AccountBound,
    AlarmsCheckResult,
    CheckScope,
    CheckFiles,
    Settlement,
    SupplyDecision,
    ProveResult,
    ProveScope,
    PropertyVerdict,
    BmcFigures,
    CounterexampleFigures,
    BacklogFigures,
    WrittenTrace,
    SynthesisResult,
    ConformResult,
    ReplayReport,
    ReplayOutcome,
    ProveReport,
    Verdict,
    AlarmStateView,
    TimelineRow,
    PagingStepRow,
    AccountsConformResult,
    WorkloadResult,
    RecordSummary,
]


def valid(name: str, document: object) -> None:
    jsonschema.Draft202012Validator(schema(name)).validate(document)


@pytest.mark.parametrize("kind", RESULT_TYPES, ids=lambda t: t.__name__)
def test_result_types_are_frozen_slotted_dataclasses(kind: type) -> None:
    """OUT-TYPED-RESULT: one way for every result: a frozen dataclass with slots."""
    assert dataclasses.is_dataclass(kind)
    assert kind.__dataclass_params__.frozen
    assert "__slots__" in vars(kind)


def test_check_result_grows_by_replace_and_renders_each_stage() -> None:
    """OUT-TYPED-RESULT: the exploration's summary is not changed by a later stage; a
    stage not reached is absent from the JSON; the CLI's additions come last."""
    explored = summary(*check_graph(load_preset("fanout"), CheckOptions(max_states=10)))
    assert explored.exit_code == exit_codes.INCOMPLETE
    doc = explored.to_json()
    assert list(doc)[-1] == "exit_code"
    assert not {"scope", "claim", "source", "settled", "trace"} & doc.keys()
    name = "exit_code"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(explored, name, 0)
    decided = decide_check(load_preset("fanout"), CheckOptions(publishes=2), every_supply=False)
    shown = dataclasses.replace(decided.report, source="fanout")
    valid("check", shown.to_json())
    assert list(shown.to_json())[-3:] == ["scope", "claim", "source"]
    assert decided.report.source is None


def test_check_json_keys_in_printed_order(tmp_path) -> None:
    """OUT-TYPED-RESULT: the renderer prints the keys in the order the dict-built output
    had (pinned here: a drift in order is a drift in output)."""
    trace = tmp_path / "w.itf.json"
    result = CliRunner().invoke(
        main, ["check", "stalled-queue", "--credit", "2,1", "--json", "--trace-out", str(trace)]
    )
    assert result.exit_code == exit_codes.DEADLOCK
    doc = json.loads(result.output)
    assert list(doc) == [
        "graph",
        "complete",
        "stopped_at_deadlock",
        "deadlock",
        "deadlock_kind",
        "blocked_forever",
        "blocked_forever_drawn",
        "conservation",
        "properties",
        "not_checked",  # SCOPE-NOT-CHECKED: no --mailbox-bound given
        "states",
        "transitions",
        "seconds",
        "states_per_second",
        "reduced",
        "partial_order",
        "symmetry_order",
        "shortest_counterexample_length",
        "shortest_certified",
        "counterexample_lengths",
        "exit_code",
        "decided_by",
        "step_bound",
        "scope",
        "claim",
        "source",
        "credits_in_effect",
        "trace",
        "dot",
        "svg",
    ]
    assert doc["trace"] == str(trace) and doc["scope"] == {"supply": "every"}


def test_settled_check_renders_settled_after_the_figures() -> None:
    """EXP-SETTLE, OUT-TYPED-RESULT: ``settled`` follows ``exit_code``; a proof of every
    property turns the verdicts to holds without touching the exploration's result."""
    explored = summary(*check_graph(load_preset("fanout"), CheckOptions(max_states=10)))
    methods = {pid: "invariant" for pid in explored.properties}
    settled = dataclasses.replace(
        explored, settled=Settlement(proved=True, result="proved", methods=methods, seconds=0.1)
    )
    doc = settled.to_json()
    assert list(doc)[-2:] == ["exit_code", "settled"]
    assert doc["settled"]["rule"] == "EXP-SETTLE" and doc["settled"]["seconds"] == 0.1


def test_prove_result_renders_what_the_schema_admits() -> None:
    """OUT-TYPED-RESULT, OUT-JSON-SCHEMA: prove's typed result, with the CLI's additions,
    validates against prove.json; the engine's part alone has no CLI keys."""
    report = prove_graph(load_preset("stalled-queue"), ProveOptions(credit=CreditSpec(2, 1)))
    result = prove_result(report)
    assert result.result == "counterexample" and result.exit_code == exit_codes.DEADLOCK
    assert result.counterexample is not None and result.counterexample.kind
    assert not {"source", "invariant_legend", "trace"} & result.to_json().keys()
    shown = dataclasses.replace(
        result,
        source="stalled-queue",
        invariant_legend={},
        files=WrittenTrace(trace="t.itf.json", dot="t.dot", svg=None, pictured=True),
        boundary_traces=tuple(None for _ in result.boundary),
    )
    doc = shown.to_json()
    valid("prove", doc)
    assert list(doc)[-5:] == ["source", "invariant_legend", "trace", "dot", "svg"]
    assert doc["counterexample"]["property"] == "PROP-NO-DEADLOCK"


def test_prove_boundary_traces_go_into_each_boundary_entry() -> None:
    """Z3-BOUNDARY, OUT-TYPED-RESULT: each boundary case renders with its trace once the
    CLI has written it."""
    report = prove_graph(load_preset("fanout"), ProveOptions(symbolic=True))
    result = prove_result(report)
    assert result.boundary, "fanout --symbolic has boundary cases"
    assert all("trace" not in e for e in result.to_json()["boundary"])
    paths = tuple(f"b{i}.itf.json" for i in range(len(result.boundary)))
    doc = dataclasses.replace(result, boundary_traces=paths, source="fanout").to_json()
    assert [e["trace"] for e in doc["boundary"]] == list(paths)
    assert all(e["edge"] in e["credits"] for e in doc["boundary"])


def test_synth_result_is_typed_and_renders_the_cli_document() -> None:
    """Z3-SYNTH, OUT-TYPED-RESULT: synthesize returns a frozen result with the graph and
    bound asked; with the CLI's additions its JSON validates against synth.json, and the
    exit code follows the status."""
    result = synthesize(
        load_preset("stalled-queue"),
        SynthesisOptions(
            goal="mailbox", bound=800, prove=ProveOptions(credit=CreditSpec(400, 200))
        ),
    )
    assert (result.graph, result.bound, result.status) == ("stalled-queue", 800, "found")
    assert result.exit_code == exit_codes.OK and result.beyond is not None
    assert "beyond_trace" not in result.to_json()
    shown = dataclasses.replace(
        result, source="stalled-queue", beyond_written=WrittenTrace(trace="b.itf.json")
    )
    doc = shown.to_json()
    valid("synth", doc)
    assert list(doc)[:2] == ["graph", "source"] and list(doc)[-1] == "exit_code"
    assert (
        doc["beyond_trace"] == "b.itf.json" and doc["beyond_length"] == result.beyond.finding.length
    )
    none = dataclasses.replace(result, status="none")
    assert none.exit_code == exit_codes.VIOLATION


def test_conform_and_replay_results_render_by_their_own_method() -> None:
    """OUT-TYPED-RESULT, OUT-JSON-SCHEMA: conform's and replay's results carry their one
    JSON renderer; a result with nothing run renders a valid document whose verdict and
    counts follow the fields."""
    conformant = ConformResult(adapter="reference", implementation="model", seed=7)
    doc = conformant.to_json()
    valid("conform", doc)
    assert (doc["verdict"], doc["exit_code"], doc["seed"]) == ("conformant", exit_codes.OK, 7)
    failed = ConformResult(
        adapter="x", implementation="", seed=1, failure=AdapterFailure("x", "crash", "gone")
    )
    assert failed.to_json()["verdict"] == "adapter-failure"
    assert failed.to_json()["failure"]["kind"] == "crash"
    replayed = ReplayReport(adapter="reference", implementation="model")
    doc = replayed.to_json()
    valid("replay", doc)
    assert doc["counts"] == replayed.counts and set(doc["counts"].values()) == {0}
    assert list(doc["counts"]) == list(get_args(ReplayStatus))


def test_accounts_check_result_is_typed_and_valid() -> None:
    """AC-OVERSHOOT, OUT-TYPED-RESULT: accounts check's result is frozen, its accounts
    are typed bounds, and with the CLI's additions it validates against
    accounts-check.json."""
    system, explored = check_actor_graph(load_actor_graph("slow-consumer"))
    result = accounts_summary(system, explored)
    assert result.exit_code == exit_codes.DEADLOCK and result.deadlock_kind is not None
    assert all(isinstance(a, AccountBound) for a in result.accounts.values())
    assert "trace" not in result.to_json()
    shown = dataclasses.replace(result, source="slow-consumer", files=WrittenTrace(trace=None))
    doc = shown.to_json()
    valid("accounts-check", doc)
    assert list(doc)[-3:] == ["exit_code", "source", "trace"] and doc["trace"] is None


def test_alarms_check_result_is_typed_and_valid() -> None:
    """OUT-TYPED-RESULT: alarms check's verdicts (the AL properties) are a frozen
    result; with a trace added it validates against alarms-check.json."""
    config = AlarmConfig((ConnectionSpec("pub0", node=0, publishes=1),), nodes=("rabbit@n0",))
    explored = explore(CheckedAlarms(config))
    result = alarms_summary("3.10.8", explored)
    assert result.complete and result.exit_code == exit_codes.OK
    assert all(result.properties.values())
    assert "trace" not in result.to_json()
    doc = dataclasses.replace(result, files=WrittenTrace(trace="a.itf.json")).to_json()
    valid("alarms-check", doc)
    assert list(doc)[-2:] == ["exit_code", "trace"]


def test_step_kind_is_a_closed_set_every_kind_of_which_occurs() -> None:
    """NET-READ, NET-TAKE, NET-BUMP, NET-CRASH, NET-DOWN, OUT-TYPED-RESULT: ``Step.kind``
    is the Literal ``StepKind``; a graph with faults has a step of every kind and no
    other, and each prints as its kind."""
    graph = load_graph(str(BUGS / "dead-mirror-3.8.10-bug.json"))
    steps = ReadableNetwork(graph).steps
    assert {s.kind for s in steps} == set(get_args(StepKind))
    assert all(str(s).startswith(f"{s.kind}(") for s in steps)


def test_sweep_case_results_are_typed_and_store_as_rows() -> None:
    """SW-ROW, SW-FAILURE, OUT-TYPED-RESULT: a case's result is a frozen CaseResult;
    its row has only columns of the sweep's table (besides the trace, which the driver
    writes as a file, SW-TRACE) and the stored types (SW-ROW-TYPES)."""
    failed = failure_result("c1", "timeout", "no verdict within max_seconds = 1", 1.5, 30)
    assert (failed.verdict, failed.states, failed.exit_code) == ("timeout", 30, None)
    row = failed.to_row()
    assert set(row) - {"trace_z"} <= set(COLUMN_NAMES) and row["trace_z"] is None
    assert unstorable(row) == [] and row["blocked_forever"] == [] and row["violated"] == []
    assert list(row)[:2] == ["case_id", "verdict"]


def test_closed_sets_are_literals_every_value_of_which_occurs() -> None:
    """Z3-PROVE, Z3-SYNTH, PROP-NO-DEADLOCK, OUT-TYPED-RESULT: a verdict's status, a
    finding's kind, a deadlock's kind and synth's goal and status are Literal types
    (mypy checks every value built); the values the engines produce are among them."""
    assert get_type_hints(Verdict)["status"] == VerdictStatus
    assert get_type_hints(PropertyVerdict)["status"] == VerdictStatus
    assert get_type_hints(Finding)["kind"] == FindingKind
    assert get_type_hints(CheckResult)["deadlock_kind"] == DeadlockKind | None
    assert get_type_hints(AccountsCheckResult)["deadlock_kind"] == DeadlockKind | None
    hints = get_type_hints(SynthesisResult)
    assert (hints["goal"], hints["status"]) == (SynthesisGoal, SynthesisStatus)
    assert set(get_args(DeadlockKind)) == {"terminal", "blocked-forever"}
    assert set(get_args(FindingKind)) == {"invariant", "step", "terminal", "blocked-forever"}
    report = prove_graph(load_preset("stalled-queue"), ProveOptions(credit=CreditSpec(2, 1)))
    statuses = {v.status for v in report.verdicts.values()}
    assert statuses <= set(get_args(VerdictStatus)) and "violated" in statuses
    explored = summary(*check_graph(load_preset("stalled-queue"), CheckOptions()))
    assert explored.deadlock_kind in get_args(DeadlockKind)


def test_deadlock_kind_refuses_a_finding_that_is_not_a_deadlock() -> None:
    """PROP-NO-DEADLOCK: only a deadlock finding has a deadlock kind."""
    assert deadlock_kind(None) is None
    with pytest.raises(ValueError, match="not a deadlock"):
        deadlock_kind(Finding(property_id="PROP-MAILBOX-BOUND", kind="invariant", path=[]))


def test_conform_returns_a_frozen_result_of_a_whole_run(tmp_path) -> None:
    """AD-DIVERGENCE, OUT-TYPED-RESULT: the engine fills in a run as it goes and returns
    it frozen: a divergence found by a phase, with the trace already written, renders a
    valid conform document; the result cannot be changed afterwards."""
    result = run_conform(
        adapter_factory("mutant:ack-off-by-one"),
        ConformOptions(seed=20261122, out_dir=tmp_path),
    )
    assert isinstance(result, ConformResult) and result.verdict == "divergence"
    assert isinstance(result.phases, tuple) and result.phases and result.seconds > 0
    assert result.trace_path is not None and result.trace_path.is_file()
    doc = result.to_json()
    valid("conform", doc)
    assert doc["trace"] == str(result.trace_path) and doc["divergence"]["op_index"] >= 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.trace_path = None


def test_replay_returns_a_frozen_report_with_each_outcome_in_order(tmp_path) -> None:
    """AD-DIVERGENCE, OUT-TYPED-RESULT: replaying a diverging trace (shrunk on request) and a
    passing one reports each outcome, in order, in a frozen report."""
    mutant_run = run_conform(
        adapter_factory("mutant:ack-off-by-one"), ConformOptions(seed=20261122, out_dir=tmp_path)
    )
    assert mutant_run.trace_path is not None
    diverging = load_trace(mutant_run.trace_path)
    report = replay_traces(
        adapter_factory("mutant:ack-off-by-one"),
        [diverging, diverging],
        shrink_to=tmp_path / "shrunk",
    )
    assert isinstance(report.outcomes, tuple) and len(report.outcomes) == 2
    assert [o.status for o in report.outcomes] == ["diverged", "diverged"]
    assert all(o.shrunk is not None and o.shrunk.is_file() for o in report.outcomes)
    assert report.counts["diverged"] == 2 and report.exit_code == exit_codes.DIVERGENCE
    valid("replay", report.to_json())
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.failure = None
    passing = replay_traces(adapter_factory("reference"), [diverging])
    assert [o.status for o in passing.outcomes] == ["pass"] and passing.exit_code == 0


def test_prove_returns_a_frozen_report() -> None:
    """Z3-BOUNDARY, OUT-TYPED-RESULT: the proof is filled in as it goes and returned
    frozen: a symbolic proof's conditions and boundary cases are tuples, and the report
    cannot be changed afterwards."""
    report = prove_graph(load_preset("fanout"), ProveOptions(symbolic=True))
    assert isinstance(report, ProveReport) and report.seconds > 0
    assert isinstance(report.conditions, tuple) and report.conditions
    assert isinstance(report.boundary, tuple) and report.boundary
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.seconds = 0.0
    assert prove_result(report).boundary and prove_result(report).exit_code == exit_codes.OK


def test_alarms_run_rows_are_typed_and_print_as_the_json_lines() -> None:
    """AL-TIMELINE, AL-REPORTED-STATE, OUT-TYPED-RESULT: each step of ``alarms run`` is
    a frozen row whose renderer prints the command's step line, keys in printed order."""
    timeline = load_timeline("two-sources")
    rows = [timeline_row(timeline, r) for r in run_timeline(timeline)]
    assert all(isinstance(r.view, AlarmStateView) for r in rows)
    assert rows[5].view.connections["publisher"] == "blocked"
    result = CliRunner().invoke(main, ["alarms", "run", "two-sources", "--json"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[1:-1] == [r.to_json() for r in rows]
    assert list(lines[1]) == [
        "index",
        "step",
        "frames",
        "alarms",
        "connections",
        "consumed",
        "unread_frames",
        "queued",
        "violations",
    ]


def test_paging_json_lines_are_typed_rows() -> None:
    """PG-STREAM, OUT-TYPED-RESULT: each step line of ``paging --json`` is a frozen row's
    renderer, keys in printed order; the row's violations are the line's."""
    scenario = load_scenario("small-embedded")
    rows = [paging_step_row(r, [f"v{r.index}"]) for r in iter_scenario(scenario)]
    assert rows and all(isinstance(r, PagingStepRow) for r in rows)
    result = CliRunner().invoke(main, ["paging", "small-embedded", "--json"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert len(lines) == len(rows) + 2 and lines[-1]["end"] is True
    for line, row in zip(lines[1:-1], rows, strict=True):
        doc = row.to_json()
        assert doc["violations"] == [f"v{row.index}"]
        assert line == doc | {"violations": line["violations"]}
    assert list(lines[1]) == [
        "index",
        "step",
        "delivered",
        "passes",
        "after",
        "settled",
        "violations",
    ]


def test_accounts_compare_rows_render_from_the_comparisons() -> None:
    """CMP-CYCLE, CMP-SLOW-CONSUMER, OUT-TYPED-RESULT: ``accounts compare --json`` is
    the comparisons' rows, credit flow before accounts; a deadlock's kind is a
    DeadlockKind."""
    comparisons = (cycle_comparison(), slow_consumer_comparison())
    result = CliRunner().invoke(main, ["accounts", "compare", "--json"])
    rows = json.loads(result.output)
    assert rows == [row for c in comparisons for row in c.to_json()]
    assert [r["mechanism"] for r in rows] == ["credit_flow", "accounts"] * 2
    kinds = {v.deadlock for c in comparisons for v in (c.credit, c.accounts)}
    assert kinds - {None} and kinds - {None} <= set(get_args(DeadlockKind))
    valid("accounts-compare", rows)


def test_observe_record_and_workload_render_their_counts_without_the_snapshot() -> None:
    """OUT-TYPED-RESULT, OBS-WORKLOAD, OBS-TRACE-FILE: the workload's counts print in
    their order without the stall's snapshot (reported as a snapshot); the record
    summary carries the workload's counts and both cuts' pauses."""
    workload = WorkloadResult(
        published=(3, 3, 4),
        confirmed=(3, 3, 4),
        nacked=(0, 0, 0),
        errors=(),
        connection_blocked_seen=(1, 0, 0),
        queued={"cf.transient": 3},
        consumed_fan1=2,
        stalled_queue="<0.1.0>",
        snapshot_during={"t_suspended": 1},
    )
    doc = workload.to_json()
    assert list(doc) == [
        "published",
        "confirmed",
        "nacked",
        "errors",
        "connection_blocked_seen",
        "queued",
        "consumed_fan1",
        "stalled_queue",
    ]
    assert doc["published"] == [3, 3, 4]
    summary = RecordSummary("t.json", 10, 10, 8, workload, (2, 3))
    assert summary.to_json()["workload"] == doc and summary.to_json()["pause_ms"] == [2, 3]
    assert RecordSummary("t.json", 0, 0, 0, None, (1, 1)).to_json()["workload"] is None
