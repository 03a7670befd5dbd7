"""`creditflow synth` on AMQP topologies (AMQ-SYNTH, AMQ-SYNTH-JSON; issue 28 point 4):
the smallest value of one receiving-end setting with nothing found, what was minimised,
and what the answer claims (the supply explored, never every supply)."""

from __future__ import annotations

import json
from dataclasses import replace

from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.checking import check_amqp
from creditflow.conformance.families.amqp.codec import replay_amqp_document
from creditflow.conformance.families.amqp.synthesis import SynthSetting, target, with_value
from creditflow.conformance.inputs.amqp_topologies import read_amqp_preset, topology_from_document
from creditflow.conformance.inputs.itf import read_document
from tests.json_schemas import validate


def _check(name: str, setting: SynthSetting, value: int, supply: int):
    inp = read_amqp_preset(name)
    at = target(inp.document, inp.topology.shape, setting)
    t = topology_from_document(with_value(inp.document, at, value), name)
    return check_amqp(replace(t, supply=supply), None, False)


def test_the_smallest_ring_for_one_held_delivery(tmp_path, monkeypatch):
    """AMQ-SYNTH: with one delivery held and a supply of 4, a ring of 4 slots is the
    smallest with nothing found; 1..3 each have a witness, and the one for 3 is written
    as a trace that replays; the answer is for the supply asked, exit 0."""
    monkeypatch.chdir(tmp_path)
    args = ["synth", "ring-one-held", "--minimise", "session_window", "--publishes", "4"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "receiver-session: ring.slots=4" in result.output
    assert "synthesised: receiver-session window policy ring.slots" in result.output
    assert "for supply 4 (every state explored): 4" in result.output
    for value in (1, 2, 3):
        assert _check("ring-one-held", "session_window", value, 4).search.violation is not None
    holds = _check("ring-one-held", "session_window", 4, 4)
    assert holds.search.complete and holds.search.violation is None
    trace = tmp_path / "counterexamples" / "ring-one-held.synth.itf.json"
    replayed = replay_amqp_document(read_document(trace))
    assert replayed.prop == "PROP-AMQ-NO-STALL"
    assert replayed.topology.receiver.window == replace(
        read_amqp_preset("ring-one-held").topology.receiver.window, slots=3
    )


def test_without_a_supply_the_answer_is_not_for_every_supply():
    """AMQ-SYNTH, SCOPE-EXIT: asked for every supply, the bounded answer exits 4 and says
    every supply is not established."""
    result = CliRunner().invoke(main, ["synth", "ring-one-held", "--minimise", "session_window"])
    assert result.exit_code == 4
    assert "for every supply: not established" in result.output


def test_no_credit_window_frees_a_two_slot_ring():
    """AMQ-SYNTH: a ring of 2 slots with one delivery held stalls whatever the credit
    window: no value in range, exit 10."""
    args = ["synth", "ring-one-held", "--publishes", "4", "--max-credit", "5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 10
    assert "no value of receiver credit policy window.window in 1..5" in result.output


def test_synth_json_validates(tmp_path, monkeypatch):
    """AMQ-SYNTH-JSON, OUT-JSON-SCHEMA: one document, the amqp branch of synth.json."""
    monkeypatch.chdir(tmp_path)
    args = ["synth", "ring-one-held", "--minimise", "session_window", "--publishes", "4"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0
    validate("synth", result.stdout)
    doc = json.loads(result.stdout)
    assert (doc["value"], doc["minimised"]["key"], doc["scope"]["supply"]) == (4, "slots", 4)
    assert [t["violation"] for t in doc["tried"]] == ["PROP-AMQ-NO-STALL"] * 3 + [None]
    assert doc["beyond"]["value"] == 3 and doc["beyond"]["trace"]


def test_a_setting_the_topology_lacks_is_one_line_exit_2():
    """AMQ-SYNTH: a renew threshold needs a credit window policy; --minimise is for AMQP."""
    result = CliRunner().invoke(
        main, ["synth", "rabbitmq4-publish", "--minimise", "renew_threshold"]
    )
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "needs a credit policy 'window'" in lines[0]
    net = CliRunner().invoke(main, ["synth", "fanout", "--minimise", "session_window"])
    assert net.exit_code == 2 and "--minimise is for AMQP topologies" in net.output
