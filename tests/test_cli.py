"""The `creditflow` command line: exit codes, JSON, files written before reporting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.itf import read_document
from tests.cli_runs import run


def test_check_deadlock_json_and_files(tmp_path):
    """EXP-SHORTEST, EXP-PICTURE, TRACE-ITF: exit 10, JSON fields, the trace and the
    picture written where asked."""
    trace = tmp_path / "t.itf.json"
    result = run(
        "check",
        "cycle2",
        "--credit",
        "1,1",
        "--all-check-blocked",
        "--full-search",  # every property decided (EXP-ONLINE would stop at the deadlock)
        "--json",
        "--trace-out",
        str(trace),
        "--dot-out",
        str(tmp_path / "p.dot"),
    )
    assert result.exit_code == 10
    report = json.loads(result.stdout)
    assert report["deadlock"] is True and report["conservation"] is True
    assert report["shortest_counterexample_length"] == 4
    assert report["shortest_certified"] is True  # EXP-SHORTEST, said
    assert isinstance(report["states"], int) and isinstance(report["seconds"], float)
    assert read_document(trace)["#meta"]["creditflow"]["length"] == 4
    dot = (tmp_path / "p.dot").read_text()
    assert "BLOCKED FOREVER" in dot and "penwidth" in dot


def test_check_holds_exit_zero():
    """PROP-NO-DEADLOCK: a safe preset exits 0 with no counterexample."""
    result = run("check", "fanout", "--credit", "3,1", "--publishes", "8", "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["deadlock"] is False and report["shortest_counterexample_length"] is None
    assert all(report["properties"].values())


def test_check_default_trace_location(tmp_path):
    """EXP-PICTURE: without --trace-out the files go to counterexamples/ under the cwd."""
    result = run("check", "stalled-queue", cwd=tmp_path)
    assert result.exit_code == 10
    assert (tmp_path / "counterexamples" / "stalled-queue.itf.json").is_file()
    assert (tmp_path / "counterexamples" / "stalled-queue.dot").is_file()
    assert "blocked forever: channel" in result.stdout


def test_mailbox_bound_violation_exits_12(tmp_path):
    """PROP-MAILBOX-BOUND: another property violated exits 12."""
    result = run(
        "check",
        "stalled-queue",
        "--credit",
        "2,1",
        "--mailbox-bound",
        "1",
        "--json",
        "--no-symmetry",
        cwd=tmp_path,
    )
    report = json.loads(result.stdout)
    assert report["properties"]["PROP-MAILBOX-BOUND"] is False
    assert result.exit_code == 10  # the deadlock decides the exit code
    result = run(
        "check",
        "rabbitmq-publish",
        "--credit",
        "2,1",
        "--mailbox-bound",
        "1",
        "--json",
        cwd=tmp_path,
    )
    assert result.exit_code == 12


def test_incomplete_exit_4(tmp_path):
    """EXP-BUDGET: exit 4 when the budget runs out with nothing found (and no proof is
    tried, EXP-SETTLE)."""
    result = run(
        "check", "fanout", "--publishes", "10", "--max-states", "20", "--json", "--no-prove"
    )
    assert result.exit_code == 4
    assert json.loads(result.stdout)["deadlock"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "nope.json"], "nope.json: no such file"),
        (["check", "fanout", "--credit", "x"], "credit spec must be"),
    ],
)
def test_bad_input_exit_2(args, message):
    """NET-FILE: bad input exits 2 with a one-line message."""
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_bad_graph_file_one_line(tmp_path):
    """NET-FILE: a malformed graph file: one line naming the file, exit 2."""
    bad = tmp_path / "g.json"
    bad.write_text('{"nodes": [{"id": "a"}], "edges": []}')
    result = run("check", str(bad))
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1 and str(bad) in lines[0] and "no source node" in lines[0]


def test_console_script_help_and_demo(tmp_path):
    """The installed console script runs; `demo` writes the presets' counterexamples."""
    exe = Path(sys.executable).with_name("creditflow")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    assert "check" in out and "Exit codes" in out
    done = subprocess.run(
        [exe, "demo", "--out", str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert "cycle2" in done.stdout
    assert (tmp_path / "cycle2.itf.json").is_file() and (tmp_path / "cycle2.dot").is_file()
    # every family `check` answers (issue 38 point 5): AMQP and HTTP/2 presets too, each
    # stall written with its picture, each safe preset's verdict in the table
    for family, stalled, safe in [
        ("amqp", "ring-one-held", "rabbitmq4-publish"),
        ("http2", "reset-never-credited", "upload"),
    ]:
        assert f"the {family} presets" in done.stdout
        assert (tmp_path / family / f"{stalled}.itf.json").is_file()
        assert (tmp_path / family / f"{stalled}.dot").is_file()
        assert safe in done.stdout
    assert "NOT CHECKED" not in done.stdout


def test_demo_of_one_family_prints_only_its_table(tmp_path):
    """``demo --family NAME``: only that family's presets; an unknown name is one line,
    exit 2, listing the families ``demo`` shows."""
    result = CliRunner().invoke(main, ["demo", "--family", "credit_flow", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "the credit_flow presets" in result.stdout and "amqp presets" not in result.stdout
    assert (tmp_path / "cycle2.itf.json").is_file() and not (tmp_path / "amqp").exists()
    result = CliRunner().invoke(main, ["demo", "--family", "nope"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "nope" in line and "credit_flow" in line and "http2" in line
