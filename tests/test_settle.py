"""EXP-SETTLE: a budget-bound ``check`` with nothing found is settled by Z3 only when
every property is proved; anything less leaves it incomplete (exit code 4)."""

from __future__ import annotations

import json
import random

import networkx as nx
from click.testing import CliRunner

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.explore.results import Settlement
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.sweep.families import FAMILY_KINDS
from creditflow.conformance.symbolic.settle import apply_settlement, settle
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import flow_graph_from_networkx


def broker_file(tmp_path, readers: int = 1, channels: int = 2, queues: int = 2) -> str:
    """The sweep's broker family (SW-BROKER) as a node-link file, {2,1}, 3 publishes."""
    kind = FAMILY_KINDS["broker"]
    g = kind.build(
        {**kind.defaults(), "readers": readers, "channels_per_reader": channels, "queues": queues},
        random.Random(0),
    )
    g.graph.update(name="broker", credit=[2, 1])
    for _, data in g.nodes(data=True):
        if data.get("source"):
            data["publishes"] = 3
    path = tmp_path / "broker.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    return str(path)


def run(*args: str) -> tuple[int, dict]:
    """``check`` asked about the graph's own supply (SCOPE-SUPPLY), where EXP-SETTLE
    applies: the default question, every supply, is asked of the proof first."""
    result = CliRunner().invoke(main, ["check", *args, "--graph-supply", "--json"])
    return result.exit_code, json.loads(result.output)


def test_budget_bound_check_is_settled_by_a_proof(tmp_path):
    """EXP-SETTLE: the exploration stops at its budget, Z3 proves every property, the
    verdicts hold and the exit code is 0; the exploration's figures are kept. `{3,0}`
    blocks the reader at its third publish, so nothing is proved for every supply
    (SCOPE-BOUNDED-PROOF explores) and the supply asked, 2, is settled."""
    result = CliRunner().invoke(
        main,
        ["check", "rabbitmq-publish", "--credit", "3,0", "--publishes", "2"]
        + ["--max-states", "5", "--json"],
    )
    code, report = result.exit_code, json.loads(result.output)
    assert code == exit_codes.OK == report["exit_code"]
    assert report["complete"] is False and report["states"] == 6
    assert report["settled"]["proved"] is True
    assert report["settled"]["methods"]["PROP-NO-DEADLOCK"] == "bmc-complete"
    assert all(report["properties"].values()) and report["deadlock"] is False
    assert report["claim"] == "holds for 2 publishes per source"


def test_a_graph_proved_for_every_supply_is_not_explored(tmp_path):
    """SCOPE-BOUNDED-PROOF: the broker's own supply is asked, every property is proved
    for every supply, so no state is explored and nothing needs settling."""
    code, report = run(broker_file(tmp_path), "--max-states", "300")
    assert code == exit_codes.OK == report["exit_code"]
    assert report["states"] == 0 and "settled" not in report
    assert report["decided_by"]["PROP-NO-DEADLOCK"] in {"edge-lemma", "ranking", "dead-set"}
    assert all(report["properties"].values()) and report["deadlock"] is False


def test_no_prove_leaves_it_incomplete(tmp_path):
    code, report = run(broker_file(tmp_path), "--max-states", "300", "--no-prove")
    assert code == exit_codes.INCOMPLETE and "settled" not in report
    assert all(v is None for v in report["properties"].values())


def test_a_counterexample_settles_nothing():
    """stalled-queue deadlocks: Z3 finds it, but a settlement needs proofs of every
    property, so the budget-bound check stays incomplete."""
    code, report = run("stalled-queue", "--max-states", "5")
    assert code == exit_codes.INCOMPLETE
    assert report["settled"]["result"] == "counterexample"
    assert report["settled"]["proved"] is False
    assert report["deadlock"] is None


def test_a_complete_exploration_is_not_settled(tmp_path):
    code, report = run(broker_file(tmp_path, channels=1, queues=1))
    assert code == exit_codes.OK and report["complete"] and "settled" not in report


def test_settle_agrees_with_a_complete_exploration():
    """Where both finish, a proof never contradicts the explorer (EXP-SETTLE)."""
    for name, credit, publishes in (
        ("rabbitmq-publish", (2, 1), 6),
        ("fanout", (3, 1), 4),
        ("stalled-queue", (2, 1), 4),
    ):
        options = CheckOptions(credit=CreditSpec(*credit), publishes=publishes)
        _, result = check_graph(load_preset(name), options)
        assert result.complete
        settlement = settle(load_preset(name), options, seconds=30)
        assert settlement.proved == (not result.findings), name
        assert settlement.result == ("counterexample" if result.findings else "proved"), name


def test_apply_settlement_needs_every_property_proved():
    report = summary(*check_graph(load_preset("fanout"), CheckOptions(max_states=10)))
    assert report.exit_code == exit_codes.INCOMPLETE
    partial = Settlement(proved=True, result="proved", methods={"PROP-CONSERVATION": "invariant"})
    out = apply_settlement(report, partial)
    assert out.exit_code == exit_codes.INCOMPLETE
    assert out.properties == report.properties


def test_settle_is_not_tried_on_big_graphs():
    """EXP-SETTLE: above SETTLE_LIMIT the encoding alone would outlast the timeout."""
    g = nx.DiGraph(name="chain", credit=[2, 1])
    g.add_node("n0", source=True, publishes=2)
    nx.add_path(g, [f"n{i}" for i in range(150)])
    settlement = settle(flow_graph_from_networkx(g), CheckOptions())
    assert settlement.result == "too-big" and not settlement.proved
