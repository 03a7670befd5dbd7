"""``creditflow check`` on AMQP topologies (AMQ-TOPOLOGY, AMQ-PRESETS) with the exit
codes of SCOPE-EXIT: a complete search of one supply is not "every supply" (exit 4),
a stall exits 10 with the shortest steps printed, another property 12, bad topology
files one line and exit 2 through the input layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(main, ["check", *args])


def test_consume_preset_holds_for_every_supply():
    """Issue 28's done-when, AMQ-PRESETS, Z3-AMQ-EVERY-SUPPLY: rabbitmq4-consume (its
    client may drain once) holds for every supply, exit 0."""
    result = run("rabbitmq4-consume")
    assert result.exit_code == 0, result.output
    assert "holds for every supply (proved: an inductive invariant" in result.output


def test_publish_preset_holds_for_every_supply(tmp_path, monkeypatch):
    """Issue 28's done-when, Z3-AMQ-EVERY-SUPPLY: rabbitmq4-publish at RabbitMQ 4's
    numbers holds for every supply (PROP-AMQ-BOUNDS with its true bound 2 · 170 − 1,
    AMQ-RMQ-LINK-CREDIT), exit 0, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    result = run("rabbitmq4-publish")
    assert result.exit_code == 0, result.output
    assert "holds for every supply (proved: an inductive invariant" in result.output
    assert "max_link_credit=170" in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_supply_asked_is_established_by_a_complete_search():
    """SCOPE-EXIT: --graph-supply / --publishes ask for one supply; complete -> 0."""
    assert run("rabbitmq4-publish", "--graph-supply").exit_code == 0
    result = run("rabbitmq4-publish", "--publishes", "2")
    assert result.exit_code == 0 and "holds for supply 2" in result.output


def test_a_budget_that_finds_nothing_exits_4_even_for_one_supply():
    """SCOPE-EXIT: a search cut by --max-states is not a proof."""
    result = run("rabbitmq4-consume", "--graph-supply", "--max-states", "50")
    assert result.exit_code == 4 and "not established" in result.output


def test_a_stall_exits_10_with_the_shortest_steps():
    """PROP-AMQ-NO-STALL: the ring stall shape, its 7 steps printed with both ends'
    delivery-count and credit and the session windows."""
    result = run("ring-one-held")
    assert result.exit_code == 10
    lines = result.output.splitlines()
    assert "PROP-AMQ-NO-STALL violated after 7 steps (shortest) with supply 4" in lines
    steps = [line for line in lines if line[:5].strip().rstrip(".").isdigit()]
    assert [s.split()[1] for s in steps] == [
        "(start)",
        "take_back",
        "send",
        "send",
        "take_fwd",
        "take_fwd",
        "take_back",
        "settle",
    ]
    assert "window=0 unsettled=1" in steps[-1]


def test_another_property_exits_12():
    """PROP-AMQ-PUBLISHER-GO on the limit-removed shape: exit 12 (SCOPE-EXIT)."""
    result = run("limit-removed-no-go")
    assert result.exit_code == 12
    assert "PROP-AMQ-PUBLISHER-GO violated after 9 steps" in result.output


def test_a_file_is_recognised_by_its_family(tmp_path):
    """AMQ-TOPOLOGY: any JSON file with "family": "amqp" is checked as one."""
    doc = json.loads((ROOT / "spec/graphs/amqp/ring-one-held.json").read_text())
    doc["nodes"][3]["holds"] = 0
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc))
    result = run(str(path), "--graph-supply")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (
            lambda d: d["nodes"][2].update(window={"policy": "sliding"}),
            "unknown window policy 'sliding'",
        ),
        (lambda d: d["nodes"].append({"id": "x", "kind": "queue"}), "one chain"),
        (lambda d: d["nodes"][0].update(publishes="many"), "publishes: expected an integer"),
    ],
)
def test_bad_topology_files_are_one_line_exit_2(tmp_path, mutate, problem):
    """AMQ-TOPOLOGY through the input layer: one line naming the file and the place."""
    doc = json.loads((ROOT / "spec/graphs/amqp/ring-one-held.json").read_text())
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    err = result.output.strip()
    assert err.count("\n") == 0 and str(path) in err and problem in err


def test_net_only_options_are_refused_for_amqp():
    """One line, exit 2: NET options are refused."""
    result = run("rabbitmq4-publish", "--credit", "2,1")
    assert result.exit_code == 2 and "--credit: not an option of the amqp family" in result.output
    assert run("rabbitmq4-publish", "--all-check-blocked").exit_code == 2
