"""Broken output streams and text that cannot be shown raw (OUT-STREAM, OUT-TEXT), on the
real program: every command keeps its verdict's exit code when stdout or stderr is
full, a pipe whose reader has gone, or closed; never 1, never a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from creditflow.conformance import exit_codes
from tests.hardening.helpers import CF, HOSTILE, ROOT, run

#: (arguments, the verdict's exit code): one command of every family
COMMANDS = {
    "check": (["check", "cycle2", "--no-prove"], exit_codes.DEADLOCK),
    "check-json": (["check", "cycle2", "--json", "--no-prove"], exit_codes.DEADLOCK),
    "presets": (["presets"], exit_codes.OK),
    "paging": (["paging", "small-embedded"], exit_codes.OK),
    "alarms": (["alarms", "run", "two-sources"], exit_codes.OK),
    "accounts": (["accounts", "check", "seed-small"], exit_codes.OK),
    "conform": (
        [
            "conform",
            "--adapter",
            "reference",
            "--seed",
            "1",
            "--max-examples",
            "2",
            "--phase",
            "process-ops",
            "--out",
            "out",
        ],
        exit_codes.OK,
    ),
}
MODES = ("full", "gone-reader", "stdout-closed", "stderr-closed")
#: the CLI's own escapes are fine; a raw ESC, BEL or CR from a name is not
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _broken(args: list[str], mode: str, cwd: Path) -> tuple[int, str]:
    """Run the program with one stream broken; its exit code and what reached stderr
    (empty when stderr is the broken one)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if mode == "full":
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [*CF, *args], cwd=cwd, stdout=full, stderr=subprocess.PIPE, timeout=120, env=env
            )
        return done.returncode, done.stderr.decode()
    if mode == "gone-reader":
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader has gone before the program writes (| head -c 0)
        try:
            done = subprocess.run(
                [*CF, *args], cwd=cwd, stdout=write_end, stderr=subprocess.PIPE, timeout=120
            )
        finally:
            os.close(write_end)
        return done.returncode, done.stderr.decode()
    closed = "1" if mode == "stdout-closed" else "2"
    shell = f'exec "$@" {closed}>&-'
    done = subprocess.run(
        ["sh", "-c", shell, "sh", *CF, *args],
        cwd=cwd,
        stdout=subprocess.PIPE if closed == "2" else subprocess.DEVNULL,
        stderr=subprocess.PIPE if closed == "1" else subprocess.DEVNULL,
        timeout=120,
    )
    return done.returncode, (done.stderr or b"").decode()


#: every command in every mode; ``check --json`` (the same path as ``check``) on /dev/full
CASES = [(c, m) for c in sorted(COMMANDS) for m in MODES if c != "check-json" or m == "full"]


_baselines: dict[str, subprocess.CompletedProcess] = {}


def _baseline(command: str, folder: Path) -> subprocess.CompletedProcess:
    """The command run with working streams (once per command and test process)."""
    if command not in _baselines:
        _baselines[command] = run(*COMMANDS[command][0], cwd=folder, timeout=120)
    return _baselines[command]


@pytest.mark.parametrize(("command", "mode"), CASES)
def test_the_verdict_survives_a_broken_stream(command, mode, tmp_path):
    """OUT-STREAM: the exit code is the verdict's own, or 5 when the verdict was 0 and
    something was lost; the one line names the stream; no traceback."""
    args, verdict = COMMANDS[command]
    baseline = _baseline(command, tmp_path)
    assert baseline.returncode == verdict, baseline.stderr
    lost = baseline.stderr if mode == "stderr-closed" else baseline.stdout
    expected = exit_codes.with_write_failure(verdict) if lost else verdict
    code, stderr = _broken(args, mode, tmp_path)
    assert code == expected, (code, stderr)
    assert code != exit_codes.DIVERGENCE
    assert "Traceback" not in stderr, stderr
    if mode != "stderr-closed" and lost:
        reason = stderr.strip().splitlines()[-1]
        assert reason.startswith("creditflow: error: output could not be written (stdout:")


def _hostile_graph(folder: Path) -> Path:
    doc = json.loads((ROOT / "spec" / "graphs" / "cycle2.json").read_text())
    evil = "B\ud800\x1b[31mX\nY\x07[bold]"
    doc["graph"]["name"] = "c\ud800\x1b]0;t\x07"
    doc["nodes"][1]["id"] = evil
    for edge in doc["edges"]:
        for end in ("source", "target"):
            if edge[end] == "B":
                edge[end] = evil
    path = folder / "hostile.json"
    path.write_text(json.dumps(doc))  # ensure_ascii: the surrogate is a valid \ud800
    return path


def test_names_that_cannot_be_encoded_keep_the_verdict(tmp_path):
    """OUT-TEXT: lone surrogates and escapes in node and graph names: the deadlock is
    still exit 10, its trace and picture are written, the names are shown escaped on
    one line, and ``--json`` keeps them exactly."""
    graph = _hostile_graph(tmp_path)
    shown = run("check", str(graph), "--no-prove", cwd=tmp_path)
    assert shown.returncode == exit_codes.DEADLOCK, shown.stderr
    assert "Traceback" not in shown.stderr
    assert not RAW_CONTROL.search(shown.stdout), shown.stdout
    line = next(x for x in shown.stdout.splitlines() if "blocked forever" in x)
    assert "B\\ud800\\x1b[31mX\\nY\\x07[bold]" in line
    assert len(list((tmp_path / "counterexamples").glob("*.itf.json"))) == 1
    assert len(list((tmp_path / "counterexamples").glob("*.dot"))) == 1
    as_json = run("check", str(graph), "--no-prove", "--json", cwd=tmp_path)
    assert as_json.returncode == exit_codes.DEADLOCK, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["blocked_forever"] == ["B\ud800\x1b[31mX\nY\x07[bold]"]


def test_a_timeline_connection_name_is_shown_escaped(tmp_path):
    """OUT-TEXT: a connection name with escapes and a line break is one escaped cell."""
    doc = json.loads((ROOT / "spec" / "alarms" / "two-sources.json").read_text())
    evil = "pub\x1b[2J\nlisher\ud800"
    doc["connections"][0]["name"] = evil
    for step in doc["steps"]:
        if step.get("connection") == "publisher":
            step["connection"] = evil
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps(doc))
    done = run("alarms", "run", str(path), cwd=tmp_path)
    assert done.returncode == exit_codes.OK, done.stderr
    assert not RAW_CONTROL.search(done.stdout), done.stdout
    assert "pub\\x1b[2J\\nlisher\\ud800" in done.stdout


def test_an_adapter_hello_name_is_shown_escaped(tmp_path):
    """OUT-TEXT: an adapter's ``hello`` name and implementation fields, full of terminal
    escapes, a line break and a lone surrogate, are printed escaped; the run is
    conformant (exit 0)."""
    done = run(
        "conform",
        "--adapter-cmd",
        f"{sys.executable} {HOSTILE} hostile-name",
        "--seed",
        "1",
        "--max-examples",
        "2",
        "--phase",
        "process-ops",
        "--out",
        "out",
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == exit_codes.OK, done.stderr
    assert not RAW_CONTROL.search(done.stdout), done.stdout
    assert "evil\\x1b[2J\\x1b]0;owned\\x07\\nsecond line\\ud800" in done.stdout


@pytest.mark.parametrize("command", ["check", "prove"])
def test_a_surrogate_name_reaches_z3_escaped(command, tmp_path):
    """OUT-TEXT: with Z3 in the loop (``check`` proves first, ``prove``), a lone
    surrogate in a node id becomes an escaped symbol name; the deadlock is exit 10."""
    graph = _hostile_graph(tmp_path)
    done = run(command, str(graph), cwd=tmp_path, timeout=180)
    assert done.returncode == exit_codes.DEADLOCK, done.stderr
    assert "Traceback" not in done.stderr
    assert not RAW_CONTROL.search(done.stdout), done.stdout
