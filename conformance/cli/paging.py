"""``creditflow paging``: run a paging scenario through the model, show the state after
each step, and optionally run it on a real RabbitMQ broker and diff (PG-SCENARIO,
PG-OBSERVE)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.adapters.rabbitmq.paging import compare_on_broker
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import (
    DEFAULT_FOLDER,
    OUTPUT_FILE,
    Saver,
    console,
    output_path,
    shown,
)
from creditflow.conformance.families.paging.compare import paging_step_row
from creditflow.conformance.inputs.paging_scenarios import (
    Scenario,
    ScenarioError,
    ScenarioRun,
    StepResult,
    iter_scenario,
    load_scenario,
    preset_names,
    run_scenario,
)
from creditflow.conformance.outputs import write_atomic
from creditflow.model.paging.properties import check
from creditflow.model.paging.state import PagingState


def _summary(st: PagingState) -> dict[str, Any]:
    """The table's columns for one state."""
    credit = [st.store_credit(i) for i in range(2)]
    return {
        "q1": len(st.q1),
        "q2": len(st.q2),
        "delta": len(st.delta),
        "q3": len(st.q3),
        "q4": len(st.q4),
        "len": st.len,
        "messages_ram": st.ram_msg_count + len(st.rpa) + len(st.qpa),
        "ready_ram": st.ram_msg_count,
        "pending": f"{len(st.rpa)}/{len(st.dpa)}/{len(st.qpa)}",
        "target": "inf" if st.target is None else st.target,
        "credit": "/".join("-" if c is None else str(c) for c in credit),
        "writes": sum(s.pending for s in st.stores),
        "blocked": "yes" if st.blocked() else "",
    }


COLUMNS = (
    "#",
    "step",
    "q1",
    "q2",
    "delta",
    "q3",
    "q4",
    "len",
    "messages_ram",
    "ready_ram",
    "pending",
    "target",
    "credit",
    "writes",
    "blocked",
)


def _step_violations(profile: Any, res: StepResult) -> list[str]:
    found = []
    for phase, st in (("after", res.after), ("settled", res.settled)):
        for pid, why in check(profile, st, res.reports).items():
            found.append(f"step {res.index} ({phase}): {pid}: {why}")
    return found


def _violations(run: ScenarioRun) -> list[str]:
    profile = run.scenario.profile
    return [v for res in run.results for v in _step_violations(profile, res)]


#: PG-STREAM: the violations quoted in the last line (all are counted).
MAX_QUOTED_VIOLATIONS = 100


def _stream_json(loaded: Scenario) -> int:
    """PG-STREAM: JSON Lines, a header, one line per step as it is computed, and a
    summary; nothing of earlier steps is kept. The exit code."""
    s = loaded
    header = {
        "scenario": s.name,
        "source": s.source,
        "description": s.description,
        "profile": s.profile._asdict() | {"store_credit": list(s.profile.store_credit)},
        "durable": s.config.durable,
        "steps": len(s.steps),
    }
    write = sys.stdout.write
    write(json.dumps(header) + "\n")
    quoted: list[str] = []
    count = 0
    for r in iter_scenario(s):
        violations = _step_violations(s.profile, r)
        count += len(violations)
        quoted += violations[: MAX_QUOTED_VIOLATIONS - len(quoted)]
        write(json.dumps(paging_step_row(r, violations).to_json()) + "\n")
    write(
        json.dumps(
            {"end": True, "steps": len(s.steps), "violation_count": count, "violations": quoted}
        )
        + "\n"
    )
    sys.stdout.flush()
    return exit_codes.VIOLATION if count else exit_codes.OK


def _table(run: ScenarioRun, marks: dict[int, str] | None = None) -> Any:
    from rich.table import Table

    s = run.scenario
    table = Table(
        title=f"creditflow paging {shown(s.name)} (RabbitMQ {s.profile.version}"
        f"{', durable queue' if s.config.durable else ''})"
    )
    for column in COLUMNS:
        table.add_column(column, justify="left" if column == "step" else "right")
    if marks is not None:
        table.add_column("broker")
    for r in run.results:
        mark = [] if marks is None else [marks.get(r.index, "")]
        if r.after != r.settled and r.step.op != "settle":
            row = _summary(r.after)
            what = " (one pass)" if r.step.op == "target" else " (unsettled)"
            cells = [str(r.index), r.step.describe() + what]
            pass_mark = [] if marks is None else [marks.get(-r.index, "")]
            table.add_row(*cells, *(str(row[c]) for c in COLUMNS[2:]), *pass_mark)
            row = _summary(r.settled)
            table.add_row("", "  ↳ settled", *(str(row[c]) for c in COLUMNS[2:]), *mark)
        else:
            row = _summary(r.settled)
            cells = [str(r.index), r.step.describe()]
            table.add_row(*cells, *(str(row[c]) for c in COLUMNS[2:]), *mark)
    return table


@click.command()
@click.argument("scenario", required=False)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON Lines: a header, one line per step as it runs, a summary "
    "(with --against-broker: one JSON object).",
)
@click.option(
    "--against-broker",
    is_flag=True,
    help="Also run the scenario on a private RabbitMQ 3.10.8 broker (Debian's "
    "package, on loopback) and diff the observed states.",
)
@click.option(
    "--out",
    type=OUTPUT_FILE,
    help="Where to write the model/broker comparison (JSON): a file, or a folder (DIR/) "
    "to hold paging-SCENARIO.json. Default: counterexamples/paging-SCENARIO.json",
)
def paging(scenario: str | None, as_json: bool, against_broker: bool, out: Path | None) -> None:
    """Run a paging SCENARIO (a JSON file, or a preset name) through the model of a
    classic queue's paging to disk and show the state after each step: q1, q2, delta,
    q3, q4, messages in RAM, pending acks (ram/disk/index), the RAM target and the
    queue's msg_store credit (persistent/transient).

    Without SCENARIO, list the presets.

    \b
    Examples:
      creditflow paging large-tight-credit
      creditflow paging mixed-pending-acks --json
      creditflow paging small-embedded --against-broker
    """
    if scenario is None:
        for name in preset_names():
            click.echo(f"{name:22} {load_scenario(name).description[:70]}")
        return
    try:
        loaded = load_scenario(scenario)
    except ScenarioError as exc:
        click.echo(f"creditflow: error: {exc}", err=True)
        sys.exit(exit_codes.USAGE)
    if against_broker:
        problem = loaded.broker_problem()
        if problem is not None:
            click.echo(
                f"creditflow: error: {loaded.source}: cannot run on a broker: {problem}", err=True
            )
            sys.exit(exit_codes.USAGE)
        _against_broker(loaded, as_json, out)
        return
    if as_json:
        sys.exit(_stream_json(loaded))
    run = run_scenario(loaded)
    violations = _violations(run)
    out_console = console()
    out_console.print(_table(run))
    for line in violations:
        out_console.print(f"[red]{line}")
    sys.exit(exit_codes.VIOLATION if violations else exit_codes.OK)


def _against_broker(loaded: Any, as_json: bool, out: Path | None) -> None:

    try:
        with (
            tempfile.TemporaryDirectory(prefix="creditflow-broker-") as workdir,
            PrivateBroker(Path(workdir)) as broker,
        ):
            comparison = compare_on_broker(broker, loaded)
    except BrokerError as exc:
        click.echo(f"creditflow: error: broker: {exc}", err=True)
        sys.exit(exit_codes.ADAPTER_FAILURE)
    doc = comparison.to_json()
    path = output_path(out, DEFAULT_FOLDER, f"paging-{loaded.name}", ".json")
    saver = Saver()
    saved = saver.attempt(write_atomic, path, json.dumps(doc, indent=1) + "\n")
    violations = _violations(comparison.model)
    if as_json:
        doc["report"] = str(saved) if saved else None
        saver.annotate(doc)
        doc["violations"] = violations
        click.echo(json.dumps(doc))
    else:
        marks: dict[int, str] = {}
        bad = {(d.step, d.phase) for d in comparison.diffs}
        for obs in comparison.observations:
            marks[obs.index] = "≠" if (obs.index, "settled") in bad else "="
            if obs.after_pass is not None:
                marks[-obs.index] = "≠" if (obs.index, "pass") in bad else "="
        c = console()
        c.print(_table(comparison.model, marks))
        for d in comparison.diffs:
            c.print(f"[red]{d}")
        for line in comparison.interference:
            c.print(f"[yellow]interference: {line}")
        for line in violations:
            c.print(f"[red]{line}")
        verdict = (
            "[green]the broker agrees with the model"
            if comparison.agrees
            else "[red]the broker differs from the model"
        )
        c.print(
            f"{verdict} ({len(comparison.diffs)} differing fields); report: "
            f"{saved or 'NOT WRITTEN'}"
        )
    if comparison.diffs:
        saver.exit(exit_codes.DIVERGENCE)
    if comparison.interference:
        saver.exit(exit_codes.INCOMPLETE)
    saver.exit(exit_codes.VIOLATION if violations else exit_codes.OK)
