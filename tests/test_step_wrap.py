"""OUT-WRAP (spec/reliability.md): the steps of a witness wrap to the terminal when stdout
is one, continuation lines indented under the step's text; to a pipe or a CI log every
step stays one line (grep-able). One function prints them for check, prove and show."""

from __future__ import annotations

import os
import re
import shutil
import sys

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import common, main
from creditflow.conformance.cli.common import step_line, terminal_width

AMQP = ["check", "session-window-never-renewed", "--no-progress"]
NET = ["check", "rabbitmq-publish", "--credit", "40,0", "--publishes", "45", "--no-progress"]
#: a numbered step line: ``   3. send …`` (AMQP, every family) or ``   40  reader …`` (NET)
NUMBERED = re.compile(r"^\s*\d[\d,–]*\.?\s")


def step_block(output: str, first: str, last: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(last))
    return lines[start + 1 : end]


def test_a_long_line_wraps_at_words_under_its_step_text():
    line = "  12. take_fwd      " + " ".join(f"field{i}=value{i}" for i in range(20))
    parts = step_line(line, 50)
    assert len(parts) > 1 and all(len(p) <= 50 for p in parts)
    assert parts[0].startswith("  12. take_fwd")
    assert all(p.startswith(" " * 6) and p[6] != " " for p in parts[1:])  # under "take_fwd"
    assert " ".join(" ".join(parts).split()) == " ".join(line.split())  # nothing lost
    assert step_line(line, None) == [line]  # not a terminal: whole
    assert step_line("short", 50) == ["short"]
    net = "           40  reader reads publish 40; now blocked on channel"
    assert [p[:15] for p in step_line(net, 40)] == ["           40  ", " " * 15]


def test_check_wraps_an_amqp_witness_to_the_terminal(monkeypatch):
    monkeypatch.setattr(common, "terminal_width", lambda: 70)
    out = CliRunner().invoke(main, AMQP).stdout
    steps = step_block(out, "violated:", "trace:")
    assert all(len(line) <= 70 for line in steps), steps
    continued = [line for line in steps if not NUMBERED.match(line)]
    assert continued and all(line.startswith(" " * 6) for line in continued)
    assert sum(1 for line in steps if NUMBERED.match(line)) == 9  # the start and 8 steps


def test_check_to_a_pipe_leaves_each_step_whole():
    out = CliRunner().invoke(main, AMQP).stdout  # CliRunner's stdout is not a terminal
    steps = step_block(out, "violated:", "trace:")
    assert len(steps) == 9 and all(NUMBERED.match(line) for line in steps)
    assert max(len(line) for line in steps) > 100  # long, and left so


@pytest.mark.parametrize("width", [None, 50])
def test_net_check_and_show_use_the_same_lines(tmp_path, monkeypatch, width):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(common, "terminal_width", lambda: width)
    out = CliRunner().invoke(main, [*NET, "--trace-out", "t.itf.json"]).stdout
    steps = step_block(out, "steps:", "blocked after")
    shown = CliRunner().invoke(main, ["show", "t.itf.json"]).stdout.splitlines()
    assert all(line in shown for line in steps)
    if width is None:
        assert "           40  reader reads publish 40; now blocked on channel" in steps
    else:
        assert all(len(line) <= width for line in steps)
        whole = "           40  reader reads publish 40; now blocked on channel"
        wrapped = step_line(whole, width)
        assert len(wrapped) == 2 and wrapped[1].startswith(" " * 15 + "blocked")
        at = steps.index(wrapped[0])
        assert steps[at : at + 2] == wrapped


def test_terminal_width_is_the_terminals_only_when_stdout_is_one(monkeypatch):
    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a: os.terminal_size((57, 20)))
    monkeypatch.setattr(sys, "stdout", Stream(True))
    assert terminal_width() == 57
    monkeypatch.setattr(sys, "stdout", Stream(False))
    assert terminal_width() is None
