"""EXP-POR: partial-order reduction keeps the full search's verdicts, kinds and lengths."""

from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import stubborn_sets
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import EdgeSpec, FlowGraph, NodeSpec
from tests.strategies import fault_graphs, process_graphs


def outcome(graph, **options):
    """Completeness, and per violated property its kind and shortest length."""
    _, result = check_graph(graph, CheckOptions(max_states=20_000, **options))
    found = {pid: (f.kind, f.length, f.shortest) for pid, f in result.findings.items()}
    return result, (result.complete, result.stopped_at_deadlock, found)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    graph=process_graphs(max_nodes=4, max_publishes=3),
    symmetry=st.booleans(),
    online=st.booleans(),
    mailbox_bound=st.sampled_from([None, None, None, 1, 2]),
)
def test_partial_order_keeps_verdicts_kinds_and_lengths(graph, symmetry, online, mailbox_bound):
    """EXP-POR: on random graphs (cycles, stalled and checking processes, odd credits)
    the reduced search decides what the unreduced one decides: the same violated
    properties, deadlock kinds and shortest lengths, certified the same way."""
    options = {"symmetry": symmetry, "stop_at_deadlock": online, "mailbox_bound": mailbox_bound}
    full, expected = outcome(graph, reduce=False, **options)
    assume(full.complete or full.stopped_at_deadlock)  # cycles with fan-out grow forever
    reduced, got = outcome(graph, partial_order=True, **options)
    assert got == expected
    assert reduced.partial_order
    for pid, (kind, _, _) in expected[2].items():
        event(f"violated: {pid} ({kind})")
    event("holds" if not expected[2] else "violated")


def _growing_cycle() -> FlowGraph:
    """The case CI's random test found: n0 publishes once into a cycle n0 -> n3 -> n0 and
    n3 -> n1 -> n2 -> n0 with a stalled n2; the cycle's mailboxes grow without bound."""

    def edge(sender: str, receiver: str, initial: int) -> EdgeSpec:
        return EdgeSpec(sender=sender, receiver=receiver, credit=CreditSpec(initial, 0))

    return FlowGraph(
        name="growing-cycle",
        nodes=(
            NodeSpec("n0", source=True, publishes=1),
            NodeSpec("n1"),
            NodeSpec("n2", stalled=True),
            NodeSpec("n3"),
        ),
        edges=(
            edge("n0", "n3", 0),
            edge("n1", "n2", 1),
            edge("n2", "n0", 0),
            edge("n3", "n0", 0),
            edge("n3", "n1", 0),
        ),
    )


def test_reduced_search_cut_by_the_budget_hands_over_to_the_full_search():
    """EXP-POR-BUDGET: on an unbounded state graph the reduced search postpones a 3-step
    blocked-forever deadlock past its whole budget; it decides nothing, so the full
    search (EXP-ONLINE) answers, exactly as without EXP-POR."""
    graph = _growing_cycle()
    por = stubborn_sets(CheckedNetwork(graph))
    assert por is not None
    options = {"symmetry": False, "stop_at_deadlock": True}
    _, expected = outcome(graph, reduce=False, **options)
    reduced, got = outcome(graph, partial_order=True, **options)
    assert expected == (False, True, {"PROP-NO-DEADLOCK": ("blocked-forever", 3, True)})
    assert got == expected
    assert reduced.partial_order


@settings(max_examples=100, deadline=None)
@given(graph=process_graphs(max_nodes=4, max_publishes=3))
def test_reduced_graph_decides_holding_graphs_alone(graph):
    """EXP-POR: where nothing is violated, the verdict comes from the reduced graph
    alone, which is never larger than the unreduced one without EXP-SAFE."""
    full, expected = outcome(graph, reduce=False, symmetry=False)
    assume(full.complete and not full.findings)
    reduced, got = outcome(graph, partial_order=True, symmetry=False)
    assert got == expected
    assert reduced.partial_order and reduced.reduced
    assert reduced.n_states <= full.n_states


@settings(max_examples=30, deadline=None)
@given(graph=fault_graphs(max_nodes=3, max_publishes=2))
def test_no_partial_order_on_fault_graphs(graph):
    """EXP-POR, EXP-FAULTS: not applied where a crash is possible."""
    system = CheckedNetwork(graph, count_consumed=False)
    assert (stubborn_sets(system) is None) == bool(system.network.crashable)
    _, result = check_graph(graph, CheckOptions(max_states=2_000, partial_order=True))
    assert result.partial_order is not bool(system.network.crashable)


def test_partial_order_shrinks_fanout():
    """EXP-POR: on fanout {3,1} x 6 the stubborn sets explore fewer states than the
    safe-action reduction, with the same verdict."""
    graph = load_preset("fanout")
    options = {"credit": CreditSpec(3, 1), "publishes": 6}
    _, safe = check_graph(graph, CheckOptions(**options))
    _, por = check_graph(graph, CheckOptions(partial_order=True, **options))
    assert por.partial_order and not safe.partial_order
    assert por.findings == safe.findings == {} and por.complete
    assert por.n_states < safe.n_states


def test_check_partial_order_flag(tmp_path):
    """EXP-POR through `creditflow check --partial-order --json`: the reduced graph
    decides a holding graph (fewer states, `partial_order` true); on a deadlocking one
    the length is the full search's, certified shortest. (`--no-prove`: the proofs would
    answer the holding graph first, SCOPE-BOUNDED-PROOF, without exploring.)"""
    runner = CliRunner()
    args = ["check", "fanout", "--credit", "3,1", "--publishes", "8", "--no-prove", "--json"]
    plain = json.loads(runner.invoke(main, args, catch_exceptions=False).stdout)
    result = runner.invoke(main, [*args, "--partial-order"], catch_exceptions=False)
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["partial_order"] is True and plain["partial_order"] is False
    assert report["properties"] == plain["properties"]
    assert report["states"] < plain["states"]
    deadlock = ["check", "stalled-queue", "--credit", "2,1", "--publishes", "10", "--json"]
    trace = ["--trace-out", str(tmp_path / "t.itf.json"), "--dot-out", str(tmp_path / "p.dot")]
    result = runner.invoke(main, [*deadlock, *trace, "--partial-order"], catch_exceptions=False)
    assert result.exit_code == 10
    report = json.loads(result.stdout)
    assert report["partial_order"] is True
    assert report["deadlock_kind"] == "blocked-forever"
    assert report["shortest_counterexample_length"] == 4 and report["shortest_certified"]
