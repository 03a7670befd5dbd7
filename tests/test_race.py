"""SCOPE-RACE and OUT-PROGRESS (issue 31, points 3, 8 and 10): the proofs race the
exploration in a tracked child process, the verdict does not depend on which engine
wins, fault graphs get Z3-BMC's shortest deadlock for every supply, and a long check
outside a terminal prints progress lines."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import app, main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.inputs.graphs import load_graph
from creditflow.conformance.runtime import children
from creditflow.conformance.symbolic.every_supply import decide_check
from creditflow.conformance.symbolic.prove import ProveOptions, prove_graph
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx
from tests.strategies import fault_graphs, process_graphs


def fault_broker(readers: int = 1, queues: int = 2) -> FlowGraph:
    """Issue 31 point 3's shape, small: readers -> one channel each -> every queue;
    queue0 may crash; the channels ignore DOWN (NET-DOWN)."""
    g = nx.DiGraph(name="fault-broker", credit=[2, 1])
    for r in range(readers):
        g.add_node(f"reader{r}", source=True, publishes=1)
        g.add_node(f"channel{r}", on_peer_down="ignore")
        g.add_edge(f"reader{r}", f"channel{r}")
        for q in range(queues):
            g.add_edge(f"channel{r}", f"queue{q}")
    g.nodes["queue0"]["may_crash"] = True
    return flow_graph_from_networkx(g)


def _verdict(decision) -> tuple:
    primary = decision.primary
    return (
        decision.report.exit_code,
        None if primary is None else (primary.property_id, primary.length, primary.shortest),
    )


def test_a_bounded_deadlock_is_answered_by_the_search_and_the_proof_is_stopped():
    """SCOPE-RACE, issue 31 point 10: on a bounded question whose answer is a deadlock
    the exploration's answer is final; the proof child is stopped and reaped, and the
    verdict is the one of the search alone (--no-prove)."""
    before = set(children.live_pids())
    graph = load_graph("stalled-queue")
    options = CheckOptions(publishes=3, stop_at_deadlock=True)
    raced = decide_check(graph, options, every_supply=False)
    alone = decide_check(graph, options, every_supply=False, prove=False)
    assert raced.answered_by == "exploration" and raced.stopped == "proof"
    assert set(children.live_pids()) == before
    assert _verdict(raced) == _verdict(alone)
    assert raced.report.exit_code == exit_codes.DEADLOCK


@pytest.mark.slow
def test_a_bounded_question_the_proof_settles_stops_the_search():
    """SCOPE-RACE: the issue-21 broker, `{2,1}` and 3 publishes a reader: the proof for
    every supply answers in seconds while the exploration would take minutes; the search
    is stopped and the verdict is the proof's ("holds for 3 publishes per source")."""
    import random

    from creditflow.conformance.sweep.families import FAMILY_KINDS

    kind = FAMILY_KINDS["broker"]
    g = kind.build(
        {**kind.defaults(), "readers": 2, "channels_per_reader": 2, "queues": 3}, random.Random(0)
    )
    g.graph.update(name="broker", credit=[2, 1])
    decision = decide_check(
        flow_graph_from_networkx(g),
        CheckOptions(publishes=3, stop_at_deadlock=True),
        every_supply=False,
    )
    assert decision.answered_by == "proof" and decision.stopped == "exploration"
    assert decision.report.exit_code == exit_codes.OK
    assert decision.report.claim == "holds for 3 publishes per source"


@pytest.mark.slow
def test_a_fault_graph_gets_the_shortest_deadlock_for_every_supply():
    """SCOPE-RACE, issue 31 point 3: a channel that ignores the DOWN of a queue that may
    crash is blocked forever with 2 publishes; the example supply (1) has no deadlock,
    only PROP-FAULT-FORGET (whatever its length). `check` answers with Z3-BMC's deadlock,
    certified shortest for every supply, as `prove` does: exit 10, not 12."""
    graph = fault_broker()
    decision = decide_check(graph, CheckOptions(stop_at_deadlock=True))
    proved = prove_graph(graph, ProveOptions(every_supply=True, timeout_s=60))
    assert NO_DEADLOCK in proved.counterexamples
    assert decision.report.exit_code == exit_codes.DEADLOCK, decision.report.claim
    assert decision.primary is not None and decision.primary.property_id == NO_DEADLOCK
    assert decision.primary.shortest
    assert decision.primary.length == proved.counterexamples[NO_DEADLOCK].finding.length
    # the same run's supply, explored: a deadlock no shorter
    _, result = check_graph(decision.system.graph, CheckOptions(stop_at_deadlock=True))
    assert result.findings[NO_DEADLOCK].length >= decision.primary.length


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(process_graphs(max_nodes=4, max_publishes=2))
def test_raced_and_sequential_verdicts_are_the_same(graph):
    """SCOPE-RACE on random graphs: a bounded question gets the same exit code, finding
    and certified length raced as with the search alone (and with the proof's answer
    where the proof won)."""
    options = CheckOptions(publishes=2, stop_at_deadlock=True)
    raced = decide_check(graph, options, every_supply=False)
    alone = decide_check(graph, options, every_supply=False, prove=False)
    if alone.report.complete or alone.primary is not None:
        assert _verdict(raced) == _verdict(alone), (raced.answered_by, raced.report.claim)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(fault_graphs(max_nodes=3, max_publishes=2))
def test_fault_graphs_bmc_k_induction_and_the_explorer_agree(graph):
    """Issue 31: on random fault graphs with their own supply, Z3-BMC, k-induction and the
    explorer agree on PROP-NO-DEADLOCK and on its shortest length (EXP-SHORTEST against
    Z3-BMC's depth-first-found, proved-shortest witness)."""
    _, result = check_graph(graph, CheckOptions())
    if not result.complete:
        return
    report = prove_graph(graph, ProveOptions(timeout_s=30))
    verdict = report.verdicts[NO_DEADLOCK]
    explored = result.findings.get(NO_DEADLOCK)
    if verdict.status == "proved":
        assert explored is None, verdict.method
    if explored is None:
        assert verdict.status != "violated"
        return
    if verdict.status == "violated":
        found = report.counterexamples[NO_DEADLOCK].finding
        assert report.bmc is not None
        if report.bmc.shortest.get(NO_DEADLOCK):
            assert found.length == explored.length
        else:
            assert found.length >= explored.length
    else:
        # none within the BMC depth: the explorer's shortest is deeper
        assert verdict.status in ("none-up-to-depth", "unknown")
        if verdict.status == "none-up-to-depth":
            assert report.depth is not None and explored.length > report.depth


def test_progress_lines_outside_a_terminal(monkeypatch, tmp_path):
    """OUT-PROGRESS, issue 31 point 8: with --progress and stderr not a terminal, a line
    every PROGRESS_LINE_SECONDS (here shortened) while the check runs."""
    monkeypatch.setattr(app, "PROGRESS_LINE_SECONDS", 0.05, raising=False)
    path = tmp_path / "fault.json"
    path.write_text(json.dumps(nx.node_link_data(fault_broker().to_networkx(), edges="links")))
    result = CliRunner().invoke(
        main, ["check", str(path), "--progress", "--json", "--trace-out", str(tmp_path / "t.json")]
    )
    assert result.exit_code == exit_codes.DEADLOCK, result.output
    lines = [line for line in result.stderr.splitlines() if "still running" in line]
    assert lines and lines[0].startswith("checking fault-broker: ")
    json.loads(result.stdout)  # stdout is the verdict only


def test_no_progress_lines_by_default_in_a_short_run(tmp_path):
    """OUT-PROGRESS: without an option a short run outside a terminal prints no line."""
    result = CliRunner().invoke(
        main, ["check", "fanout", "--json", "--trace-out", str(tmp_path / "t")]
    )
    assert "still running" not in result.stderr


def test_a_proof_child_that_dies_leaves_the_search_s_verdict(monkeypatch):
    """SCOPE-RACE, SIG-CHILDREN: a proof child that ends without an answer (here it
    cannot even start its module) is reaped, reported, and the verdict is the
    exploration's, as with --no-prove; nothing claims a proof."""
    from creditflow.conformance.symbolic import race

    monkeypatch.setattr(race, "CHILD_MODULE", "creditflow.no_such_module")
    before = set(children.live_pids())
    graph = fault_broker()
    options = CheckOptions(stop_at_deadlock=True)
    failed = decide_check(graph, options)
    alone = decide_check(graph, options, prove=False)
    assert failed.proof_failed and "no_such_module" in failed.proof_failed
    assert set(children.live_pids()) == before
    assert _verdict(failed) == _verdict(alone)
    assert failed.report.claim == alone.report.claim
