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
