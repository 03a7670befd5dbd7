"""PROP-MAILBOX-BOUND without a bound is "not checked" (SCOPE-NOT-CHECKED): neither
`check` nor `prove` shows it as holding or proved, in text or --json; the other
verdicts and the exit code are unchanged."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main

BOUND = "PROP-MAILBOX-BOUND"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("supply", [[], ["--publishes", "3"]])
def test_check_without_a_bound_says_not_checked(supply: list[str]) -> None:
    """Every supply (decided by proof) and one supply (explored): the bound is not a
    property that holds; it is listed as not checked, and exit 0 stands."""
    result = run("check", "fanout", "--credit", "3,1", *supply, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert BOUND not in report["properties"]
    assert report["not_checked"] == {BOUND: "no bound given"}
    text = run("check", "fanout", "--credit", "3,1", *supply)
    row = next(line for line in text.stdout.splitlines() if BOUND in line)
    assert "not checked" in row and "holds" not in row


def test_check_with_a_bound_checks_it() -> None:
    report = json.loads(
        run(
            "check",
            "fanout",
            "--credit",
            "3,1",
            "--publishes",
            "3",
            "--mailbox-bound",
            "9",
            "--json",
        ).stdout
    )
    assert report["properties"][BOUND] is True and "not_checked" not in report


def test_prove_without_a_bound_says_not_checked() -> None:
    result = run("prove", "fanout", "--credit", "3,1", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["properties"][BOUND]["status"] == "not-checked"
    assert report["result"] == "proved"
    text = run("prove", "fanout", "--credit", "3,1")
    row = next(line for line in text.stdout.splitlines() if BOUND in line)
    assert "not-checked" in row and "proved" not in row
