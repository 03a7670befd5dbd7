"""Docs that run: every ```console example of README.md and docs/*.md prints what the
page shows (tests/console_examples.py says how a block is read and compared). Examples that
need a broker or Spark run in `make test`'s broker/Spark pass; the few that cannot run here
say why on the page (``<!-- console: not run: REASON -->``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.console_examples import ROOT, ConsoleExample, examples, run_example, split_commands

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = examples(PAGES)
#: at most this many blocks may be marked as not run
MAX_NOT_RUN = 4


def marks(example: ConsoleExample) -> list[pytest.MarkDecorator]:
    found = [getattr(pytest.mark, need) for need in sorted(example.needs)]
    if example.not_run:
        found.append(pytest.mark.skip(reason=f"not run: {example.not_run}"))
    return found


@pytest.mark.parametrize(
    "example",
    [pytest.param(example, id=example.name, marks=marks(example)) for example in EXAMPLES],
)
def test_console_example_prints_what_the_page_shows(
    example: ConsoleExample, tmp_path: Path
) -> None:
    failures = run_example(example, tmp_path)
    assert not failures, f"{example.name}\n" + "\n".join(failures)


def test_every_page_with_console_blocks_is_found() -> None:
    fenced = {p for p in PAGES if "```console\n" in p.read_text()}
    assert fenced == {example.path for example in EXAMPLES}
    assert sum(p.read_text().count("```console\n") for p in PAGES) == len(EXAMPLES)


def test_few_examples_are_not_run() -> None:
    assert sum(1 for e in EXAMPLES if e.not_run) <= MAX_NOT_RUN


def test_commands_and_their_output_are_split_at_dollar_lines() -> None:
    commands = split_commands("$ a \\\n  b\nout 1\nout 2\n$ c\n")
    assert [(c.text, c.expected) for c in commands] == [("a \\\n  b", "out 1\nout 2"), ("c", "")]
    with pytest.raises(ValueError, match="before the first"):
        split_commands("stray\n$ a\n")


def test_a_drifted_example_fails(tmp_path: Path) -> None:
    drifted = ConsoleExample(ROOT / "README.md", 1, split_commands("$ echo 9 states\n16 states\n"))
    assert run_example(drifted, tmp_path) != []


def test_ellipsis_timings_and_exit_codes(tmp_path: Path) -> None:
    source = "\n".join(
        [
            "$ printf 'a\\nb 0.47 s\\nc\\n'; false",
            "a",
            "...",
            "c",
            "$ echo $?",
            "1",
            "$ echo 'took 12.3 ms'",
            "took 1 s",
        ]
    )
    example = ConsoleExample(ROOT / "README.md", 1, split_commands(source))
    assert run_example(example, tmp_path) == []


def test_a_wrong_exit_code_fails(tmp_path: Path) -> None:
    example = ConsoleExample(ROOT / "README.md", 1, split_commands("$ false\n$ echo $?\n0\n"))
    assert run_example(example, tmp_path) != []
