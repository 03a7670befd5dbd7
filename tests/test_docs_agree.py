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
