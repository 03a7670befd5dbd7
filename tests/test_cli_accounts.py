"""`creditflow accounts …` and `creditflow alarms check`: exit codes, JSON, traces written
before reporting, one-line errors for bad graphs."""

from __future__ import annotations

import json

from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.actor_graphs import actor_preset_names, load_actor_graph
from creditflow.conformance.inputs.itf import read_document


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_presets_all_load():
    """AC-GRAPH: every shipped actor-graph preset is valid."""
    names = actor_preset_names()
    assert {"seed", "seed-small", "rpc", "slow-consumer", "shared-account", "crash-timer"} <= set(
        names
    )
    for name in names:
        assert load_actor_graph(name).description


def test_check_reports_tight_bound_and_exit_0():
    """AC-OVERSHOOT: seed-small holds everything and reaches its bound exactly."""
    result = run("accounts", "check", "seed-small", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["accounts"]["A"] == {"max_debt": 10, "bound": 10, "tight": True, "naive_bound": 6}
    assert all(report["properties"].values())


def test_naive_bound_violation_writes_the_trace_first(tmp_path):
    """AC-OVERSHOOT-NAIVE, TRACE-ITF: exit 12 and a shortest ITF trace on disk."""
    trace = tmp_path / "naive.itf.json"
    result = run("accounts", "check", "seed", "--naive-bound", "--json", "--trace-out", str(trace))
    assert result.exit_code == 12
    report = json.loads(result.stdout)
    assert report["counterexample_lengths"] == {"AC-OVERSHOOT-NAIVE": 5}
    doc = read_document(trace)
    assert doc["#meta"]["creditflow"]["property"] == "AC-OVERSHOOT-NAIVE"
    assert len(doc["states"]) == 6 and doc["states"][-1]["mbt::actionTaken"] == "turn"


def test_stalled_consumer_is_a_deadlock_exit_10(tmp_path):
    """PROP-NO-DEADLOCK, CMP-SLOW-CONSUMER: exit 10 with the lasso trace."""
    trace = tmp_path / "slow.itf.json"
    result = run("accounts", "check", "slow-consumer", "--json", "--trace-out", str(trace))
    assert result.exit_code == 10
    assert json.loads(result.stdout)["blocked_forever"] == ["P1"]
    assert read_document(trace)["#meta"]["creditflow"]["kind"] == "blocked-forever"


def test_bad_actor_graph_is_one_line_exit_2(tmp_path):
    """AC-GRAPH: a cyclic graph without max_hops is rejected naming the file."""
    bad = tmp_path / "loop.json"
    bad.write_text(
        json.dumps(
            {
                "nodes": [{"id": "A", "reads": 1}, {"id": "B"}],
                "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "A"}],
            }
        )
    )
    result = CliRunner().invoke(main, ["accounts", "check", str(bad)])
    assert result.exit_code == 2
    assert str(bad) in result.stderr and "max_hops" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_example_and_compare_print_the_documented_results():
    """AC-EXAMPLE, CMP-CYCLE, CMP-SLOW-CONSUMER from the command line."""
    example = run("accounts", "example")
    assert example.exit_code == 0 and "repay 1, wake" in example.stdout
    rows = json.loads(run("accounts", "compare", "--json").stdout)
    verdicts = {(r["rule"], r["mechanism"]): r["deadlock"] for r in rows}
    assert verdicts == {
        ("CMP-CYCLE", "credit_flow"): "terminal",
        ("CMP-CYCLE", "accounts"): None,
        ("CMP-SLOW-CONSUMER", "credit_flow"): "blocked-forever",
        ("CMP-SLOW-CONSUMER", "accounts"): "blocked-forever",
    }


def test_alarms_check_both_profiles():
    """AL-CLUSTER, AL-CHANNEL-FLOW: the alarm model explored from the command line."""
    for profile in ("3.10.8", "2008"):
        result = run("alarms", "check", "--profile", profile, "--json")
        assert result.exit_code == 0, result.output
        assert all(json.loads(result.stdout)["properties"].values())
