"""Running ``creditflow`` in-process from a chosen working folder, for tests that read
the result's exit code, stdout, stderr and the files the command wrote there."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner, Result

from creditflow.conformance.cli import main


def run(*args: str, cwd: Path | None = None) -> Result:
    """``creditflow ARGS`` in-process (exceptions propagate), in ``cwd`` when given; the
    working folder is restored afterwards."""
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def short_conform(*adapter: str, seed: int = 1, max_examples: int = 2) -> list[str]:
    """The arguments of a short ``conform`` run: the ``adapter`` options (``--adapter
    NAME`` or ``--adapter-cmd CMD``), ``seed``, ``max_examples``, the process-ops phase
    only; output options go after them."""
    return [
        "conform",
        *adapter,
        "--seed",
        str(seed),
        "--max-examples",
        str(max_examples),
        "--phase",
        "process-ops",
    ]


def seeded_amqp_conform(adapter: str, depth: int, max_examples: int | None = None) -> list[str]:
    """The options of an AMQP ``conform`` run of ``adapter`` with seed 1: explorer runs
    to ``depth`` and, when given, ``max_examples`` Hypothesis runs; more options after."""
    more = [] if max_examples is None else ["--max-examples", str(max_examples)]
    return ["--adapter", adapter, "--seed", "1", "--depth", str(depth), *more]
