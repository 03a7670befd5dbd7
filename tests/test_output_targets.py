"""OUT-TARGET (spec/reliability.md): a path the user gives for one output file is a folder
when written with a trailing separator (``out/``, created when missing) or when it names an
existing folder, and the output goes inside it under its default name; any other path is
the file itself. One parameter type and one function do it for every command that takes
``--trace-out`` (check, prove, synth, accounts check/conform) and every family."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.cli.common import (
    OUTPUT_FILE,
    FolderPath,
    output_path,
    picture_path,
)

#: (family, command line, the default name of its trace) — small presets, each a violation
CASES = [
    ("credit_flow", ["check", "cycle2", "--credit", "1,1", "--no-progress"], "cycle2.itf.json"),
    ("credit_flow", ["prove", "cycle2", "--credit", "1,1"], "cycle2.prove.itf.json"),
    (
        "amqp",
        ["check", "session-window-never-renewed", "--no-progress"],
        "session-window-never-renewed.itf.json",
    ),
    (
        "amqp",
        ["synth", "ring-one-held", "--minimise", "session_window", "--publishes", "4"],
        "ring-one-held.synth.itf.json",
    ),
    ("http2", ["check", "reset-never-credited", "--no-progress"], "reset-never-credited.itf.json"),
    ("accounts", ["accounts", "check", "slow-consumer"], "slow-consumer.accounts.itf.json"),
]
IDS = [
    f"{family}-{args[0] if args[0] != 'accounts' else 'accounts-check'}"
    for family, args, _ in CASES
]


def run(args: list[str]) -> click.testing.Result:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code not in (exit_codes.USAGE, exit_codes.OUTPUT_FAILED), result.output
    return result


@pytest.mark.parametrize(("family", "args", "name"), CASES, ids=IDS)
def test_a_trailing_slash_is_a_folder_created_when_missing(
    tmp_path, monkeypatch, family, args, name
):
    """``--trace-out out/`` with no ``out``: ``out/NAME`` (was: a file named ``out``)."""
    monkeypatch.chdir(tmp_path)
    result = run([*args, "--trace-out", "out/", "--json"])
    assert (tmp_path / "out").is_dir(), result.output
    assert (tmp_path / "out" / name).is_file(), sorted(p.name for p in (tmp_path / "out").iterdir())
    json.loads((tmp_path / "out" / name).read_text())  # a whole ITF document
    assert not (tmp_path / "counterexamples").exists()
    assert f"out/{name}" in result.stdout  # the JSON names the file written


@pytest.mark.parametrize(("family", "args", "name"), CASES, ids=IDS)
def test_an_existing_folder_holds_the_trace(tmp_path, monkeypatch, family, args, name):
    """``--trace-out out`` where ``out`` is a folder: ``out/NAME`` (was: refused, "it is a
    folder", exit 5 after the verdict)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    result = run([*args, "--trace-out", "out"])
    assert (tmp_path / "out" / name).is_file(), result.output
    assert "could not write" not in result.stderr


@pytest.mark.parametrize(("family", "args", "name"), CASES[:1] + CASES[2:3], ids=IDS[:1] + IDS[2:3])
def test_a_path_without_slash_that_does_not_exist_is_the_file(
    tmp_path, monkeypatch, family, args, name
):
    monkeypatch.chdir(tmp_path)
    result = run([*args, "--trace-out", "sub/out", "--dot-out", "pics/"])
    assert (tmp_path / "sub" / "out").is_file(), result.output
    json.loads((tmp_path / "sub" / "out").read_text())
    # --dot-out DIR/: the picture under the trace's name with .dot, in that folder
    assert (tmp_path / "pics" / "out.dot").is_file()


def test_a_trailing_slash_below_a_regular_file_is_a_write_failure_after_the_verdict(
    tmp_path, monkeypatch
):
    """OUT-FAILURE: the verdict first with its own exit code, then one line naming the file
    that is not a folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").write_text("a file\n")
    args = ["check", "cycle2", "--credit", "1,1", "--no-progress", "--trace-out", "out/", "--json"]
    result = CliRunner().invoke(main, args)
    report = json.loads(result.stdout)
    assert result.exit_code == exit_codes.DEADLOCK == report["exit_code"]
    assert any("out is not a folder" in e for e in report["write_errors"]), report
    assert "could not write out/cycle2.itf.json: out is not a folder" in result.stderr
    assert (tmp_path / "out").read_text() == "a file\n"


def test_the_one_parameter_type_and_resolver(tmp_path):
    """Every suffix a command uses goes through ``output_path`` the same way (paging's
    ``--out`` and accounts conform's divergence included)."""
    folder = OUTPUT_FILE.convert("out/", None, None)
    assert isinstance(folder, FolderPath) and str(folder) == "out"
    assert not isinstance(OUTPUT_FILE.convert("out", None, None), FolderPath)
    default = Path("counterexamples")
    for suffix in (".itf.json", ".accounts-divergence.itf.json", ".json"):
        assert output_path(folder, default, "g/h", suffix).parent == Path("out")
        assert output_path(folder, default, "g", suffix) == Path("out") / f"g{suffix}"
        assert output_path(Path("x.json"), default, "g", suffix) == Path("x.json")
        assert output_path(None, default, "g", suffix) == default / f"g{suffix}"
        assert output_path(tmp_path, default, "g", suffix) == tmp_path / f"g{suffix}"
    trace = Path("out/g.itf.json")
    assert picture_path(None, trace) == Path("out/g.dot")
    assert picture_path(OUTPUT_FILE.convert("pics/", None, None), trace) == Path("pics/g.dot")
    assert picture_path(Path("p.dot"), trace) == Path("p.dot")
