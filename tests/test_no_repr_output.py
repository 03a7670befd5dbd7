"""No Python repr reaches a user (issue 38 point 5): the text of the main commands on
presets of every family says credits, sets and names in the words the docs use, never a
dict, list, tuple or object repr."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main

#: what a repr looks like in text: a quoted key or item in braces or brackets, an object
REPR = re.compile(r"\{'|\['|\('|<[a-z_.]+ object at 0x|\bdict\(|\bfrozenset\(")

CASES = [
    ["prove", "cycle2", "--graph-supply", "--depth", "8"],
    ["prove", "stalled-queue"],
    ["check", "cycle2"],
    ["check", "credit-as-delta"],
    ["check", "reset-never-credited"],
    ["check", "ring-one-held"],
    ["presets"],
    ["adapters"],
    ["conform", "--adapter", "rabbit-fifo", "--seed", "1", "--depth", "2", "--max-examples", "5"],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a))
def test_no_repr_in_the_text(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    found = [line for line in result.output.splitlines() if REPR.search(line)]
    assert found == [], found
