"""The root ``creditflow`` command group, its ``presets`` command, and the table of every
other command (START-LAZY): a command's module, and with it the heavy libraries it uses,
is imported only when that command runs or shows its own help, so ``creditflow --help``
and ``creditflow presets`` start fast.

Every command shares the exit codes of :mod:`creditflow.conformance.exit_codes`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import PolicyGroup
from creditflow.conformance.inputs.presets import (
    preset_description,
    preset_documents,
    preset_names,
)

EXIT_CODES_HELP = "\n".join(
    f"  {code:>2}  {text}" for code, text in sorted(exit_codes.DESCRIPTIONS.items())
)


@dataclass(frozen=True)
class LazyCommand:
    """Where a command is defined, and the first sentence of its help for the root help
    (tests/test_cli_startup.py checks it against the command's own)."""

    module: str
    attribute: str
    summary: str

    def load(self) -> click.Command:
        command = getattr(importlib.import_module(self.module), self.attribute)
        assert isinstance(command, click.Command), f"{self.module}.{self.attribute}"
        return command


#: START-LAZY: every command but ``presets``, by name.
COMMANDS: Mapping[str, LazyCommand] = {
    "accounts": LazyCommand(
        "creditflow.conformance.cli.accounts",
        "accounts",
        "Syndicate-style accounts (spec/accounts.md): explore actor graphs, compare with "
        "credit flow, replay the worked example.",
    ),
    "adapters": LazyCommand(
        "creditflow.conformance.cli.conform",
        "adapters",
        "List the built-in adapters (for --adapter).",
    ),
    "alarms": LazyCommand(
        "creditflow.conformance.cli.accounts",
        "alarms",
        "Memory and disk alarms (spec/alarms.md): explore the model, or check a real RabbitMQ "
        "broker against it.",
    ),
    "check": LazyCommand(
        "creditflow.conformance.cli.app",
        "check",
        "Check credit conservation, deadlock freedom and the other PROP-* properties of GRAPH "
        "for every supply (SCOPE-SUPPLY): by proof where Z3 settles it, else by exploring the "
        "graph's own supply as an example.",
    ),
    "conform": LazyCommand(
        "creditflow.conformance.cli.conform",
        "conform",
        "Search for op sequences on which an implementation and the model disagree.",
    ),
    "demo": LazyCommand(
        "creditflow.conformance.cli.demo",
        "demo",
        "Check every preset's credits for every supply (SCOPE-SUPPLY): print the verdicts and "
        "write each counterexample (ITF) and its picture (DOT/SVG) under OUT.",
    ),
    "matrix": LazyCommand(
        "creditflow.conformance.cli.matrix",
        "matrix",
        "Run conform on each release of an adapter's library and print the table of findings "
        "× releases: which release introduced or fixed each finding (MATRIX-*).",
    ),
    "observe": LazyCommand(
        "creditflow.conformance.cli.observe",
        "observe",
        "Observe a running RabbitMQ node: snapshot, record, validate, workload.",
    ),
    "paging": LazyCommand(
        "creditflow.conformance.cli.paging",
        "paging",
        "Run a paging SCENARIO (a JSON file, or a preset name) through the model of a classic "
        "queue's paging to disk and show the state after each step: q1, q2, delta, q3, q4, "
        "messages in RAM, pending acks (ram/disk/index), the RAM target and the queue's "
        "msg_store credit (persistent/transient).",
    ),
    "prove": LazyCommand(
        "creditflow.conformance.cli.prove",
        "prove",
        "Prove the PROP-* properties of GRAPH with Z3 for every supply (unless --publishes or "
        "--graph-supply bounds the question), or find a counterexample.",
    ),
    "replay": LazyCommand(
        "creditflow.conformance.cli.conform",
        "replay",
        "Replay saved traces against an implementation, deterministically.",
    ),
    "replay-corpus": LazyCommand(
        "creditflow.conformance.cli.sweep",
        "replay_corpus",
        "Replay every trace under CORPUS with a replay function, partitioned across Spark "
        "executors, and write one Parquet row per trace (status ok, diverged, bad-trace, "
        "error or crashed) to OUT.",
    ),
    "report": LazyCommand(
        "creditflow.conformance.cli.sweep",
        "report",
        "Summarise a sweep folder: deadlock rate by topology feature, the minimal safe credit "
        "per family, the slowest cases and the failures, with plots (PNG and SVG) and an HTML "
        "page (SWEEP_DIR/report/index.html).",
    ),
    "show": LazyCommand(
        "creditflow.conformance.cli.show",
        "show",
        "Print the steps of an ITF TRACE written by creditflow (check, prove, synth, conform, "
        'the corpus), one line per step, repeated steps gathered ("reader reads publishes '
        '1-400 (x400)"), and who is blocked at the end.',
    ),
    "sweep": LazyCommand(
        "creditflow.conformance.cli.sweep",
        "sweep",
        "Check every case of SWEEPFILE on Spark and write one Parquet row per case.",
    ),
    "synth": LazyCommand(
        "creditflow.conformance.cli.prove",
        "synth",
        "Synthesise credits for GRAPH with Z3 Optimize: the smallest InitialCredit for "
        "deadlock freedom, or the largest one keeping every mailbox within --bound, each edge "
        "keeping its MoreCreditAfter.",
    ),
}


class LazyPolicyGroup(PolicyGroup):
    """START-LAZY: the root group; a command of :data:`COMMANDS` is imported when it is
    looked up to run, and the root help lists it from its summary."""

    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of the root help, as click writes it, without importing any."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name) or click.Command(name, help=self.lazy[name].summary)
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyPolicyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit codes (every command):\n\n" + EXIT_CODES_HELP.replace("\n", "\n\n"),
)
@click.version_option(package_name="creditflow")
def main() -> None:
    """creditflow: an executable model of credit-based flow control (RabbitMQ's
    credit_flow over process graphs, classic-queue paging, memory alarms, Syndicate
    accounts, AMQP 1.0 link credit and session windows, HTTP/2 stream and connection
    windows) and a conformance suite that holds real implementations against it.

    Start with `creditflow check fanout` (a preset) or `creditflow presets`.
    """
    # AD-VERSION-PROGRESS: a release installed on first use says so on stderr
    # deferred: START-LAZY, loaded when the group runs, not when it is imported
    from creditflow.adapters import versions

    versions.report_progress_to(_progress_line)


def _progress_line(line: str) -> None:
    """AD-VERSION-PROGRESS: an install's progress, for a person at a terminal (stderr a
    TTY); a pipe or a CI log gets the one-line outcome of the command only."""
    if sys.stderr.isatty():
        click.echo(line, err=True)


@main.command()
def presets() -> None:
    """List the presets of every family: the credit_flow process graphs, then each other
    family's under its name (FAM-REGISTRY, AMQ-PRESETS)."""
    for name in preset_names():
        click.echo(f"{name:18} {preset_description(name)}")
    # FAM-PRESETS: every other family's presets from its folder's documents, the
    # readers left unloaded
    # deferred: START-LAZY, only `presets` lists the registry
    from creditflow.conformance.family import registry

    for family in registry.families():
        if family.name == "credit_flow" or family.preset_folder is None:
            continue  # credit_flow: listed above, without a heading (the first family)
        described = preset_documents(family.preset_folder)
        if not described:
            continue
        click.echo(f"{family.name} presets: {family.title}")
        width = max(len(n) for n in described)
        for name, about in described.items():
            click.echo(f"  {name:{width}} {about}".rstrip())
