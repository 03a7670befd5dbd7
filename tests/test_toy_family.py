"""A family outside the distribution gets ``check`` through the family interface alone
(FAM-INTERFACE, FAM-REGISTRY, FAM-CHECKING, FAM-CODEC, FAM-OPTIONS): the toy family of
tests/toy_family.py adds no line outside its own files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.family import registry
from tests import toy_family

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def toy_registered():
    registry.register(toy_family.FAMILY)
    yield
    registry.unregister("toy")


def check(tmp_path: Path, *args: str):
    return CliRunner().invoke(main, ["check", *args, "--trace-out", str(tmp_path / "t.itf.json")])


def test_a_toy_that_returns_credit_holds_for_its_supply_and_says_so(tmp_path):
    """SCOPE-EXIT: every state of the supply asked explored, exit 0; for every supply the
    toy has no proof, so exit 4, not 0."""
    r = check(tmp_path, "toy-credit", "--publishes", "4")
    assert r.exit_code == 0, r.output
    assert "holds for supply 4" in r.output and "every state explored" in r.output
    r = check(tmp_path, "toy-credit")
    assert r.exit_code == 4, r.output
    assert "for every supply: not established" in r.output


def test_a_toy_that_never_grants_stalls_with_its_shortest_witness_written(tmp_path):
    r = check(tmp_path, "toy-never-grants", "--json")
    assert r.exit_code == 10, r.output
    doc = json.loads(r.output)
    assert doc["family"] == "toy" and doc["violation"]["property"] == "PROP-TOY-NO-STALL"
    # window 2: send, send, then the sender waits forever with 3 messages left
    assert doc["violation"]["length"] == 2 and doc["violation"]["shortest"]
    trace = json.loads(Path(doc["trace"]).read_text())
    assert trace["#meta"]["creditflow"]["property"] == "PROP-TOY-NO-STALL"
    assert trace["#meta"]["creditflow"]["length"] == 2 and len(trace["states"]) >= 3
    text = check(tmp_path, "toy-never-grants").output
    assert "PROP-TOY-NO-STALL violated after 2 steps (shortest)" in text
    assert "   0. (start)" in text and "send" in text


def test_an_option_the_toy_does_not_take_is_refused(tmp_path):
    r = check(tmp_path, "toy-credit", "--credit", "2,1")
    assert r.exit_code == 2
    assert "not an option of the toy family" in r.output


def test_the_toy_family_imports_nothing_but_the_interface_and_the_input_layer():
    """The toy adds no engine code: it imports only the family interface and the input
    layer's error type, and no file outside tests/ names it."""
    text = (ROOT / "tests" / "toy_family.py").read_text()
    imports = {line.split()[1] for line in text.splitlines() if line.startswith("from creditflow")}
    assert imports == {
        "creditflow.conformance.family.interface",
        "creditflow.conformance.inputs.reading",
    }
    named = subprocess.run(
        ["git", "grep", "-l", "toy_family", "--", ":!tests", ":!docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert named.stdout == ""


def toy_trace(tmp_path: Path) -> Path:
    r = check(tmp_path, "toy-never-grants", "--publishes", "4")
    assert r.exit_code == 10, r.output
    return tmp_path / "t.itf.json"


def test_show_replays_a_toy_trace_through_the_engine_and_prints_the_toys_own_words(tmp_path):
    """TRACE-REPLAY, FAM-CODEC: ``show`` rebuilds the toy (with the supply it was checked
    with) from the trace's #meta and prints the codec's state lines and step words."""
    path = toy_trace(tmp_path)
    r = CliRunner().invoke(main, ["show", str(path)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    # the stall after step 2; the trace goes on until nothing can move (the reads)
    assert lines[0].endswith("toy toy-never-grants, 4 steps, PROP-TOY-NO-STALL after 2")
    assert lines[1].split() == ["0.", "(start)", "left=4", "credit=2", "wire=0", "read=0"]
    assert lines[-1].split()[-4:] == ["left=2", "credit=0", "wire=0", "read=2"]
    doc = json.loads(CliRunner().invoke(main, ["show", str(path), "--json"]).output)
    assert doc["family"] == "toy" and doc["property"] == "PROP-TOY-NO-STALL"
    assert doc["length"] == 2
    assert [s["action"] for s in doc["steps"]] == ["init", "send", "send", "read", "read"]
    # TRACE-RUNS: two equal steps are not gathered (a run needs more), each its own run
    assert [(r["first"], r["steps"], r["count"]) for r in doc["runs"]] == [
        (1, ["send"], 1),
        (2, ["send"], 1),
        (3, ["read"], 1),
        (4, ["read"], 1),
    ]


def test_a_toy_trace_the_model_does_not_reproduce_is_refused_naming_the_state(tmp_path):
    """TRACE-REPLAY: a tampered state is not a successor; one line, exit 2."""
    path = toy_trace(tmp_path)
    doc = json.loads(path.read_text())
    doc["states"][2]["wire"] = {"#bigint": "3"} if isinstance(doc["states"][2]["wire"], dict) else 3
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["show", str(path)])
    assert r.exit_code == 2, r.output
    assert "state 2 is not a successor of state 1 (TRACE-REPLAY)" in r.output


def test_the_toys_trace_replays_through_the_model_with_no_engine_change(tmp_path):
    """The engine's model-trace replay (traces/models.py) finds the toy by its codec's
    model and walks the same run the explorer found."""
    from creditflow.conformance.inputs.itf import read_document
    from creditflow.conformance.traces.models import replay_model_document

    replayed = replay_model_document(read_document(toy_trace(tmp_path)), "t")
    assert replayed is not None and replayed.family.name == "toy"
    assert replayed.instance == toy_family.PRESETS["toy-never-grants"]
    sends, reads = [toy_family.SEND] * 2, [toy_family.READ] * 2
    assert [a for a, _ in replayed.run] == [None, *sends, *reads]
    assert replayed.run[2][1] == toy_family.State(2, 0, 2, 0) and replayed.length == 2
