"""``creditflow demo`` (``make demo``): every preset of every family with a ``check``,
checked for every supply (SCOPE-SUPPLY), one table a family, each counterexample written
as an ITF trace with its picture under OUT (``OUT/<family>/`` for families other than
``credit_flow``). Rendering only; the verdicts come from the engines."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import Saver, console, folder_option
from creditflow.conformance.explore.check import CheckOptions
from creditflow.conformance.family import registry
from creditflow.conformance.family.interface import Family
from creditflow.conformance.inputs.graphs import load_graph, preset_names
from creditflow.conformance.outputs import derived_path
from creditflow.conformance.outputs.writer import OutputError
from creditflow.conformance.runtime import children
from creditflow.conformance.symbolic.every_supply import decide_check
from creditflow.conformance.traces.network import write_network_trace
from creditflow.conformance.traces.pictures import finding_dot, write_picture

#: seconds one preset may take in ``check`` before its row says it was not checked
CHECK_TIMEOUT = 600.0
COLUMNS = ("preset", "verdict", "states", "seconds", "steps", "trace / picture")


@click.command()
@folder_option("--out", "Folder for counterexample traces and pictures.", Path("out"))
@click.option(
    "--family",
    "only",
    multiple=True,
    metavar="NAME",
    help="Only this family's presets (repeatable; default: every family `check` answers).",
)
def demo(out: Path, only: tuple[str, ...]) -> None:
    """Check every preset's credits for every supply (SCOPE-SUPPLY): print the verdicts and
    write each counterexample (ITF) and its picture (DOT/SVG) under OUT.

    Every family that `check` answers is shown: the credit_flow process graphs, the AMQP 1.0
    topologies and the HTTP/2 topologies (their files under OUT/amqp/ and OUT/http2/).

    \b
    Examples:
      creditflow demo
      creditflow demo --family amqp --out out"""
    saver = Saver()
    checked = [f for f in registry.families() if f.name == "credit_flow" or f.options.get("check")]
    checked.sort(key=lambda f: f.name != "credit_flow")  # the credit_flow table first
    unknown = sorted(set(only) - {f.name for f in checked})
    if unknown:
        names = ", ".join(f.name for f in checked)
        raise click.BadParameter(f"{', '.join(unknown)} (families: {names})", param_hint="--family")
    every = True
    for family in checked:
        if only and family.name not in only:
            continue
        if family.name == "credit_flow":
            _credit_flow_table(out, saver)
        else:
            every = _family_table(family, out / family.name, saver) and every
    # SCOPE-EXIT: a preset that gave no verdict is not a demo that ran
    saver.exit(exit_codes.OK if every else exit_codes.INCOMPLETE)


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


def _family_table(family: Family, out: Path, saver: Saver) -> bool:
    """One family's presets, each through ``creditflow check NAME --json`` itself (the
    one command, whatever renders the family: FAM-CHECKING), so the demo says what a user
    running ``check`` is told; the rows are read from each run's JSON document. False when
    a preset gave no verdict."""
    reader = family.reader.load()
    names = list(reader.preset_names())
    if not names:
        return True
    table = _table(f"creditflow demo: the {family.name} presets ({family.title})")
    every = True
    for name in names:
        trace = derived_path(out, name, ".itf.json")
        started = time.perf_counter()
        doc = _checked(name, trace)
        seconds = f"{time.perf_counter() - started:.2f}"
        if doc is None:
            table.add_row(name, "NOT CHECKED (no verdict came back)", "", seconds, "", "")
            every = False
            continue
        for error in doc.get("write_errors") or ():  # OUT-FAILURE: the check's own, kept
            saver.errors.append(OutputError(trace, str(error).rsplit(": ", 1)[-1]))
        violation = doc.get("violation") or {}
        files = ""
        if violation:
            picture = doc.get("svg") or doc.get("dot") or "NOT WRITTEN"
            files = f"{doc.get('trace') or 'NOT WRITTEN'}  {picture}"
        steps = str(violation.get("length", "")) if violation else ""
        states = f"{doc['states']:,}" if isinstance(doc.get("states"), int) else ""
        table.add_row(name, str(doc.get("claim", "")), states, seconds, steps, files)
    console().print(table)
    return every


def _checked(name: str, trace: Path) -> dict[str, Any] | None:
    """``creditflow check NAME --json --trace-out TRACE`` in its own process (its writer
    makes TRACE's folder; tracked:
    SIG-CHILDREN), its document; None when it gave none within :data:`CHECK_TIMEOUT`."""
    argv = [sys.executable, "-m", "creditflow.conformance.cli", "check", name, "--json"]
    proc = children.track(
        subprocess.Popen(
            [*argv, "--trace-out", str(trace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    )
    try:
        stdout, _ = proc.communicate(timeout=CHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    finally:
        children.stop_group(proc)
    try:
        doc = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return doc if isinstance(doc, dict) else None
