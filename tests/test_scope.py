"""SCOPE-*: what a verdict claims, for which supply, and its exit code; EXP-DIRECTED and
Z3-STEP-BOUND for RabbitMQ-sized credits (issue "Answers for the settings people run")."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.directed import directed_run, replayed_finding
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.inputs.graphs import load_graph, preset_names
from creditflow.conformance.symbolic.every_supply import answer_every_supply
from creditflow.conformance.symbolic.step_bound import step_bound
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph
from tests.strategies import process_graphs


def check(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["check", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.output)


def prove(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["prove", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("initial", [1, 7, 400, 4000])
def test_credit_without_grants_blocks_the_reader_after_exactly_i_reads(tmp_path, initial):
    """SCOPE-DAG, `{I,0}`: RabbitMQ's ack countdown starts at 0 and never grants; the
    reader is blocked forever after exactly I reads, whatever the preset's supply (4);
    SCOPE-TEXT says so, SCOPE-SHORTEST: the length meets Z3-STEP-BOUND."""
    code, report = check(
        "rabbitmq-publish", "--credit", f"{initial},0", "--trace-out", str(tmp_path / "t.itf.json")
    )
    assert code == exit_codes.DEADLOCK == report["exit_code"]
    assert report["scope"]["supply"] == "every"
    assert report["blocked_forever"] == ["reader"]
    assert report["shortest_counterexample_length"] == initial == report["step_bound"]
    assert report["shortest_certified"] is True
    publishes = "1 publish" if initial == 1 else f"{initial:,} publishes"
    assert report["claim"] == f"violated with {publishes} per source: not for every supply"
    assert (tmp_path / "t.itf.json").exists()


def test_more_after_above_initial_blocks_forever_after_i_sends():
    """SCOPE-DAG, `{I, M > I}`: at most I acks ever arrive, fewer than M."""
    code, report = check("rabbitmq-publish", "--credit", "100,200")
    assert code == exit_codes.DEADLOCK
    assert report["shortest_counterexample_length"] == 100 == report["step_bound"]


def test_rabbitmq_defaults_hold_for_every_supply():
    """RabbitMQ 3.10.8's `{400,200}` and msg_store `{4000,800}` (the preset's own):
    proved for every supply without exploring."""
    code, report = check("rabbitmq-publish")
    assert code == exit_codes.OK
    assert report["scope"] == {"supply": "every"}
    assert report["states"] == 0 and all(report["properties"].values())
    assert report["decided_by"]["PROP-NO-DEADLOCK"] == "edge-lemma"
    assert report["claim"] == "holds for every supply"


@pytest.mark.parametrize("credit", ["0,0", "-1,5", "-3,-3"])
def test_disabled_credit_never_blocks(credit):
    """CF-DISABLED: `I <= 0` never blocks, so nothing deadlocks for any supply."""
    code, report = check("rabbitmq-publish", "--credit", credit)
    assert code == exit_codes.OK and report["claim"] == "holds for every supply"


def test_negative_more_after_is_like_zero():
    """`{5,-1}`: no grant is ever sent (CF-DISABLED), blocked forever after 5 reads."""
    code, report = check("rabbitmq-publish", "--credit", "5,-1")
    assert code == exit_codes.DEADLOCK and report["shortest_counterexample_length"] == 5


def test_a_bounded_question_proved_for_every_supply_is_not_explored():
    """SCOPE-BOUNDED-PROOF: every property proved for every supply holds for the supply
    asked; SCOPE-RACE: the proof and the search race, and whichever answers first the
    verdict is the same as --no-prove's (a proof's answer explored nothing)."""
    code, report = check("rabbitmq-publish", "--publishes", "4")
    assert code == exit_codes.OK and report["scope"]["supply"] == 4
    if report["states"] == 0:
        assert report["decided_by"]["PROP-NO-DEADLOCK"] == "edge-lemma"
    else:
        assert report["complete"]
    assert report["claim"] == "holds for 4 publishes per source"
    code, explored = check("rabbitmq-publish", "--publishes", "4", "--no-prove")
    assert code == exit_codes.OK and explored["states"] > 0 and explored["complete"]
    assert explored["properties"] == report["properties"]


def test_a_bounded_question_keeps_exploration():
    """SCOPE-SUPPLY, SCOPE-BOUNDED-PROOF: --publishes N asks about N only; a deadlock
    for a larger supply (here 400) does not carry over, N is explored, and a complete
    exploration is exit 0."""
    code, report = check("rabbitmq-publish", "--credit", "400,0", "--publishes", "4")
    assert code == exit_codes.OK
    assert report["scope"]["supply"] == 4 and report["states"] > 0
    assert report["claim"] == "holds for 4 publishes per source"
    code, report = check("rabbitmq-publish", "--credit", "400,0", "--graph-supply")
    assert code == exit_codes.OK and report["scope"]["supply"] == 4


def test_an_example_supply_is_not_every_supply():
    """SCOPE-EXIT: a cycle explored completely for its example supply, with nothing
    found, is not a proof for every supply: exit 4, and the claim says so."""
    code, report = check("cycle2", "--credit", "10,1", "--publishes", "1")
    assert code == exit_codes.OK  # the bounded question: established
    code, report = check("cycle2", "--credit", "10,1")
    assert code == exit_codes.INCOMPLETE == report["exit_code"]
    assert report["scope"]["supply"] == "every"
    assert report["scope"]["explored_supply"] == 4  # the preset's example supply
    assert "for every supply: not established" in report["claim"]


def test_prove_answers_the_supply_asked():
    """SCOPE-SUPPLY, SCOPE-DAG: `{5,0}` blocks the reader at its fifth publish; asked
    about 2 publishes, prove does not answer with EXP-DIRECTED's 5-publish run (it reads
    what it needs) but proves the 2; asked about 5, it finds the 5-step deadlock."""
    code, report = prove("rabbitmq-publish", "--credit", "5,0", "--publishes", "2")
    assert code == exit_codes.OK and report["result"] == "proved"
    assert report["scope"]["supply"] == 2
    code, report = prove("rabbitmq-publish", "--credit", "5,0", "--publishes", "5")
    assert code == exit_codes.DEADLOCK and report["result"] == "counterexample"
    assert report["counterexample"]["publishes"] == {"reader": 5}
    assert report["counterexample"]["length"] == 5


def test_prove_bounded_non_finding_is_not_exit_0():
    """SCOPE-EXIT for prove: `--depth` below the deadlock's depth finds nothing, which
    establishes nothing (exit 4); the scope names the depth."""
    code, report = prove("cycle2", "--credit", "2,1", "--depth", "5")
    assert code == exit_codes.INCOMPLETE == report["exit_code"]
    assert report["result"] == "unknown"
    assert report["scope"] == {"supply": "every", "depth": 5}
    assert report["properties"]["PROP-NO-DEADLOCK"]["status"] == "none-up-to-depth"


def test_prove_large_credits_in_seconds():
    """`prove` with `{400,0}`: EXP-DIRECTED, not a timeout (was: no answer in 60 s)."""
    code, report = prove("rabbitmq-publish", "--credit", "400,0", "--timeout", "30")
    assert code == exit_codes.DEADLOCK
    assert report["counterexample"]["length"] == 400
    assert report["counterexample"]["publishes"] == {"reader": 400}
    assert report["properties"]["PROP-NO-DEADLOCK"]["method"] == "directed"


def test_prove_symbolic_names_the_graphs_own_credits_outside(tmp_path):
    """Z3-OWN-CREDITS: the derived condition and the graph's own `{100,200}`."""
    graph = tmp_path / "g.json"
    graph.write_text(
        json.dumps(
            {
                "directed": True,
                "graph": {"name": "g"},
                "nodes": [{"id": "reader", "publishes": 2}, {"id": "channel"}],
                "links": [{"source": "reader", "target": "channel", "credit": [100, 200]}],
            }
        )
    )
    code, report = prove(str(graph), "--symbolic")
    assert report["own_credits_outside"] == {"reader->channel": [100, 200]}


@pytest.mark.parametrize("name", preset_names())
@pytest.mark.parametrize("credit", ["400,200", "2,1", "400,0"])
def test_every_preset_has_a_scoped_verdict(name, credit):
    """Every preset under RabbitMQ-sized and small credits: the exit code follows
    SCOPE-EXIT and a deadlock is a replayed run."""
    code, report = check(name, "--credit", credit, "--no-symmetry")
    assert report["scope"]["supply"] == "every"
    if code == exit_codes.OK:
        assert all(report["properties"].values()) and "explored_supply" not in report["scope"]
    elif code == exit_codes.DEADLOCK:
        assert report["deadlock"] is True and report["shortest_counterexample_length"] > 0
    else:
        assert code == exit_codes.INCOMPLETE and "not established" in report["claim"]
    if load_graph(name).is_dag() and not any(n.stalled for n in load_graph(name).nodes):
        expect_holds = credit != "400,0"
        assert (code == exit_codes.OK) == expect_holds, (name, credit, report["claim"])


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_under_rabbitmqs_defaults_by_role(tmp_path, name):
    """IN-CONFIG-DEFAULTS with SCOPE-SUPPLY: an advanced.config that sets nothing gives
    every edge RabbitMQ 3.10.8's `{400,200}` and msg_store edges `{4000,800}`; graphs
    without cycles or stalled processes hold for every supply, the others are scoped."""
    config = tmp_path / "advanced.config"
    config.write_text("%% nothing set: RabbitMQ's defaults\n[{rabbit, []}].\n")
    code, report = check(name, "--config", str(config), "--trace-out", str(tmp_path / "t.json"))
    graph = load_graph(name)
    plain_dag = graph.is_dag() and not any(n.stalled for n in graph.nodes)
    assert (code == exit_codes.OK) == plain_dag, report["claim"]
    assert report["scope"]["supply"] == "every"
    if not plain_dag:
        assert code in (exit_codes.DEADLOCK, exit_codes.INCOMPLETE), report["claim"]


@pytest.mark.slow
def test_a_million_credits_in_seconds():
    """`{1000000,0}`: a witness of one million reads, replayed through the model."""
    answer = answer_every_supply(
        load_graph("rabbitmq-publish"), CheckOptions(credit=CreditSpec(1_000_000, 0)), 60
    )
    assert answer is not None and answer.counterexample is not None
    finding = answer.counterexample.finding
    assert finding.length == 1_000_000 and finding.processes == ("reader",)
    assert answer.step_bound == 1_000_000


def _with_supply(graph: FlowGraph, reads: dict[str, int]) -> FlowGraph:
    return graph.with_supplies(reads)


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=4, acyclic=True), st.data())
def test_directed_witnesses_agree_with_the_explorer(graph, data):
    """EXP-DIRECTED and Z3-STEP-BOUND against the explorer on random acyclic graphs:
    a directed run replays, its supply deadlocks for the explorer too, never in more
    steps, and where the run meets the bound the explorer's shortest is that length
    (SCOPE-SHORTEST)."""
    bound = step_bound(graph)
    if bound.steps is None:
        return
    target = data.draw(st.sampled_from(sorted({e.split("->")[0] for e in bound.per_edge})))
    run = directed_run(graph, target, 2 * bound.per_edge_min(target) + 200)
    if run is None:
        return
    system, finding = replayed_finding(graph, run)
    assert finding.length >= bound.steps
    exact = _with_supply(graph, run.reads)
    _, result = check_graph(exact, CheckOptions(stop_at_deadlock=True))
    assert NO_DEADLOCK in result.findings
    explored = result.findings[NO_DEADLOCK].length
    assert bound.steps <= explored <= finding.length
    if finding.length == bound.steps:
        assert explored == finding.length


@settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=4, acyclic=True))
def test_every_supply_answers_agree_with_the_explorer(graph):
    """SCOPE-ORDER against the explorer on random acyclic graphs: "holds for every
    supply" is never contradicted by an exploration of supplies 1..3, and a deadlock
    claimed shortest for every supply has exactly that length for its own supply."""
    answer = answer_every_supply(graph, CheckOptions(), 30)
    assert answer is not None
    if answer.proved:
        for supply in (1, 2, 3):
            _, result = check_graph(graph.with_publishes(supply), CheckOptions())
            assert result.complete and not result.findings, supply
        return
    cex = answer.counterexample
    if cex is None or cex.finding.property_id != NO_DEADLOCK:
        return
    exact = _with_supply(graph, cex.publishes)
    _, result = check_graph(exact, CheckOptions(stop_at_deadlock=True))
    explored = result.findings[NO_DEADLOCK].length
    assert explored <= cex.finding.length
    if "shortest for every supply" in cex.finding.detail:
        assert explored == cex.finding.length


def test_a_witness_over_the_trace_limit_is_printed_not_written(tmp_path, monkeypatch):
    """TRACE-LIMIT: a run longer than the limit is not written as ITF; the line says
    why and the steps are printed merged."""
    from creditflow.conformance.traces import network

    monkeypatch.setattr(network, "TRACE_STEP_LIMIT", 50)
    trace = tmp_path / "t.itf.json"
    result = CliRunner().invoke(
        main, ["check", "rabbitmq-publish", "--credit", "400,0", "--trace-out", str(trace)]
    )
    assert result.exit_code == exit_codes.DEADLOCK
    assert not trace.exists()
    assert "more than the ITF limit of 50 (TRACE-LIMIT)" in result.output
    assert "1–400  read(reader) (×400)" in result.output
    code, report = check("rabbitmq-publish", "--credit", "400,0", "--trace-out", str(trace))
    assert report["trace"] is None and "TRACE-LIMIT" in report["trace_not_written"]


@pytest.mark.parametrize(
    ("scenario", "length"),
    [
        ("credit-more-after-above-initial-bug", 100),
        ("credit-more-after-above-initial-fixed", None),
        ("credit-zero-more-after-bug", 400),
        ("credit-zero-more-after-fixed", None),
    ],
)
def test_credit_setting_bug_corpus(scenario, length, tmp_path):
    """The credit-setting scenarios of the bug corpus (spec/graphs/bugs): the buggy
    spec deadlocks for every supply large enough, with its shortest run (SCOPE-SHORTEST);
    the fixed one holds for every supply (SCOPE-EXIT)."""
    from pathlib import Path

    graph = Path(__file__).resolve().parent.parent / "spec/graphs/bugs" / f"{scenario}.json"
    code, report = check(str(graph), "--trace-out", str(tmp_path / "t.itf.json"))
    if length is None:
        assert code == exit_codes.OK and report["claim"] == "holds for every supply"
    else:
        assert code == exit_codes.DEADLOCK
        assert report["shortest_counterexample_length"] == length == report["step_bound"]


def test_a_deep_edge_with_m_above_i_is_decided_for_every_supply(tmp_path):
    """EXP-DIRECTED-STARVE: `msg_store_credit_disc_bound {2000,2500}` (M > I on queue ->
    msg_store): with exactly the supply that blocks the queue, nothing more arrives and
    the queue is blocked forever; `check` says so for every supply, exit 10 (was: "for
    every supply: not established", exit 4)."""
    config = tmp_path / "advanced.config"
    config.write_text("[{rabbit, [{msg_store_credit_disc_bound, {2000, 2500}}]}].\n")
    code, report = check(
        "rabbitmq-publish", "--config", str(config), "--trace-out", str(tmp_path / "t.json")
    )
    assert code == exit_codes.DEADLOCK, report["claim"]
    assert report["deadlock"] is True and "queue" in report["blocked_forever"]
    assert report["scope"]["supply"] == "every"
