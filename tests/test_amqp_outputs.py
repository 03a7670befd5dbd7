"""What ``creditflow check`` writes and prints for AMQP topologies: ``--json``
(AMQ-CHECK-JSON, validated by spec/schemas/check.json), the credits and windows in
effect (AMQ-SETTINGS), ``--config advanced.config`` (AMQ-CONFIG), the counterexample
as an ITF trace that ``show`` replays (AMQ-TRACE), its picture (AMQ-PICTURE), and the
AMQP presets in ``creditflow presets`` (AMQ-PRESETS)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.rabbitmq_config import ConfigFileError, parse_advanced_config
from tests.json_schemas import validate

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("args", "code", "violated"),
    [
        (("rabbitmq4-publish", "--graph-supply"), 0, None),
        (("rabbitmq4-consume",), 0, None),  # Z3-AMQ-EVERY-SUPPLY, its drain included
        (("rabbitmq4-consume", "--graph-supply", "--max-states", "50"), 4, None),
        (("ring-one-held",), 10, "PROP-AMQ-NO-STALL"),
        (("limit-removed-no-go",), 12, "PROP-AMQ-PUBLISHER-GO"),
    ],
)
def test_check_json_for_every_verdict(tmp_path, monkeypatch, args, code, violated):
    """AMQ-CHECK-JSON / SCOPE-JSON: one document per verdict exit code, valid against
    the amqp branch of check.json, with its scope, claim and properties."""
    monkeypatch.chdir(tmp_path)
    result = cli("check", *args, "--json")
    assert result.exit_code == code, result.output
    validate("check", result.stdout)
    doc = json.loads(result.stdout)
    assert doc["family"] == "amqp" and doc["exit_code"] == code
    assert doc["scope"]["supply"] == ("every" if "--graph-supply" not in args else 4)
    if violated is None:
        assert doc["violation"] is None and "trace" not in doc
        if code == 0:
            assert all(v is True for v in doc["properties"].values())
        else:  # cut by its budget: nothing violated, not everything established
            assert not any(v is False for v in doc["properties"].values())
            assert not all(v is True for v in doc["properties"].values())
    else:
        assert doc["violation"]["property"] == violated
        assert doc["properties"][violated] is False
        assert len(doc["violation"]["steps"]) == doc["violation"]["length"]
        assert Path(doc["trace"]).is_file() and Path(doc["dot"]).is_file()


def test_check_json_schema_refuses_an_amqp_document_without_settings():
    """The amqp branch is checked, not anything goes: a document without ``settings``
    is refused."""
    import jsonschema

    result = cli("check", "rabbitmq4-consume", "--json")
    doc = json.loads(result.stdout)
    del doc["settings"]
    with pytest.raises(jsonschema.ValidationError):
        validate("check", json.dumps(doc))


def test_settings_in_effect_text_and_json(tmp_path, monkeypatch):
    """AMQ-SETTINGS: every credit and window with where it came from: the preset's file,
    or the reader's default when the attribute is left out."""
    monkeypatch.chdir(tmp_path)  # rabbitmq4-publish writes its PROP-AMQ-BOUNDS witness
    text = cli("check", "rabbitmq4-consume").output
    assert "credits and windows in effect:" in text
    assert "  relay (relay) max_queue_credit=256 [preset]" in text
    assert "  broker-session (session) rabbitmq4.max_incoming_window=400 [preset]" in text
    assert "  client (link) window.window=100 [preset]" in text
    assert "  qq (queue) soft_limit=32 [default]" in text
    doc = json.loads(cli("check", "rabbitmq4-publish", "--json").stdout)
    by_key = {(s["node"], s["key"]): s for s in doc["settings"]}
    assert by_key[("broker-session", "rabbitmq4.max_link_credit")]["value"] == 170
    assert by_key[("broker-session", "rabbitmq4.max_link_credit")]["limits"] == "link"
    assert by_key[("qq", "soft_limit")]["source"] == "preset"


def test_settings_of_a_user_file_say_file(tmp_path):
    """AMQ-SETTINGS: a value in the user's topology file is ``file``."""
    doc = json.loads((ROOT / "spec/graphs/amqp/ring-one-held.json").read_text())
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc))
    out = cli("check", str(path), "--trace-out", str(tmp_path / "t.itf.json")).output
    assert "  receiver-session (session) ring.slots=2 [file]" in out


ADVANCED = """[{rabbit, [{max_incoming_window, 3}, {max_link_credit, 2},
  {max_queue_credit, 1}, {quorum_commands_soft_limit, 1},
  {credit_flow_default_credit, {400, 200}}]},
 {kernel, [{max_link_credit, nonsense}]}]."""


def test_advanced_config_keys_are_read():
    """AMQ-CONFIG: the four rabbit keys, read next to the credit_flow keys; another
    application's keys are ignored."""
    settings = parse_advanced_config(ADVANCED, "advanced.config")
    assert settings.amqp == (
        ("max_incoming_window", 3),
        ("max_link_credit", 2),
        ("max_queue_credit", 1),
        ("quorum_commands_soft_limit", 1),
    )
    assert settings.default_credit is not None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[{rabbit, [{max_link_credit, 0}]}].", "max_link_credit must be a positive integer"),
        ("[{rabbit, [{max_queue_credit, many}]}].", "max_queue_credit must be a positive"),
        (
            "[{rabbit, [{max_incoming_window, 4}, {max_incoming_window, 5}]}].",
            "max_incoming_window is set twice",
        ),
    ],
)
def test_bad_amqp_config_values_are_one_line(text, problem):
    """AMQ-CONFIG: a bad value names the file and line (exit 2 through the CLI)."""
    with pytest.raises(ConfigFileError, match=problem) as info:
        parse_advanced_config(text, "advanced.config")
    assert str(info.value).startswith("advanced.config:1:")


def test_config_changes_the_topology_and_says_so(tmp_path):
    """AMQ-CONFIG + AMQ-SETTINGS: the numbers of an advanced.config are used (the state
    space changes) and printed with their source."""
    config = tmp_path / "advanced.config"
    config.write_text(ADVANCED)
    plain = json.loads(cli("check", "rabbitmq4-publish", "--graph-supply", "--json").stdout)
    result = cli("check", "rabbitmq4-publish", "--graph-supply", "--json", "--config", str(config))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["states"] != plain["states"]
    by_key = {(s["node"], s["key"]): s for s in doc["settings"]}
    window = by_key[("broker-session", "rabbitmq4.max_incoming_window")]
    assert window["value"] == 3 and window["source"] == f"--config {config}"
    assert by_key[("broker-session", "rabbitmq4.max_link_credit")]["value"] == 2
    assert by_key[("qq", "soft_limit")]["value"] == 1
    consume = cli("check", "rabbitmq4-consume", "--graph-supply", "--config", str(config))
    assert f"  relay (relay) max_queue_credit=1 [--config {config}]" in consume.output
    # the client's own session keeps its numbers: it is not RabbitMQ's policy
    assert "  client-session (session) fixed.window=2048 [preset]" in consume.output


def test_bad_config_file_exits_2(tmp_path):
    config = tmp_path / "advanced.config"
    config.write_text("[{rabbit, [{max_link_credit, 0}]}].")
    result = cli("check", "rabbitmq4-consume", "--config", str(config))
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and str(config) in result.output


def test_trace_written_and_shown(tmp_path, monkeypatch):
    """AMQ-TRACE: the witness written under the output folder before the verdict;
    ``show`` replays it and prints each step with both ends' delivery-count and credit
    and the windows; ``show --json`` is valid against show.json."""
    monkeypatch.chdir(tmp_path)
    check = cli("check", "ring-one-held")
    assert check.exit_code == 10
    trace = Path("counterexamples/ring-one-held.itf.json")
    assert f"trace: {trace}" in check.output
    doc = json.loads(trace.read_text())
    assert doc["#meta"]["creditflow"]["model"] == "amqp"
    assert len(doc["states"]) == 8
    assert doc["states"][-1]["mbt::actionTaken"] == "settle"
    shown = cli("show", str(trace))
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].endswith("7 steps, PROP-AMQ-NO-STALL at the end")
    check_steps = [line for line in check.output.splitlines() if line[:5].strip()[:-1].isdigit()]
    assert lines[1:] == check_steps
    assert "receiver dc=0 credit=3 window=0 unsettled=1" in lines[-1]
    as_json = cli("show", str(trace), "--json")
    validate("show", as_json.stdout)
    assert [s["action"] for s in json.loads(as_json.stdout)["steps"]][-1] == "settle"


def test_a_trace_the_model_does_not_replay_is_refused(tmp_path, monkeypatch):
    """TRACE-REPLAY for AMQ-TRACE: a tampered credit is one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    cli("check", "ring-one-held")
    trace = Path("counterexamples/ring-one-held.itf.json")
    doc = json.loads(trace.read_text())
    doc["states"][3]["sender"]["link"]["credit"] = {"#bigint": "5"}
    trace.write_text(json.dumps(doc))
    result = cli("show", str(trace))
    assert result.exit_code == 2
    assert "states[3] (send) is not a step of the model" in result.output


@pytest.mark.parametrize(
    ("preset", "link", "session"),
    [
        (
            "ring-one-held",
            "link: sender dc=0 credit=3\\nreceiver dc=0 credit=3",
            '"receiver-session" [label="receiver-session\\nincoming-window=0',
        ),
        (
            "limit-removed-no-go",
            "link: sender dc=",
            '"broker-session" [label="broker-session\\nincoming-window=',
        ),
    ],
)
def test_picture_of_the_stalled_state(tmp_path, monkeypatch, preset, link, session):
    """AMQ-PICTURE: the link drawn between its ends with both delivery-counts and
    credits, each session with its windows, a window of 0 in red."""
    monkeypatch.chdir(tmp_path)
    result = cli("check", preset)
    assert result.exit_code in (10, 12)
    dot = Path(f"counterexamples/{preset}.dot").read_text()
    assert link in dot and "style=dashed" in dot
    assert session in dot and "remote-incoming-window=" in dot
    if preset == "ring-one-held":
        line = next(x for x in dot.splitlines() if x.startswith('  "receiver-session" ['))
        assert "color=red" in line


def test_presets_lists_the_amqp_presets():
    """AMQ-PRESETS: ``creditflow presets`` lists them under the family's heading, each with
    its own description (FAM-PRESETS)."""
    out = cli("presets").output
    assert "amqp presets: AMQP 1.0 flow control" in out
    for name, words in [("rabbitmq4-publish", "client sender"), ("rabbitmq4-consume", "relay")]:
        line = next(x for x in out.splitlines() if x.startswith(f"  {name} "))
        assert words in line


@pytest.mark.parametrize("name", ["rabbitmq4-publish", "rabbitmq4-consume", "credit-as-delta"])
def test_every_shape_round_trips_through_a_trace_and_is_drawn(name):
    """AMQ-TRACE on every shape (frames on the wires, the relay, the queue): a run
    written as ITF, read back as JSON, replays to the same states; AMQ-PICTURE draws its
    last state with the link's two ends and the sessions' windows."""
    from creditflow.conformance.families.amqp.checking import AmqpViolation
    from creditflow.conformance.families.amqp.codec import (
        amqp_dot,
        amqp_trace,
        replay_amqp_document,
    )
    from creditflow.conformance.inputs.amqp_topologies import read_amqp_preset
    from creditflow.model.amqp import system

    inp = read_amqp_preset(name)
    state = system.initial_state(inp.topology)
    steps, states = [], [state]
    for _ in range(12):
        succ = system.successors(inp.topology, state)
        if not succ:
            break
        action, state = succ[-1]
        steps.append(action)
        states.append(state)
    run = AmqpViolation("PROP-AMQ-NO-STALL", tuple(steps), tuple(states))
    doc = json.loads(json.dumps(amqp_trace(inp, run, name)))
    replayed = replay_amqp_document(doc)
    assert replayed.states == tuple(states) and replayed.steps == tuple(steps)
    dot = amqp_dot(inp.topology, inp.document, states[-1], name)
    assert "link: " in dot and "\\nreceiver dc=" in dot and "incoming-window=" in dot
    for node in inp.document["nodes"]:
        assert f'  "{node["id"]}" [label=' in dot


def test_unwritable_trace_keeps_the_verdict_and_the_document(tmp_path):
    """OUT-FAILURE / OUT-EXIT for AMQ-TRACE: a trace that cannot be written is in the
    --json document (``write_errors``, ``unsaved_traces``), the verdict's code stays 10."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = cli("check", "ring-one-held", "--json", "--trace-out", str(blocker / "x.itf.json"))
    assert result.exit_code == 10
    validate("check", result.stdout)
    doc = json.loads(result.stdout)
    assert doc["trace"] is None and len(doc["write_errors"]) == 2
    unsaved = doc["unsaved_traces"][str(blocker / "x.itf.json")]
    assert unsaved["#meta"]["creditflow"]["model"] == "amqp"


def test_trace_out_and_dot_out_name_the_files(tmp_path):
    """OUT-NAME: --trace-out and --dot-out are taken as given for AMQP too."""
    trace, dot = tmp_path / "w.itf.json", tmp_path / "p.dot"
    result = cli("check", "credit-as-delta", "--trace-out", str(trace), "--dot-out", str(dot))
    assert result.exit_code == 12
    assert trace.is_file() and dot.is_file()
    assert f"trace: {trace}" in result.output
