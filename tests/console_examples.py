"""The console examples of README.md and docs/*.md as runnable transcripts.

Sybil finds them: every fenced block whose language is ``console``, and the HTML comment
directive ``<!-- console: ... -->`` written just above a block. In a block, a line starting
with ``$ `` is a command (a trailing ``\\`` continues it on the next line) and the lines up to
the next command are what it prints. The runner (``run_example``) runs a block's commands in
one bash, in a fresh folder, with ``creditflow`` on PATH, and compares what each printed
(stdout and stderr together) with the page:

- ``...`` stands for any text (doctest's ELLIPSIS), so a page may show an excerpt;
- runs of white space compare equal (tables keep their meaning when a column widens);
- durations (``0.47 s``, ``1.1 ms``), rates (``89,252 events/s``), JSON ``seconds`` fields
  and the folder the block runs in are normalised on both sides.

Directives (one per block, above it): ``<!-- console: broker -->`` and
``<!-- console: spark -->`` put the block in the broker/Spark pass;
``<!-- console: not run: REASON -->`` marks a block that cannot run here (a user's own node),
and the reason is shown as the test's skip reason.
"""

from __future__ import annotations

import doctest
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Region
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: what a block may need besides the model: the pass of `make test` it runs in
NEEDS = {"broker", "spark"}
#: the repository folders a block's working folder links to (pages use them relatively)
LINKED = (".venv", "conformance", "spec", "docs")
COMMAND_TIMEOUT_S = 900


@dataclass(frozen=True)
class Command:
    text: str
    expected: str


@dataclass(frozen=True)
class ConsoleExample:
    """One ```console block of a page: its commands and how it is run."""

    path: Path
    line: int
    commands: tuple[Command, ...]
    needs: frozenset[str] = frozenset()
    not_run: str | None = None

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def split_commands(source: str) -> tuple[Command, ...]:
    """The ``$ `` commands of a block (with their continuation lines) and their output."""
    commands: list[Command] = []
    text: list[str] = []
    output: list[str] = []
    continuing = False
    for line in source.splitlines():
        if continuing:
            text.append(line)
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            if text:
                commands.append(Command("\n".join(text), "\n".join(output)))
            text, output = [line[2:]], []
            continuing = line.endswith("\\")
        elif text:
            output.append(line)
        elif line.strip():
            raise ValueError(f"output before the first '$ ' command: {line!r}")
    if text:
        commands.append(Command("\n".join(text), "\n".join(output)))
    return tuple(commands)


def parse_directive(arguments: str) -> tuple[frozenset[str], str | None]:
    """``broker``, ``spark`` (either or both) or ``not run: REASON``."""
    if arguments.startswith("not run:"):
        reason = arguments.removeprefix("not run:").strip()
        if not reason:
            raise ValueError("<!-- console: not run: ... --> needs a reason")
        return frozenset(), reason
    needs = frozenset(arguments.split())
    if not needs or not needs <= NEEDS:
        raise ValueError(f"unknown console directive {arguments!r} (broker, spark, not run: …)")
    return needs, None


class ConsoleParser:
    """A Sybil parser: one region per ```console block, carrying its ConsoleExample."""

    def __init__(self) -> None:
        self.blocks = FencedCodeBlockLexer(language="console")
        self.directives = DirectiveInHTMLCommentLexer(directive="console", arguments=".+?")

    def __call__(self, document: Document) -> Iterator[Region]:
        path = Path(document.path)
        directives = sorted(self.directives(document), key=lambda r: r.start)
        for block in sorted(self.blocks(document), key=lambda r: r.start):
            needs: frozenset[str] = frozenset()
            not_run = None
            before = [d for d in directives if d.end <= block.start]
            if before:
                # the lexer's region ends before the comment's closing "-->"
                gap = document.text[before[-1].end : block.start]
                if re.fullmatch(r"\s*-*>?\s*", gap):
                    needs, not_run = parse_directive(before[-1].lexemes["arguments"].strip())
                    directives.remove(before[-1])
            line = document.text.count("\n", 0, block.start) + 1
            example = ConsoleExample(
                path, line, split_commands(block.lexemes["source"]), needs, not_run
            )
            yield Region(block.start, block.end, example, evaluator=lambda ex: None)
        if directives:
            line = document.text.count("\n", 0, directives[0].start) + 1
            raise ValueError(f"{path}:{line}: console directive not followed by a console block")


def examples(paths: list[Path]) -> list[ConsoleExample]:
    """Every console example of the pages, in page order."""
    parser = ConsoleParser()
    return [
        example.region.parsed
        for path in paths
        for example in Document.parse(str(path), parser).examples()
    ]


DURATION = re.compile(r"\b\d[\d,]*(?:\.\d+)?\s?m?s\b")
RATE = re.compile(r"\b\d[\d,]*(?:\.\d+)?\s?([a-z]+)/s\b")
JSON_SECONDS = re.compile(r'("(?:\w+_)?seconds"|"states_per_second"): [\d.e+-]+')


def normalise(text: str, folder: Path) -> str:
    text = text.replace(f"{folder}/", "").replace(str(folder), ".")
    text = JSON_SECONDS.sub(r"\1: <N>", text)
    text = RATE.sub(r"<N> \1/s", text)
    return DURATION.sub("<T>", text)


CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",  # stdout and stderr interleave as on a terminal
        COLUMNS="100",
        TERM="dumb",
        NO_COLOR="1",
    )
    env.pop("FORCE_COLOR", None)
    return env


def run_example(example: ConsoleExample, folder: Path) -> list[str]:
    """Run the block's commands in one bash in ``folder``; the mismatches, one text each."""
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    marker = f"--- creditflow console example {secrets.token_hex(8)} ---"
    script = ["set +e"]
    for command in example.commands:
        # keep $? across the marker so that a following `echo $?` sees the command's code
        script += [command.text, f'__rc=$?; printf "\\n%s\\n" "{marker}"; (exit $__rc)']
    completed = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=folder,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_TIMEOUT_S * len(example.commands),
    )
    outputs = completed.stdout.split(f"\n{marker}\n")
    if len(outputs) != len(example.commands) + 1:
        return [f"the block did not run to its end:\n{completed.stdout}"]
    failures = []
    for command, got in zip(example.commands, outputs, strict=False):
        want = normalise(command.expected, folder).strip() + "\n"
        got = normalise(got, folder).strip() + "\n"
        if want.strip() == "" and got.strip() == "":
            continue
        if not CHECKER.check_output(want, got, FLAGS):
            failures.append(
                f"$ {command.text}\n--- the page shows:\n{want}--- the program printed:\n{got}"
            )
    return failures
