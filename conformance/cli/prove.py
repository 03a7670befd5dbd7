"""``creditflow prove`` and ``creditflow synth``: the Z3 commands (Z3-PROVE, Z3-SYNTH).

Rendering only: the work is done by :func:`creditflow.conformance.symbolic.prove.prove_graph`
and :mod:`creditflow.conformance.symbolic.synthesis`, which return result objects.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import click

from creditflow.conformance.cli import amqp as amqp_cli
from creditflow.conformance.cli.amqp import run_prove as run_amqp_prove
from creditflow.conformance.cli.common import (
    COUNT,
    DEFAULT_FOLDER,
    OUTPUT_FILE,
    POSITIVE,
    CreditOptions,
    CreditParam,
    Saver,
    TimeoutParam,
    credit_settings_options,
    credits_in_effect,
    credits_text,
    fail,
    output_path,
    printable_line,
    read_graph_with_credits,
    shown,
    supply_options,
)
from creditflow.conformance.cli.family_check import OWN_RENDERING, route
from creditflow.conformance.cli.family_check import run_prove as run_any_family_prove
from creditflow.conformance.cli.show import print_witness_steps
from creditflow.conformance.inputs.graphs import GraphFileError, load_graph
from creditflow.conformance.inputs.itf import write_document
from creditflow.conformance.outputs import derived_path
from creditflow.conformance.runtime.signals import OutOfTime, wall_clock
from creditflow.conformance.symbolic.encoding import LEMMA_FORMS
from creditflow.conformance.symbolic.every_supply import supply_words
from creditflow.conformance.symbolic.prove import (
    Counterexample,
    ProveOptions,
    ProveReport,
    Verdict,
    prove_graph,
    supply_value,
    timed_out_report,
)
from creditflow.conformance.symbolic.prove_result import (
    ProveResult,
    WrittenTrace,
    prove_result,
    prove_scope,
)
from creditflow.conformance.symbolic.synthesis import (
    SynthesisGoal,
    SynthesisOptions,
    SynthesisResult,
    synthesize,
)
from creditflow.conformance.traces.network import network_trace, trace_too_long
from creditflow.conformance.traces.pictures import finding_dot, layout_refusal, write_picture
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import GraphError


def lemma_kinds(names: list[str]) -> str:
    """``conservation x3, counter x3, ...`` from lemma names such as ``counter[a->b]``."""
    counts = Counter(re.sub(r"\[.*\]$", "", n) for n in names)
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.items())


def _write(
    cex: Counterexample, path: Path, source: str, saver: Saver, picture: bool = True
) -> WrittenTrace:
    """Write a counterexample's trace (and picture) before anything is reported, through
    the one output writer (OUT-FAILURE: a failure is remembered, ``None`` reported)."""
    f = cex.finding
    skipped = trace_too_long(f)
    if skipped is not None:
        return WrittenTrace(trace=None, trace_not_written=skipped)
    doc = network_trace(
        cex.system,
        f,
        source,
        description=f"creditflow Z3 counterexample for {f.property_id} ({f.kind}), found by "
        f"bounded model checking and replayed through the model, created "
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
    )
    saved = saver.attempt(write_document, doc, path)
    trace = str(saved) if saved else None
    if not picture:
        return WrittenTrace(trace=trace)
    title = (
        f"{cex.system.graph.name}: {f.property_id} ({f.kind}) after {f.length} steps (found by Z3)"
    )
    text = finding_dot(cex.system, f, title)
    files = saver.attempt(
        write_picture, text, path.with_name(path.name.removesuffix(".itf.json") + ".dot")
    )
    dot, svg = files or (None, None)
    if files and (refusal := layout_refusal(text)):
        click.echo(f"picture: {refusal}", err=True)
    return WrittenTrace(
        trace=trace, dot=str(dot) if dot else None, svg=str(svg) if svg else None, pictured=True
    )


def _slug(edge: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", edge.replace("->", "-to-")).strip("-") or "all"


#: ``--timeout`` of ``prove`` and ``synth`` (IN-WORK: it bounds the whole command too).
solver_timeout = click.option(
    "--timeout",
    "timeout_s",
    type=TimeoutParam(),
    default=60.0,
    show_default=True,
    help="Seconds for each solver call and for the whole command (exit 4 when it runs out).",
)


#: ``--max-crashes`` of ``prove`` and ``synth`` (NET-FAULT-BOUND, as ``check``'s).
max_crashes_option = click.option(
    "--max-crashes",
    type=COUNT,
    metavar="N",
    help="At most N crashes of may_crash processes per run (NET-FAULT-BOUND; "
    "default: every may_crash process may crash).",
)


@click.command()
@click.argument("graph")
@click.option("--credit", type=CreditParam(), help="Set every edge's credit spec, e.g. 400,200.")
@credit_settings_options
@click.option(
    "--symbolic",
    is_flag=True,
    help="Every edge its own symbolic spec, every source a symbolic supply: prove "
    "for all of them, find the exact credit condition for deadlock freedom.",
)
@click.option(
    "--depth",
    type=COUNT,
    help="Bounded model checking depth (default: complete for small acyclic graphs, "
    "else 12 for every supply and 24 for --publishes/--graph-supply; 12 for --symbolic "
    "counterexamples).",
)
@supply_options
@click.option(
    "--all-check-blocked",
    is_flag=True,
    help="Variant where every process stops taking work while blocked.",
)
@click.option(
    "--mailbox-bound",
    type=COUNT,
    help="Also prove that no mailbox ever holds more than this.",
)
@max_crashes_option
@solver_timeout
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--trace-out",
    type=OUTPUT_FILE,
    help="Where to write the counterexample (ITF JSON): a file, or a folder (DIR/ or an "
    "existing folder) to hold GRAPH.prove.itf.json. "
    "Default: counterexamples/GRAPH.prove.itf.json",
)
def prove(
    graph: str,
    credit: CreditSpec | None,
    config: Path | None,
    edge_credit: tuple[tuple[str, str, CreditSpec], ...],
    role_credit: tuple[tuple[str, CreditSpec], ...],
    symbolic: bool,
    depth: int | None,
    publishes: int | None,
    graph_supply: bool,
    all_check_blocked: bool,
    mailbox_bound: int | None,
    max_crashes: int | None,
    timeout_s: float,
    as_json: bool,
    trace_out: Path | None,
) -> None:
    """Prove the PROP-* properties of GRAPH with Z3 for every supply (unless --publishes
    or --graph-supply bounds the question), or find a counterexample.

    Inductive invariants and a ranking function prove conservation and deadlock freedom
    for every supply at once, whatever the credits (RabbitMQ's real {400,200} cost
    nothing extra); what they do not settle goes to bounded model checking and
    k-induction. A counterexample is replayed through the model and written as the
    same ITF trace as `check` writes (replayable), with its picture.

    GRAPH may also be a topology of another family with a proof for every supply: an
    AMQP 1.0 topology (PROP-AMQ-* and AMQ-SERIAL by an inductive invariant,
    Z3-AMQ-EVERY-SUPPLY), or one of any family whose record names an every-supply part;
    exit 0 only when every property is proved, 4 when one stays open (`check` then looks
    for its witness).

    \b
    Examples:
      creditflow prove rabbitmq-publish
      creditflow prove rabbitmq4-consume --json
      creditflow prove fanout --symbolic
      creditflow prove cycle2 --credit 1,1 --depth 10 --json
    """
    routed = route(click.get_current_context(), graph, config, "prove")
    if routed is not None:  # FAM-REGISTRY: the family's every-supply part
        family, inp = routed
        if family.every_supply is None:
            fail(f"{graph}: the {family.name} family has no proof for every supply")
        if trace_out is not None:
            fail(f"{graph}: prove --trace-out: no counterexample is written for {family.name}")
        if family.name not in OWN_RENDERING:
            run_any_family_prove(family, inp, graph, timeout_s, as_json)
        run_amqp_prove(family, inp, graph, timeout_s, as_json)
    if symbolic and credit is not None:
        fail("--symbolic and --credit exclude each other")
    if symbolic and (config is not None or edge_credit or role_credit):
        fail("--symbolic makes every credit symbolic; it excludes --config and the overrides")
    progress: dict[str, Verdict] = {}
    started = time.perf_counter()
    timed_out = False
    try:
        flow_graph, credit, credits, warnings = read_graph_with_credits(
            graph, CreditOptions(credit, config, edge_credit, role_credit)
        )
        options = ProveOptions(
            credit=credit,
            symbolic=symbolic,
            publishes=publishes,
            all_check_blocked=all_check_blocked,
            mailbox_bound=mailbox_bound,
            max_crashes=max_crashes,
            depth=depth,
            timeout_s=timeout_s,
            deadline=time.monotonic() + timeout_s,
            every_supply=publishes is None and not graph_supply,
        )
        with wall_clock(timeout_s):
            report = prove_graph(flow_graph, options, progress)
    except (GraphFileError, GraphError) as exc:
        fail(str(exc))
        return
    except OutOfTime:
        # OUT-JSON-TIMEOUT: the document (or table) with what was proved, exit 4
        timed_out = True
        report = timed_out_report(flow_graph, options, progress, time.perf_counter() - started)
    kinds = {re.sub(r"\[.*\]$", "", n) for n in report.invariant.lemmas}
    trace_path = output_path(trace_out, DEFAULT_FOLDER, report.graph.name, ".prove.itf.json")
    primary = report.primary()
    saver = Saver()
    files = _write(primary, trace_path, graph, saver) if primary is not None else None
    stem = trace_path.name.removesuffix(".itf.json").removesuffix(".json")
    boundary_traces = tuple(
        _write(
            cex,
            derived_path(trace_path.parent, f"{stem}.boundary-{_slug(cex.edge)}", ".itf.json"),
            graph,
            saver,
            picture=False,
        ).trace
        for cex in report.boundary
    )
    out = replace(
        prove_result(report),
        source=graph,
        invariant_legend={k: v for k, v in LEMMA_FORMS.items() if k in kinds},
        files=files,
        boundary_traces=boundary_traces,
        credits_in_effect=None if symbolic else credits,
    )
    if as_json:
        doc = out.to_json()
        if warnings:
            doc["input_warnings"] = list(warnings)
        click.echo(json.dumps(saver.annotate(doc)))
    else:
        _print(report, out)
        for line in credits_text(out.credits_in_effect):  # IN-CREDIT-SOURCES
            click.echo(line)
        if primary is not None:
            print_witness_steps(primary.system, primary.finding, graph)
        saver.show_unsaved()
    if timed_out:
        click.echo(
            printable_line(
                f"{graph}: no answer within --timeout {timeout_s:g} s (IN-WORK); give a "
                "larger --timeout or a smaller --depth"
            ),
            err=True,
        )
    saver.exit(out.exit_code)


def scope_text(report: ProveReport) -> str:
    """SCOPE-TEXT of a ``prove`` result: what it claims, for which supply."""
    asked = supply_words(prove_scope(report).supply)
    primary = report.primary()
    if primary is not None:
        used = supply_words(supply_value(primary.publishes))
        return f"violated with {used}" + (f": not for {asked}" if report.every_supply else "")
    if report.result == "proved" and report.symbolic:
        covered = " (the graph's own credits included)" if report.own_credits is not None else ""
        return f"holds for {asked} and every credit spec satisfying the condition{covered}"
    if report.result == "proved":
        return f"holds for {asked}"
    if report.timed_out:
        return f"not established for {asked}: --timeout ran out (OUT-JSON-TIMEOUT)"
    open_verdicts = [v for v in report.verdicts.values() if not report.established(v)]
    if report.own_credits is not None and not report.established(report.own_credits):
        own = report.own_credits
        open_verdicts.append(
            replace(own, detail=f"the graph's own credits: {own.detail or own.status}")
        )
    why = "; ".join(sorted({f"{v.property_id}: {v.detail or v.status}" for v in open_verdicts}))
    return f"not established for {asked}: {why}"


def _print(report: ProveReport, out: ProveResult) -> None:
    from rich.console import Console
    from rich.table import Table

    escape = shown  # OUT-TEXT: every line with names is printable and markup-free

    con = Console(width=None if sys.stdout.isatty() else 160)
    mode = (
        "symbolic credits and supplies"
        if report.symbolic
        else "the graph's credits; proofs hold for every supply"
    )
    table = Table(title=f"creditflow prove {shown(out.source)} ({mode})")
    for column in ("property", "verdict", "how", "detail"):
        table.add_column(column)
    colour = {
        "proved": "green",
        "violated": "red",
        "none-up-to-depth": "yellow",
        "unknown": "yellow",
        "not-checked": "dim",
    }
    for pid, v in report.verdicts.items():
        table.add_row(pid, f"[{colour[v.status]}]{v.status}", escape(v.method), shown(v.detail))
    con.print(table)
    inv = report.invariant
    con.print(
        escape(
            f"invariant ({len(inv.lemmas)} lemmas, inductive): {lemma_kinds(sorted(inv.lemmas))}"
        )
    )
    for kind, form in (out.invariant_legend or {}).items():
        con.print(escape(f"  {kind}: {form}"))
    if report.termination is not None and report.termination.proved:
        con.print(
            escape(
                f"ranking: every step lowers {report.termination.rank}; every run "
                f"has at most {report.termination.initial_rank} steps"
            )
        )
    if report.symbolic and report.condition:
        dl = report.verdicts["PROP-NO-DEADLOCK"]
        if dl.status == "proved":
            con.print(
                escape(
                    f"PROP-NO-DEADLOCK proved for all credit specs satisfying: "
                    f"{report.condition} (and every supply), rule {dl.method}"
                )
            )
        if report.own_outside:
            con.print(
                "[red]the graph's own credits fall outside it[/red]: "
                + escape(", ".join(f"{k} {v}" for k, v in report.own_outside.items()))
            )
            own = report.own_credits
            if own is not None:  # Z3-OWN-CREDITS: decided as `prove` without --symbolic
                con.print(
                    escape(
                        f"  with the graph's own credits (every supply): PROP-NO-DEADLOCK "
                        f"{own.status} ({own.method}){': ' + own.detail if own.detail else ''}"
                    )
                )
        elif report.conditions:
            con.print("the graph's own credits satisfy it on every edge")
        for cond in report.conditions[:1]:
            how = "proved equivalent to" if cond.readable_equivalent else "NOT proved equivalent to"
            con.print(
                escape(
                    f"  derived by Z3 (quantifier elimination on the edge lemma), "
                    f"{how} the condition above"
                )
            )
        if report.boundary:
            exact = "exact" if report.condition_exact else "sufficient"
            con.print(f"  {exact}: just outside it Z3 finds a deadlock (other edges as given):")
        traces = out.boundary_traces or (None,) * len(out.boundary)
        for entry, trace in zip(out.boundary, traces, strict=True):
            edge = entry.edge
            if edge:
                initial, more_after = entry.credits[edge]
                where = f"{edge} {{{initial},{more_after}}}"
            else:
                where = f"credits {credit_words(entry.credits)}"
            con.print(
                escape(
                    f"    {where}, publishes {entry.publishes}: {entry.kind} "
                    f"after {entry.length} steps: {trace}"
                )
            )
    if report.backlog is not None:
        state = "[green]proved" if report.backlog.proved else "[red]not proved"
        con.print(f"stalled-queue backlog ({state}[/]):")
        for line in report.backlog.statements:
            con.print(escape(f"  {line}"))
    if out.bmc is not None:
        bmc = out.bmc
        con.print(
            f"bounded model checking: depth {bmc.depth}, "
            f"{'complete' if bmc.complete else 'bounded'}, {bmc.seconds:.2f} s"
        )
    primary = report.primary()
    if primary is not None:
        f = primary.finding
        who = f" - blocked forever: {', '.join(f.processes)}" if f.processes else ""
        con.print(
            f"[red]{f.property_id}[/red] "
            + escape(
                f"({f.kind}) in {f.length} steps{who}, credits {credit_words(primary.credits)}"
            )
        )
        if f.detail:
            con.print(escape(f.detail))
        files = out.files or WrittenTrace(trace=None)
        con.print(
            escape(
                f"trace: not written ({files.trace_not_written})"
                if files.trace_not_written
                else f"trace: {files.trace or 'NOT WRITTEN'}"
            )
        )
        con.print(escape(f"picture: {files.svg or files.dot or 'NOT WRITTEN'}"))
    con.print(escape(f"result: {out.result} ({scope_text(report)}) in {out.seconds:.2f} s"))


@click.command()
@click.argument("graph")
@click.option(
    "--goal",
    type=click.Choice(["deadlock-free", "mailbox"]),
    default="deadlock-free",
    show_default=True,
    help="deadlock-free: the smallest I; mailbox: the largest I with no mailbox above --bound.",
)
@click.option("--bound", type=COUNT, help="The mailbox bound B (--goal mailbox).")
@click.option(
    "--per-edge", is_flag=True, help="One I per edge instead of one for all (deadlock-free only)."
)
@click.option(
    "--every-edge",
    is_flag=True,
    help="One I for every edge, the msg_store edges included (default: "
    "credit_flow_default_credit is synthesised over the edges that use it, the others "
    "keep their own spec; Z3-SYNTH-SETTINGS).",
)
@click.option(
    "--credit",
    type=CreditParam(),
    help="Start from this spec on every edge (its M is kept; I is synthesised on every edge).",
)
@credit_settings_options
@click.option("--publishes", type=COUNT, help="Set every source's supply.")
@click.option(
    "--max-credit",
    type=POSITIVE,
    help="Largest I to consider (default: unbounded where a proved condition is "
    "optimised, else 16).",
)
@click.option("--depth", type=COUNT, help="Bounded model checking depth.")
@max_crashes_option
@solver_timeout
@click.option(
    "--minimise",
    type=click.Choice(["credit_window", "renew_threshold", "session_window"]),
    help="AMQP topologies: the receiving end's setting to minimise (AMQ-SYNTH; default "
    "credit_window). --max-credit is then the largest value tried (default 16).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--trace-out",
    type=OUTPUT_FILE,
    help="Where to write the counterexample one step beyond the answer: a file, or a "
    "folder (DIR/ or an existing folder) to hold GRAPH.synth.itf.json. "
    "Default: counterexamples/GRAPH.synth.itf.json",
)
def synth(
    graph: str,
    goal: SynthesisGoal,
    bound: int | None,
    per_edge: bool,
    every_edge: bool,
    credit: CreditSpec | None,
    config: Path | None,
    edge_credit: tuple[tuple[str, str, CreditSpec], ...],
    role_credit: tuple[tuple[str, CreditSpec], ...],
    publishes: int | None,
    max_credit: int | None,
    depth: int | None,
    max_crashes: int | None,
    timeout_s: float,
    minimise: str | None,
    as_json: bool,
    trace_out: Path | None,
) -> None:
    """Synthesise credits for GRAPH with Z3 Optimize: the smallest InitialCredit for
    deadlock freedom, or the largest one keeping every mailbox within --bound, each
    edge keeping its MoreCreditAfter. By default the I of credit_flow_default_credit is
    synthesised over the edges that use it and the msg_store edges keep their own
    msg_store_credit_disc_bound; the output says what was synthesised, over which edges.
    The answer is proved; the counterexample one step beyond it is written as an ITF
    trace.

    GRAPH may also be an AMQP 1.0 topology: `--minimise SETTING` (credit_window,
    renew_threshold, session_window) gives the smallest value of the receiving end's
    setting that keeps every PROP-AMQ-* (AMQ-SYNTH); a family's synthesis part answers
    for the topologies of its family.

    Exit codes: 0 an answer was found and proved, 10 (deadlock-free) / 12 (mailbox)
    no I in range works, 4 undecided, 2 bad input.

    \b
    Examples:
      creditflow synth rabbitmq-publish
      creditflow synth rabbitmq-publish --per-edge
      creditflow synth stalled-queue --goal mailbox --bound 800 --credit 400,200
    """

    routed = route(click.get_current_context(), graph, config, "synth")
    if routed is not None:  # FAM-REGISTRY: the family's synthesis part
        family, inp = routed
        if family.synthesis is None:
            fail(f"{graph}: the {family.name} family has no synthesis")
        settings = family.synthesis.load().settings
        setting = next(s for s in settings if s == (minimise or settings[0]))
        amqp_cli.run_synth(
            inp, graph, setting, publishes, max_credit, as_json, trace_out, timeout_s
        )
    if minimise is not None:
        fail("--minimise is for AMQP topologies (AMQ-SYNTH)")
    if goal == "mailbox" and bound is None:
        fail("--goal mailbox needs --bound B")
    if goal == "mailbox" and per_edge:
        fail("--per-edge is for --goal deadlock-free")
    if per_edge and every_edge:
        fail("--per-edge and --every-edge exclude each other")
    started = time.perf_counter()
    try:
        flow_graph, credit, read_credits = credits_in_effect(
            load_graph(graph), CreditOptions(credit, config, edge_credit, role_credit)
        )
        with wall_clock(timeout_s):
            result = synthesize(
                flow_graph,
                SynthesisOptions(
                    goal=goal,
                    bound=bound,
                    per_edge=per_edge,
                    every_edge=every_edge,
                    max_credit=max_credit,
                    prove=ProveOptions(
                        credit=credit,
                        publishes=publishes,
                        max_crashes=max_crashes,
                        depth=depth,
                        timeout_s=timeout_s,
                        deadline=time.monotonic() + timeout_s,
                    ),
                ),
            )
    except (GraphFileError, GraphError) as exc:
        fail(str(exc))
        return
    except OutOfTime:
        # OUT-JSON-TIMEOUT: an undecided answer is still a verdict with its document
        result = SynthesisResult(
            goal=goal,
            status="unknown",
            method="timeout",
            explanation=f"no answer within --timeout {timeout_s:g} s (IN-WORK); give a "
            "larger --timeout",
            seconds=time.perf_counter() - started,
            graph=flow_graph.name,
            bound=bound,
        )
    saver = Saver()
    if result.beyond is not None:
        path = output_path(trace_out, DEFAULT_FOLDER, flow_graph.name, ".synth.itf.json")
        written = _write(result.beyond, path, graph, saver, picture=False)
        result = replace(result, beyond_written=written)
    result = replace(result, source=graph, credits_in_effect=read_credits)
    if as_json:
        click.echo(json.dumps(saver.annotate(result.to_json())))
    else:
        click.echo(f"creditflow synth {graph} --goal {goal}: {result.status} ({result.method})")
        for edge, spec in result.credits.items():
            click.echo(f"  {edge}: {spec}")
        click.echo(f"  {result.explanation}")
        if result.minimised is not None and result.method != "condition":
            click.echo(f"  synthesised: {result.minimised.words()}")
        if result.proof is not None:
            click.echo(f"  proof of the answer (creditflow prove): {result.proof.result}")
        if result.beyond is not None:
            f = result.beyond.finding
            credits = ", ".join(f"{k} {v}" for k, v in result.beyond_credits.items())
            trace = result.beyond_written.trace if result.beyond_written else None
            click.echo(
                f"  one step beyond ({credits}): {f.property_id} ({f.kind}) after "
                f"{f.length} steps - {trace}"
            )
        click.echo(f"  {round(result.seconds, 3):.2f} s")
        for line in credits_text(result.credits_in_effect):  # IN-CREDIT-SOURCES (as read)
            click.echo(line)
        saver.show_unsaved()
    saver.exit(result.exit_code)


def credit_words(credits: Mapping[str, Sequence[int]]) -> str:
    """Each edge's credit as the user writes it (``A->B {2,1}``), never a Python repr."""
    return ", ".join(f"{edge} {{{initial},{more}}}" for edge, (initial, more) in credits.items())
