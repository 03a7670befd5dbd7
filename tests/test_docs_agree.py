"""Docs that agree with the program (issue 31.9): what docs/proofs.md says of exit codes
is what `prove` does, and the timings its examples show are the figures of its own table
(benchmarks/z3_bench.py, one run)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from tests.console_examples import ROOT

PROOFS = ROOT / "docs" / "proofs.md"


def test_proofs_page_gives_unknowns_real_exit_code() -> None:
    """SCOPE-EXIT: a bounded search that found nothing is `unknown`, exit 4; the page
    must not say it maps to exit 0."""
    result = CliRunner().invoke(
        main, ["prove", "cycle2", "--credit", "2,1", "--depth", "3", "--json"]
    )
    report = json.loads(result.stdout)
    assert report["result"] == "unknown" and result.exit_code == exit_codes.INCOMPLETE == 4
    text = " ".join(PROOFS.read_text().split())
    said = re.findall(r"`unknown` maps to exit (\d+)", text.replace("**", ""))
    assert said and set(said) == {"4"}, said
    assert "0 proved, or nothing found up to the depth" not in text


def table_row(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def seconds(cell: str) -> set[str]:
    return set(re.findall(r"(\d+(?:\.\d+)?) s\b", cell))


def test_proofs_examples_show_the_tables_timings() -> None:
    """Each console example's timing on docs/proofs.md is a figure of the same page's
    table for the same question."""
    text = PROOFS.read_text()
    result = r"\n(?:.*\n)*?result: .* in ([\d.]+) s"
    pairs = {
        # the example's command and timing, the table row it reports
        r"\$ creditflow prove rabbitmq-publish" + result: "| rabbitmq-publish, real credits",
        r"\$ creditflow prove fanout --symbolic" + result: "| parametric",
        r"\$ creditflow prove stalled-queue --symbolic" + result: "| stalled-queue backlog",
        r"\$ creditflow prove cycle2 --credit 2,1 --json\n.*\"seconds\": ([\d.]+)": (
            "| deadlock in cycle2"
        ),
        r"\$ creditflow synth rabbitmq-publish --per-edge\n(?:.*\n)*?  ([\d.]+) s\n": (
            "| smallest deadlock-free"
        ),
    }
    for example, row in pairs.items():
        shown = re.search(example, text)
        assert shown, example
        assert shown.group(1) in seconds(table_row(text, row)), (shown.group(1), row)


def test_faults_have_a_guide() -> None:
    """docs/faults.md exists, is linked from the README, and covers the attributes, the
    fault rules, every scenario of the bug corpus and the commands; its console examples
    run with the others (tests/test_doc_examples.py)."""
    page = ROOT / "docs" / "faults.md"
    assert page.is_file()
    text = page.read_text()
    assert "```console\n" in text and "(docs/faults.md)" in (ROOT / "README.md").read_text()
    for word in ("may_crash", "on_peer_down", "max_crashes", "NET-FAULT-NOOP", "CF-ENTRY"):
        assert word in text, word
    for rule in ("PROP-FAULT-BLOCKED", "PROP-RECOVERY", "PROP-FAULT-FORGET", "PROP-FAULT-LOST"):
        assert rule in text, rule
    for command in ("creditflow check", "creditflow prove", "creditflow synth", "creditflow show"):
        assert command in text, command
    for bug in sorted((ROOT / "spec" / "graphs" / "bugs").glob("*-bug.json")):
        name = bug.name.removesuffix("-bug.json")
        assert f"`{name}`" in text, name
