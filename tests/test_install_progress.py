"""AD-VERSION-PROGRESS: an install into the per-version cache says what it installs, that it
is still running, and when it is done; library callers get no lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters import versions
from creditflow.conformance.cli import main


@pytest.fixture
def lines():
    said: list[str] = []
    versions.report_progress_to(said.append)
    yield said
    versions.report_progress_to(None)


def test_a_first_install_says_what_where_and_how_long(tmp_path, monkeypatch, lines):
    monkeypatch.setenv("CREDITFLOW_CACHE", str(tmp_path))

    def fake_pip(argv: list[str], what: str) -> None:
        Path(argv[-2]).joinpath("lib.py").write_text("x = 1\n")

    folder = versions.install("demo", "lib", "1.2.3", "lib==1.2.3", run=fake_pip)
    assert (folder / "lib.py").exists()
    assert lines[0] == f"creditflow: installing lib@1.2.3 with pip into {folder} (first use)"
    assert lines[1].startswith("creditflow: installed lib@1.2.3 in ")
    lines.clear()
    versions.install("demo", "lib", "1.2.3", "lib==1.2.3", run=fake_pip)
    assert lines == []  # a cached release installs nothing and says nothing


def test_a_long_install_says_it_is_still_running(monkeypatch, lines):
    monkeypatch.setattr(versions, "PROGRESS_EVERY", 0.1)
    versions.run_installer([sys.executable, "-c", "import time; time.sleep(0.45)"], "slow@1")
    ticks = [x for x in lines if x.startswith("  still installing slow@1 (")]
    assert len(ticks) >= 2, lines


def test_an_install_that_never_ends_fails_in_one_line(monkeypatch, lines):
    monkeypatch.setattr(versions, "PROGRESS_EVERY", 0.1)
    with pytest.raises(
        versions.InstallFailed, match=r"^cannot install hang@1: no answer in 0.3 s$"
    ):
        versions.run_installer(
            [sys.executable, "-c", "import time; time.sleep(30)"], "hang@1", timeout=0.3
        )


def test_the_command_line_sends_progress_to_stderr():
    versions.report_progress_to(None)
    CliRunner().invoke(main, ["presets"])
    try:
        assert versions._progress is not None
    finally:
        versions.report_progress_to(None)


def test_a_library_caller_gets_no_lines(tmp_path, monkeypatch, capsys):
    versions.report_progress_to(None)
    monkeypatch.setenv("CREDITFLOW_CACHE", str(tmp_path))
    versions.install("demo", "lib", "2.0", "lib==2.0", run=lambda argv, what: None)
    assert capsys.readouterr() == ("", "")
