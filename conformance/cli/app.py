"""The ``check`` command (``demo`` is cli/demo.py). The root group, ``presets`` and the table that
loads every command when it runs (START-LAZY) are in :mod:`creditflow.conformance.cli.root`.

Every command shares the exit codes of :mod:`creditflow.conformance.exit_codes`.
Errors in the input are one line on stderr naming the file and the problem.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import click

from creditflow.conformance.cli.amqp import run_check as run_family_check
from creditflow.conformance.cli.common import (
    COUNT,
    DEFAULT_FOLDER,
    OUTPUT_FILE,
    POSITIVE,
    CreditOptions,
    CreditParam,
    Saver,
    TimeoutParam,
    console,
    credit_settings_options,
    credits_text,
    fail,
    names,
    output_path,
    picture_path,
    printable_line,
    read_graph_with_credits,
    shown,
    supply_options,
)
from creditflow.conformance.cli.family_check import OWN_RENDERING, route
from creditflow.conformance.cli.family_check import run_check as run_any_family_check
from creditflow.conformance.cli.show import print_witness_steps
from creditflow.conformance.explore.check import (
    CheckOptions,
)
from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.explore.explorer import DEFAULT_MAX_STATES, Progress
from creditflow.conformance.explore.results import CheckFiles, CheckResult
from creditflow.conformance.inputs.graphs import (
    GraphFileError,
)
from creditflow.conformance.inputs.itf import write_document
from creditflow.conformance.symbolic.every_supply import decide_check
from creditflow.conformance.symbolic.settle import DEFAULT_SETTLE_SECONDS
from creditflow.conformance.traces.network import (
    network_trace,
    trace_too_long,
)
from creditflow.conformance.traces.pictures import finding_dot, layout_refusal, write_picture
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import GraphError
from creditflow.model.network.properties import STATE_PROPERTIES

#: OUT-PROGRESS: seconds between progress lines on a stderr that is not a terminal, with
#: ``--progress`` and without either option (a CI log is never silent for long)
PROGRESS_LINE_SECONDS = 10.0
QUIET_LINE_SECONDS = 60.0


@contextmanager
def progress_bar(mode: bool | None, what: str) -> Iterator[Progress | None]:
    """OUT-PROGRESS: progress on stderr. On a terminal (``--progress`` or no option) a
    rich display; elsewhere one line every :data:`PROGRESS_LINE_SECONDS` with
    ``--progress``, every :data:`QUIET_LINE_SECONDS` without either option; nothing with
    ``--no-progress``."""
    if mode is False:
        yield None
        return
    if not sys.stderr.isatty():
        every = PROGRESS_LINE_SECONDS if mode else QUIET_LINE_SECONDS
        with progress_lines(every, what) as update:
            yield update
        return
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with RichProgress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.fields[found]:>12,} states, {task.fields[done]:>12,} expanded"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(what, found=0, done=0)

        def update(found: int, done: int) -> None:
            bar.update(task, found=found, done=done)

        yield update


@contextmanager
def progress_lines(every: float, what: str) -> Iterator[Progress]:
    """OUT-PROGRESS: a line on stderr every ``every`` seconds (from a watcher thread, so
    also while Z3 or a phase without progress reports runs), with the latest counts."""
    started = time.monotonic()
    counts = [0, 0]
    stop = threading.Event()

    def update(found: int, done: int) -> None:
        counts[:] = [found, done]

    def tick() -> None:
        while not stop.wait(every):
            elapsed = time.monotonic() - started
            click.echo(
                f"{printable_line(what)}: {elapsed:,.0f} s, {counts[0]:,} states, "
                f"{counts[1]:,} expanded (still running)",
                err=True,
            )

    thread = threading.Thread(target=tick, name="creditflow-progress", daemon=True)
    thread.start()
    try:
        yield update
    finally:
        stop.set()
        thread.join()


@click.command()
@click.argument("graph")
@click.option("--credit", type=CreditParam(), help="Set every edge's credit spec, e.g. 2,1.")
@credit_settings_options
@supply_options
@click.option(
    "--all-check-blocked",
    is_flag=True,
    help="Variant where every process stops taking work while blocked (NET-ALL-CHECK).",
)
@click.option(
    "--mailbox-bound",
    type=COUNT,
    help="Also check that no mailbox ever holds more than this (PROP-MAILBOX-BOUND).",
)
@click.option(
    "--max-states",
    type=POSITIVE,
    default=DEFAULT_MAX_STATES,
    show_default=True,
    help="Stop after this many states (exit 4 if nothing found).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--trace-out",
    type=OUTPUT_FILE,
    help="Where to write the counterexample (ITF JSON): a file, or a folder (DIR/ or an "
    "existing folder) to hold GRAPH.itf.json. Default: counterexamples/GRAPH.itf.json",
)
@click.option(
    "--dot-out",
    type=OUTPUT_FILE,
    help="Where to write the picture (DOT; SVG beside it if Graphviz is installed): a "
    "file, or a folder (DIR/). Default: beside the trace.",
)
@click.option(
    "--max-crashes",
    type=COUNT,
    metavar="N",
    help="At most N crashes of may_crash processes per run (NET-FAULT-BOUND; "
    "default: every may_crash process may crash).",
)
@click.option("--no-symmetry", is_flag=True, help="Do not merge symmetric states.")
@click.option("--no-reduction", is_flag=True, help="Do not use the safe-action reduction.")
@click.option(
    "--partial-order",
    is_flag=True,
    help="Decide with partial-order reduction (stubborn sets, EXP-POR) first, one state "
    "at a time; a violation is searched again without it for the shortest run.",
)
@click.option(
    "--full-search",
    is_flag=True,
    help="Explore every state even after a deadlock is certain (EXP-ONLINE), so "
    "that every other property is decided too.",
)
@click.option(
    "--no-prove",
    is_flag=True,
    help="When --max-states is reached with nothing found, do not try to settle "
    "every property with Z3 (EXP-SETTLE).",
)
@click.option(
    "--prove-timeout",
    type=TimeoutParam(),
    default=DEFAULT_SETTLE_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="Seconds the Z3 settlement may take in all.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress on stderr: a display on a terminal, else a line every 10 s "
    "(default: the display on a terminal, else a line every 60 s; OUT-PROGRESS).",
)
def check(
    graph: str,
    credit: CreditSpec | None,
    config: Path | None,
    edge_credit: tuple[tuple[str, str, CreditSpec], ...],
    role_credit: tuple[tuple[str, CreditSpec], ...],
    publishes: int | None,
    graph_supply: bool,
    all_check_blocked: bool,
    mailbox_bound: int | None,
    max_states: int,
    as_json: bool,
    trace_out: Path | None,
    dot_out: Path | None,
    max_crashes: int | None,
    no_symmetry: bool,
    no_reduction: bool,
    partial_order: bool,
    full_search: bool,
    no_prove: bool,
    prove_timeout: float,
    progress: bool | None,
) -> None:
    """Check credit conservation, deadlock freedom and the other PROP-* properties of
    GRAPH for every supply (SCOPE-SUPPLY): by proof where Z3 settles it, else by
    exploring the graph's own supply as an example. --publishes N or --graph-supply ask
    about that supply only, and every reachable state of it is explored.

    GRAPH is a node-link JSON or GraphML file, or a preset name (see `creditflow
    presets`). A JSON file with "family": "amqp", or an AMQP preset
    (rabbitmq4-publish, rabbitmq4-consume, ...), is checked for PROP-AMQ-* by explicit
    search of its supply (breadth first; past 10,000 states directed runs, whose witness
    is not proved shortest: AMQ-DIRECTED-RUN in spec/amqp.md), and for every supply
    proved with Z3 where the shape allows (publish, link: Z3-AMQ-EVERY-SUPPLY in
    spec/symbolic.md); --config advanced.config
    also sets its max_incoming_window, max_link_credit, max_queue_credit and
    quorum_commands_soft_limit, and the credits and windows in effect are printed. An
    HTTP/2 topology ("family": "http2", or a preset such as upload, download,
    reset-never-credited) is checked for PROP-H2-* (spec/http2.md) over its stream and
    connection windows, by the family's every-supply proof where it has one, else by
    search of the octets given. `creditflow presets` lists every family's presets. A
    violation is written as a counterexample trace (ITF JSON) and a picture before it is
    reported. Exit 0 only when the claim asked for is established.

    \b
    Examples:
      creditflow check fanout --credit 3,1 --publishes 20
      creditflow check ring-one-held
      creditflow check reset-never-credited --json
      creditflow check cycle2 --credit 1,1 --all-check-blocked --json
    """
    routed = route(click.get_current_context(), graph, config, "check")
    if routed is not None:  # FAM-REGISTRY: a family's own input, through its parts
        family, instance = routed
        own = family.name in OWN_RENDERING
        # FAM-CHECKING: any family through its parts (conformance/cli/family_check.py)
        runner: Callable[..., object] = run_any_family_check
        if own:
            runner = run_family_check
        label = instance.topology.name if own else instance.name
        with progress_bar(progress, f"checking {label}") as update:
            runner(
                family,
                instance,
                graph,
                publishes,
                publishes is None and not graph_supply,
                max_states,
                as_json,
                trace_out,
                dot_out,
                update,
                full_search,
                not no_prove,
                prove_timeout,
            )
    try:
        flow_graph, credit, credits, warnings = read_graph_with_credits(
            graph, CreditOptions(credit, config, edge_credit, role_credit)
        )
        options = CheckOptions(
            credit=credit,
            publishes=publishes,
            all_check_blocked=all_check_blocked,
            mailbox_bound=mailbox_bound,
            max_crashes=max_crashes,
            max_states=max_states,
            symmetry=not no_symmetry,
            reduce=not no_reduction,
            stop_at_deadlock=not full_search,
            partial_order=partial_order,
        )
        every_supply = publishes is None and not graph_supply
        with progress_bar(progress, f"checking {flow_graph.name}") as update:
            decision = decide_check(
                flow_graph, options, every_supply, not no_prove, prove_timeout, update
            )
    except (GraphFileError, GraphError) as exc:
        fail(str(exc))
        return
    report, system, primary = decision.report, decision.system, decision.primary
    if decision.proof_failed:
        # SCOPE-RACE: the verdict is the exploration's alone; say why the proof is missing
        click.echo(printable_line(f"creditflow: warning: {decision.proof_failed}"), err=True)
    report = replace(report, source=graph, credits_in_effect=credits)
    saver = Saver()
    doc = None
    if primary is not None and system is not None:
        trace_path = output_path(trace_out, DEFAULT_FOLDER, system.graph.name, ".itf.json")
        skipped = trace_too_long(primary)
        saved = None
        if skipped is None:
            doc = network_trace(system, primary, graph)  # built once: written, then printed
            saved = saver.attempt(write_document, doc, trace_path)
        dot_path = picture_path(dot_out, trace_path)
        title = (
            f"{system.graph.name}: {primary.property_id} ({primary.kind}) after "
            f"{primary.length} steps"
        )
        picture = finding_dot(system, primary, title)
        files = saver.attempt(write_picture, picture, dot_path)
        dot_file, svg_file = files or (None, None)
        if files and (refusal := layout_refusal(picture)):
            click.echo(f"picture: {refusal}", err=True)
        report = replace(
            report,
            files=CheckFiles(
                trace=str(saved) if saved else None,
                dot=str(dot_file) if dot_file else None,
                svg=str(svg_file) if svg_file else None,
                trace_not_written=skipped,
            ),
        )
    if as_json:
        doc_json = report.to_json()
        if warnings:
            doc_json["input_warnings"] = list(warnings)
        click.echo(json.dumps(saver.annotate(doc_json)))
    else:
        _print_report(report, primary)
        for line in credits_text(report.credits_in_effect):  # IN-CREDIT-SOURCES
            click.echo(line)
        if primary is not None and system is not None:
            print_witness_steps(system, primary, graph, doc)
        saver.show_unsaved()
    saver.exit(report.exit_code)


def _print_report(report: CheckResult, primary: Finding | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    table = Table(title=f"creditflow check {shown(report.source)}", show_header=True)
    table.add_column("property")
    table.add_column("verdict")
    table.add_column("counterexample (steps)", justify="right")
    lengths = report.counterexample_lengths
    rows: dict[str, str] = {
        pid: {True: "[green]holds", False: "[red]VIOLATED", None: "[yellow]undecided"}[holds]
        for pid, holds in report.properties.items()
    }
    rows |= {pid: "[dim]not checked" for pid in report.not_checked}  # SCOPE-NOT-CHECKED
    order = {pid: i for i, pid in enumerate(STATE_PROPERTIES)}
    for pid in sorted(rows, key=lambda pid: order.get(pid, len(order))):
        table.add_row(pid, rows[pid], str(lengths.get(pid, "")))
    out.print(table)
    out.print(f"[bold]{escape(report.claim or '')}[/bold]")
    if report.decision is not None and report.decision.decided_by:
        methods = ", ".join(sorted(set(report.decision.decided_by.values()) - {"not checked"}))
        out.print(f"decided for every supply ({escape(methods)}) in {report.seconds:.2f} s")
    else:
        out.print(
            f"{report.states:,} states, {report.transitions:,} transitions in "
            f"{report.seconds:.2f} s"
            + (
                ""
                if report.complete
                else " (stopped at the first certain deadlock; --full-search explores the rest)"
                if report.stopped_at_deadlock
                else " [yellow](incomplete: --max-states reached)"
            )
        )
    settled = report.settled
    if settled is not None:
        methods = ", ".join(sorted(set(settled.methods.values()) - {"not checked"}))
        out.print(
            f"[green]settled by Z3 (EXP-SETTLE): every property proved[/green] in "
            f"{settled.seconds:.2f} s ({methods})"
            if settled.proved
            else "[red]Z3 found a counterexample the exploration did not reach[/red]: "
            f"`creditflow prove {report.source}` writes it"
            if settled.result == "counterexample"
            else f"[yellow]Z3 could not settle it either[/yellow] ({settled.result})"
        )
    if not report.complete and not report.stopped_at_deadlock and not (settled and settled.proved):
        out.print(
            f"hint: `creditflow prove {report.source}` decides the same properties with Z3 "
            "(proofs for every supply on graphs without cycles, bounded search on cycles)"
        )
    if primary is not None:
        who = f" — blocked forever: {names(primary.processes)}" if primary.processes else ""
        later = [p for p in primary.final_processes if p not in primary.processes]
        if later:
            who += f" (later also: {names(later)})"
        shortest = " (certified shortest)" if primary.shortest else ""
        out.print(
            f"[red]{primary.property_id}[/red] ({primary.kind}) in {primary.length} steps"
            f"{shortest}{who}"
        )
        if primary.detail:
            out.print(shown(primary.detail))
        files = report.files or CheckFiles(trace=None, dot=None, svg=None)
        out.print(
            f"trace: not written ({files.trace_not_written})"
            if files.trace_not_written
            else f"trace: {files.trace or 'NOT WRITTEN'}"
        )
        out.print(f"picture: {files.svg or files.dot or 'NOT WRITTEN'}")
