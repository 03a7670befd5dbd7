"""``creditflow demo`` (``make demo``): every preset of every family with a ``check``,
checked for every supply (SCOPE-SUPPLY), one table a family, each counterexample written
as an ITF trace with its picture under OUT (``OUT/<family>/`` for families other than
``credit_flow``). Rendering only; the verdicts come from the engines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import Saver, console
from creditflow.conformance.cli.family_check import decide, write_finding_files
from creditflow.conformance.explore.check import CheckOptions
from creditflow.conformance.explore.explorer import DEFAULT_MAX_STATES
from creditflow.conformance.family import registry
from creditflow.conformance.family.interface import Family
from creditflow.conformance.inputs.graphs import load_graph, preset_names
from creditflow.conformance.outputs import derived_path
from creditflow.conformance.symbolic.every_supply import decide_check
from creditflow.conformance.symbolic.settle import DEFAULT_SETTLE_SECONDS
from creditflow.conformance.traces.network import write_network_trace
from creditflow.conformance.traces.pictures import finding_dot, write_picture

COLUMNS = ("preset", "verdict", "states", "seconds", "steps", "trace / picture")


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out"),
    show_default=True,
    help="Folder for counterexample traces and pictures.",
)
def demo(out: Path) -> None:
    """Check every preset's credits for every supply (SCOPE-SUPPLY): print the verdicts and
    write each counterexample (ITF) and its picture (DOT/SVG) under OUT.

    Every family that `check` answers is shown: the credit_flow process graphs, the AMQP 1.0
    topologies and the HTTP/2 topologies (their files under OUT/amqp/ and OUT/http2/)."""
    saver = Saver()
    _credit_flow_table(out, saver)
    for family in registry.families():
        if family.name != "credit_flow" and family.options.get("check"):
            _family_table(family, out / family.name, saver)
    saver.exit(exit_codes.OK)


def _table(title: str) -> Any:
    # deferred: rich only when the demo prints
    from rich.table import Table

    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column)
    return table


def _credit_flow_table(out: Path, saver: Saver) -> None:
    table = _table("creditflow demo: the credit_flow presets")
    for name in preset_names():
        decision = decide_check(load_graph(name), CheckOptions(stop_at_deadlock=True))
        report, system, primary = decision.report, decision.system, decision.primary
        files = ""
        if primary is not None and system is not None:
            trace = saver.attempt(
                write_network_trace,
                system,
                primary,
                derived_path(out, name, ".itf.json"),
                source=name,
            )
            picture = saver.attempt(
                write_picture,
                finding_dot(system, primary, f"{name}: {primary.kind}"),
                derived_path(out, name, ".dot"),
            )
            dot, svg = picture or (None, None)
            files = f"{trace or 'NOT WRITTEN'}  {svg or dot or 'NOT WRITTEN'}"
        verdict = (
            report.claim or "" if primary is None else f"{primary.property_id} ({primary.kind})"
        )
        if primary is not None and primary.processes:
            verdict += ": " + ", ".join(primary.processes)
        if primary is not None:
            verdict += f"; {report.claim}"
        steps = "" if primary is None else str(primary.length)
        table.add_row(name, verdict, f"{report.states:,}", f"{report.seconds:.2f}", steps, files)
    console().print(table)


def _family_table(family: Family, out: Path, saver: Saver) -> None:
    """One family's presets through the generic check (FAM-CHECKING, FAM-EVERY-SUPPLY)."""
    reader = family.reader.load()
    names = list(reader.preset_names())
    if not names:
        return
    table = _table(f"creditflow demo: the {family.name} presets ({family.title})")
    for name in names:
        instance = reader.read(name, {})
        result, system = decide(
            family,
            instance,
            name,
            None,
            True,
            DEFAULT_MAX_STATES,
            None,
            False,
            True,
            DEFAULT_SETTLE_SECONDS,
        )
        files = ""
        if result.finding is not None and system is not None:
            written = write_finding_files(
                family,
                instance,
                name,
                result,
                system,
                derived_path(out, name, ".itf.json"),
                None,
                saver,
            )
            picture = written.get("svg") or written.get("dot") or "NOT WRITTEN"
            files = f"{written.get('trace', 'NOT WRITTEN')}  {picture}"
        steps = "" if result.finding is None else str(result.finding.length)
        states = f"{result.states:,}" if result.states else "proof"
        table.add_row(name, result.claim, states, f"{result.seconds:.2f}", steps, files)
    console().print(table)
