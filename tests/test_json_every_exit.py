"""OUT-JSON-SCHEMA, OUT-JSON-TIMEOUT: every command with ``--json`` prints its document
with every verdict exit code it can end with, timeouts and budgets included.

The commands are enumerated from the click app (:func:`json_commands`), so a command that
gains ``--json`` fails :func:`test_every_json_command_is_walked` until its verdicts are
listed here (or, for one whose verdicts need a broker or Spark, the suite that runs it is
named in :data:`ELSEWHERE`).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.runtime.signals import OutOfTime
from creditflow.conformance.symbolic import prove as prove_engine
from tests.json_schemas import documents, schema_name, validate
from tests.observe_traces import generate
from tests.test_json_schemas import CORPUS, MUTANT, json_commands

#: an accounts adapter that diverges (tests/test_accounts_adapter.py's mutant)
ACCOUNTS_MUTANT = shlex.join(
    [sys.executable, "-m", "creditflow.adapters.reference.accounts", "--mutant", "strict-check"]
)


#: (schema, exit code, what it shows) -> the command line (without --json)
RUNS: dict[tuple[str, int, str], list[str]] = {
    ("check", 0, "settled by Z3"): ["check", "fanout", "--max-states", "100"],
    ("check", 4, "--max-states budget"): ["check", "cycle2", "--max-states", "3", "--no-prove"],
    ("check", 4, "--prove-timeout"): [
        *("check", "fanout", "--max-states", "3", "--prove-timeout", "0.01"),
    ],
    ("check", 10, "deadlock"): ["check", "stalled-queue", "--credit", "2,1", "--publishes", "10"],
    ("check", 12, "mailbox bound"): [
        *("check", "stalled-queue", "--mailbox-bound", "1", "--credit", "400,200"),
        *("--publishes", "5"),
    ],
    ("prove", 0, "proved"): ["prove", "fanout"],
    ("prove", 4, "--timeout"): ["prove", "stalled-queue", "--timeout", "0.05"],
    ("prove", 4, "--timeout symbolic"): ["prove", "fanout", "--symbolic", "--timeout", "0.05"],
    ("prove", 10, "deadlock"): ["prove", "stalled-queue"],
    ("prove", 12, "mailbox bound"): [
        *("prove", "stalled-queue", "--mailbox-bound", "1", "--credit", "400,200"),
        *("--publishes", "5"),
    ],
    ("synth", 0, "found"): [
        *("synth", "stalled-queue", "--goal", "mailbox", "--bound", "800"),
        *("--credit", "400,200"),
    ],
    ("synth", 4, "--timeout"): ["synth", "stalled-queue", "--timeout", "0.05"],
    ("synth", 10, "none deadlock-free"): [
        "synth",
        "cycle2",
        "--max-credit",
        "1",
        "--credit",
        "1,1",
    ],
    ("synth", 12, "none within the bound"): [
        *("synth", "stalled-queue", "--goal", "mailbox", "--bound", "0"),
        *("--credit", "400,200"),
    ],
    ("conform", 0, "conformant"): [
        *("conform", "--adapter", "reference", "--max-examples", "3", "--steps", "10"),
    ],
    ("conform", 1, "divergence"): ["conform", "--adapter", MUTANT, "--seed", "3"],
    ("replay", 0, "conformant"): ["replay", str(CORPUS), "--adapter", "reference"],
    ("replay", 1, "divergence"): ["replay", str(CORPUS), "--adapter", MUTANT],
    ("show", 0, "network trace"): ["show", str(CORPUS / "stalled-queue-network-2-1.itf.json")],
    ("paging", 0, "model run"): ["paging", "small-embedded"],
    ("accounts-check", 0, "holds"): ["accounts", "check", "seed"],
    ("accounts-check", 4, "--max-states budget"): [
        *("accounts", "check", "seed", "--max-states", "10"),
    ],
    ("accounts-check", 10, "blocked forever"): ["accounts", "check", "slow-consumer"],
    ("accounts-check", 12, "naive bound"): ["accounts", "check", "seed", "--naive-bound"],
    ("accounts-conform", 1, "divergence"): [
        *("accounts", "conform", "--adapter-cmd", ACCOUNTS_MUTANT, "--runs", "20"),
    ],
    ("paging", 12, "violation (model broken on purpose)"): ["paging", "embed-boundary"],
    ("alarms-run", 12, "violation (model broken on purpose)"): ["alarms", "run", "two-sources"],
    ("accounts-compare", 0, "rows"): ["accounts", "compare"],
    ("accounts-conform", 0, "conformant"): [
        *("accounts", "conform", "--adapter", "reference", "--runs", "3"),
    ],
    ("alarms-check", 0, "holds"): ["alarms", "check"],
    ("alarms-run", 0, "timeline"): ["alarms", "run", "two-sources"],
    ("observe-validate", 0, "valid"): ["observe", "validate", "good.json"],
    ("observe-validate", 1, "divergence"): ["observe", "validate", "bad.json"],
}


def _broken_paging(monkeypatch: pytest.MonkeyPatch) -> None:
    from creditflow.conformance.cli import paging as cli_paging

    monkeypatch.setattr(
        cli_paging, "check", lambda profile, st, reports=(): {"PROP-PG-ORDER": "broken"}
    )


def _broken_alarms(monkeypatch: pytest.MonkeyPatch) -> None:
    from creditflow.model.alarms.properties import AlarmProperties

    monkeypatch.setattr(AlarmProperties, "step_violations", lambda *args: ("AL1",))


#: verdicts no shipped input reaches (the models hold their properties): a model broken
#: on purpose, as the commands' own tests do
BROKEN = {
    ("paging", 12, "violation (model broken on purpose)"): _broken_paging,
    ("alarms-run", 12, "violation (model broken on purpose)"): _broken_alarms,
}

#: commands whose verdicts need what this suite does not start, and the suite that runs
#: them with --json (its documents are validated by tests/conftest.py there)
ELSEWHERE = {
    "alarms-broker": "a RabbitMQ broker: tests/broker/test_alarms_broker.py",
    "observe-snapshot": "a RabbitMQ broker: tests/broker/test_observe_broker.py",
    "sweep": "Spark: tests/spark/",
    "replay-corpus": "Spark: tests/spark/",
    "report": "a sweep folder written by Spark: tests/spark/",
}


def test_every_json_command_is_walked() -> None:
    """A new command with --json is not forgotten: it is walked here or named above."""
    walked = {name for name, _, _ in RUNS}
    assert json_commands(main) == walked | set(ELSEWHERE)
    assert not walked & set(ELSEWHERE)
    for (name, _, _), args in RUNS.items():
        assert schema_name([*args, "--json"]) == name


def _traces(folder: Path) -> None:
    doc = generate(300, seed=9)
    (folder / "good.json").write_text(json.dumps(doc))
    events = doc["events"]
    k = next(i for i, e in enumerate(events) if e[3] == "grant" and i > 20)
    del events[k]
    (folder / "bad.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("case", sorted(RUNS), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_every_verdict_exit_code_prints_its_document(
    case: tuple[str, int, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OUT-JSON-SCHEMA: stdout is the command's document (one JSON value, or JSON Lines)
    and validates, whatever verdict exit code the command ends with."""
    name, code, _ = case
    monkeypatch.chdir(tmp_path)
    _traces(tmp_path)
    if case in BROKEN:
        BROKEN[case](monkeypatch)
    args = [*RUNS[case], "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert schema_name(args) == name
    docs = documents(name, result.stdout)  # raises unless the whole stdout parses
    assert docs
    validate(name, result.stdout)
    if code == 4 and "--timeout" in args:
        assert docs[0]["exit_code"] == 4
        assert "within --timeout" in result.stderr or name == "synth"


def test_prove_timeout_keeps_what_was_proved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OUT-JSON-TIMEOUT: when --timeout runs out after the invariant has proved the state
    properties, the document still says they are proved; the rest are unknown, exit 4."""
    monkeypatch.chdir(tmp_path)

    def out_of_time(*args: object, **kwargs: object) -> None:
        raise OutOfTime

    monkeypatch.setattr(prove_engine, "prove_termination", out_of_time)
    args = ["prove", "stalled-queue", "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 4, result.stderr
    validate("prove", result.stdout)
    doc = json.loads(result.stdout)
    assert doc["result"] == "unknown" and doc["exit_code"] == 4
    status = {pid: v["status"] for pid, v in doc["properties"].items()}
    assert status["PROP-CONSERVATION"] == "proved"
    assert status["PROP-IN-FLIGHT-BOUND"] == "proved"
    assert status["PROP-NO-DEADLOCK"] == "unknown"
    assert doc["properties"]["PROP-NO-DEADLOCK"]["method"] == "timeout"
    assert "within --timeout" in result.stderr
    text = CliRunner().invoke(main, args[:-1], catch_exceptions=False)
    assert text.exit_code == 4
    assert "PROP-CONSERVATION" in text.stdout and "proved" in text.stdout


def test_prove_timeout_after_every_proof_is_still_not_established(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OUT-JSON-TIMEOUT: --timeout running out after every property was proved (the
    boundary of the symbolic condition not yet found) is exit 4, never 0."""
    monkeypatch.chdir(tmp_path)

    def out_of_time(*args: object, **kwargs: object) -> None:
        raise OutOfTime

    monkeypatch.setattr(prove_engine, "_boundary", out_of_time)
    args = ["prove", "fanout", "--symbolic", "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 4, result.stdout
    doc = json.loads(result.stdout)
    assert doc["result"] == "unknown" and doc["exit_code"] == 4
    assert doc["properties"]["PROP-CONSERVATION"]["status"] == "proved"
    text = CliRunner().invoke(main, args[:-1], catch_exceptions=False)
    assert text.exit_code == 4 and "not established" in text.stdout
