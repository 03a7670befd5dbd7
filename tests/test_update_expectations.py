"""``conform --update-expectations FILE`` (FIND-UPDATE): the file lists every finding of
the run in the format ``--expectations`` reads, so that the same run with
``--expectations FILE`` gates green; an existing file's entries are kept; a file that
cannot be written is one line after the verdict (OUT-EXIT). Small budgets: each run a
few seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.outputs import OutputError
from creditflow.conformance.outputs.expectations import (
    update_http2_expected,
    update_known_divergences,
)

MUTANT = "amqp-reference:mutant:delta-credit"
SMALL = ("--seed", "1", "--depth", "2", "--max-examples", "3")


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_mutants_findings_written_then_gate_green(tmp_path: Path) -> None:
    """FIND-UPDATE: the run fails (exit 1, its own verdict), the file lists each finding
    by its trace, and the same run with ``--expectations FILE`` exits 0."""
    exp, out = tmp_path / "exp.json", tmp_path / "out"
    code, stdout, _ = cli(
        "conform", "--adapter", MUTANT, *SMALL, "--out", str(out),
        "--update-expectations", str(exp), "--json",
    )  # fmt: skip
    assert code == 1, stdout
    doc = json.loads(stdout)
    traces = [Path(f["trace"]).name.removesuffix(".itf.json") for f in doc["findings"]]
    assert len(traces) >= 1
    written = json.loads(exp.read_text())
    assert list(written["known_divergences"]) == traces
    assert written["adapter"] == MUTANT
    assert doc["expectations_written"] == {
        "path": str(exp),
        "entries": len(traces),
        "added": traces,
        "removed": [],
    }
    code, stdout, _ = cli(
        "conform", "--adapter", MUTANT, *SMALL, "--out", str(out), "--expectations", str(exp)
    )
    assert code == 0, stdout
    assert "CONFORMANT" in stdout and stdout.count("EXPECTED  ") == len(traces)
    # updating again through the gate adds nothing and keeps every entry
    code, stdout, _ = cli(
        "conform", "--adapter", MUTANT, *SMALL, "--out", str(out),
        "--expectations", str(exp), "--update-expectations", str(exp),
    )  # fmt: skip
    assert code == 0, stdout
    assert (
        f"expectations: {exp}: {len(traces)} entr" in stdout and "(0 added by this run)" in stdout
    )
    assert list(json.loads(exp.read_text())["known_divergences"]) == traces


def test_a_file_that_cannot_be_written_is_one_line_after_the_verdict(tmp_path: Path) -> None:
    """OUT-EXIT: the verdict is printed, then one line naming the file; the exit code is
    the verdict's (1 here), or 5 when the run itself passed."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    target = blocker / "sub" / "exp.json"
    code, stdout, stderr = cli(
        "conform", "--adapter", MUTANT, *SMALL, "--out", str(tmp_path / "out"),
        "--update-expectations", str(target),
    )  # fmt: skip
    assert code == 1, stdout + stderr
    assert "DIVERGENCE found by" in stdout
    assert stderr.strip().count("\n") == 0 and f"could not write {target}" in stderr
    assert "is not a folder" in stderr
    code, stdout, stderr = cli(
        "conform", "--adapter", "amqp-reference", "--seed", "1", "--depth", "1",
        "--max-examples", "1", "--out", str(tmp_path / "out"),
        "--update-expectations", str(target),
    )  # fmt: skip
    assert code == 5, stdout + stderr
    assert "CONFORMANT" in stdout and f"could not write {target}" in stderr


def test_an_existing_files_entries_are_kept_first(tmp_path: Path) -> None:
    """FIND-UPDATE: the file's own entries and keys kept, in order; new ones after, an
    entry already listed not listed twice; a file that is no expectations file is left."""
    path = tmp_path / "e.json"
    mine = {"adapter": "x", "description": "mine", "known_divergences": {"b": "1", "a": "2"}}
    path.write_text(json.dumps(mine))
    done = update_known_divergences(path, "y", [("c", "3"), ("a", "other"), ("d", "4")])
    assert done.added == ("c", "d") and done.entries == 4
    doc = json.loads(path.read_text())
    assert doc["adapter"] == "x" and doc["description"] == "mine"
    assert list(doc["known_divergences"].items()) == [
        ("b", "1"),
        ("a", "2"),
        ("c", "3"),
        ("d", "4"),
    ]
    bad = tmp_path / "bad.json"
    bad.write_text("[not json")
    with pytest.raises(OutputError, match="not a JSON expectations file"):
        update_known_divergences(bad, "y", [("c", "3")])
    assert bad.read_text() == "[not json"
    h2 = tmp_path / "h2.json"
    update_http2_expected(h2, "h2", [("S @ op: f", "why")])
    assert update_http2_expected(h2, "h2", [("S @ op: f", "again"), ("T", "t")]).added == ("T",)
    assert [e["signature"] for e in json.loads(h2.read_text())["expected"]] == ["S @ op: f", "T"]
    with pytest.raises(OutputError, match="not an HTTP/2 expectations file"):
        update_http2_expected(path, "h2", [])


def test_rabbit_fifo_findings_written_then_gate_green(tmp_path: Path) -> None:
    """FIND-UPDATE for the queue end (AD-AMQ-FIFO-EXPECTATIONS): needs Erlang and the
    installed beams."""
    exp, out = tmp_path / "exp.json", tmp_path / "out"
    args = ("conform", "--adapter", "rabbit-fifo", "--seed", "1", "--phase", "explorer-runs")
    args += ("--depth", "2", "--out", str(out))
    code, stdout, _ = cli(*args, "--update-expectations", str(exp))
    assert code == 1, stdout
    known = json.loads(exp.read_text())["known_divergences"]
    assert len(known) == stdout.count("FINDING ") >= 1
    assert all((out / f"{name}.itf.json").is_file() for name in known)
    code, stdout, _ = cli(*args, "--expectations", str(exp))
    assert code == 0, stdout
    assert "CONFORMANT" in stdout


def test_http2_findings_written_by_signature_then_gate_green(tmp_path: Path) -> None:
    """FIND-UPDATE for HTTP/2 (AD-H2-CONFORM-EXPECTATIONS' format: by signature)."""
    exp, out = tmp_path / "exp.json", tmp_path / "out"
    args = ("conform", "--adapter", "httpcore", "--seed", "1", "--phase", "explorer-runs")
    args += ("--out", str(out))
    code, stdout, _ = cli(*args, "--update-expectations", str(exp))
    assert code == 1, stdout
    written = json.loads(exp.read_text())
    assert written["family"] == "http2"
    found = [line.split(None, 1)[1] for line in stdout.splitlines() if line.startswith("  MUST ")]
    found += [
        line.split(None, 1)[1] for line in stdout.splitlines() if line.startswith("  CONTRACT")
    ]
    assert found and sorted(e["signature"] for e in written["expected"]) == sorted(found)
    assert f"{len(found)} entries ({len(found)} added by this run)" in stdout
    code, stdout, _ = cli(*args, "--expectations", str(exp))
    assert code == 0, stdout


def test_the_credit_flow_family_refuses_the_flag(tmp_path: Path) -> None:
    """FIND-UPDATE: not offered for the credit_flow family's adapters (exit 2)."""
    code, _, stderr = cli(
        "conform", "--adapter", "reference", "--update-expectations", str(tmp_path / "e.json")
    )
    assert code == 2 and "--update-expectations" in stderr
    assert not (tmp_path / "e.json").exists()


def test_an_entry_whose_trace_passes_now_is_removed_and_named(tmp_path: Path) -> None:
    """FIND-UPDATE: the mutant's findings listed, then the fixed implementation (the
    reference adapter) run with the same file as ``--expectations`` and
    ``--update-expectations``: every listed trace passes (unexpected passes, exit 1), the
    file written lists none of them and names each; the next run gates green."""
    exp, out = tmp_path / "exp.json", tmp_path / "out"
    base = ("conform", *SMALL, "--out", str(out))
    code, _, _ = cli(*base, "--adapter", MUTANT, "--update-expectations", str(exp))
    assert code == 1
    listed = list(json.loads(exp.read_text())["known_divergences"])
    assert listed
    code, stdout, _ = cli(
        *base, "--adapter", "amqp-reference", "--expectations", str(exp),
        "--update-expectations", str(exp), "--json",
    )  # fmt: skip
    assert code == 1, stdout
    doc = json.loads(stdout)
    assert sorted(doc["unexpected_passes"]) == sorted(listed)
    assert sorted(doc["expectations_written"]["removed"]) == sorted(listed)
    assert json.loads(exp.read_text())["known_divergences"] == {}
    code, stdout, _ = cli(*base, "--adapter", "amqp-reference", "--expectations", str(exp))
    assert code == 0, stdout
