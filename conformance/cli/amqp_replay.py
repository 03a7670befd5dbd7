"""``creditflow replay`` for AMQP adapters and what ``conform`` writes and says for them
with ``--expectations`` (AD-AMQ-REPLAY, AD-AMQ-EXPECTATIONS-MATCH, TRACE-AMQP-RUN).
Rendering and writing only; the engines are ``differential/amqp_replay.py`` and
``differential/amqp_expected.py``. Imported for AMQP adapters only (the AMQP model
changes the NET runs' Hypothesis draws when imported)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import Saver, fail
from creditflow.conformance.differential.amqp_conform import AmqpConformResult, run_lines
from creditflow.conformance.differential.amqp_protocol import AmqpAdapter
from creditflow.conformance.differential.amqp_replay import (
    DIVERGED,
    FAILED,
    NOT_RUN,
    PASS,
    PROPERTY,
    XFAIL,
    XPASS,
    replay_amqp_traces,
)
from creditflow.conformance.differential.amqp_traces import (
    amqp_trace_digest,
    load_amqp_trace,
    trace_of_run,
    write_amqp_trace,
)
from creditflow.conformance.differential.traces import SUFFIX, trace_files
from creditflow.conformance.inputs.expectations import ExpectationsError, load_expectations
from creditflow.conformance.inputs.itf import TraceFormatError
from creditflow.conformance.outputs import derived_path
from creditflow.conformance.outputs.streams import printable


def adapter_args(name: str, rabbitmq_ebin: Path | None) -> str:
    """The options that select the same implementation again (AD-REPRODUCE)."""
    args = ["--adapter", name]
    if rabbitmq_ebin is not None:
        args += ["--rabbitmq-ebin", str(rabbitmq_ebin.resolve())]
    return shlex.join(args)


def write_failing_run(result: AmqpConformResult, folder: Path, saver: Saver) -> Path | None:
    """AD-AMQ-CONFORM-TRACE, TRACE-AMQP-RUN: the failing run of an AMQP ``conform`` written
    into ``folder`` (the
    ``--corpus`` or ``--out`` folder), named after the adapter and the run's content."""
    run = result.run
    if run is None:
        return None
    trace = trace_of_run(run)
    name = f"{result.adapter}-{amqp_trace_digest(trace)}"
    assert run.index is not None
    what = "diverges" if run.verdict == "diverged" else "breaks a property"
    description = (
        f"{result.adapter} {result.version} {what} at op {run.index + 1} "
        f"({run.ops[run.index]}), found by {result.found_by}, seed {result.seed}"
    )
    return saver.attempt(
        write_amqp_trace,
        trace,
        derived_path(folder, name, SUFFIX),
        description,
        f"creditflow conform --adapter {result.adapter} --seed {result.seed}",
        {"adapter": result.adapter, "verdict": run.verdict},
    )


def expectation_lines(result: AmqpConformResult, expectations: Path | None) -> list[str]:
    """AD-AMQ-EXPECTATIONS-MATCH in text: each known failure and how often it was met."""
    lines = []
    for name, why, sig in result.known:
        hits = result.expected_hits.get(name, 0)
        lines.append(f"  EXPECTED  {name} ({sig}): met in {hits} run{'s' * (hits != 1)}; {why}")
    for name in result.unexpected_passes:
        lines.append(
            f"  XPASS     {name}: passes, but the expectations list it; remove it from "
            f"{expectations}"
        )
    for name, why in result.known_not_run.items():
        lines.append(f"  NOT RUN   {name}: {why}")
    return [printable(line) for line in lines]


def replay_amqp(
    traces: tuple[Path, ...],
    factory: Callable[[], AmqpAdapter],
    expectations: Path | None,
    as_json: bool,
) -> None:
    """``creditflow replay TRACES --adapter NAME`` for an AMQP adapter (AD-AMQ-REPLAY):
    exit 0 every trace passes or fails only in known ways, 1 a divergence or an
    unexpected pass, 2 a bad trace or expectations file, 3 the adapter failed, 12 a
    property violated by the implementation while the model agrees."""
    try:
        known = load_expectations(expectations) if expectations else None
        files = trace_files(list(traces))
        if not files:
            raise TraceFormatError(f"no *{SUFFIX} traces in {', '.join(map(str, traces))}")
        loaded = [load_amqp_trace(f) for f in files]
    except (TraceFormatError, ExpectationsError) as exc:
        fail(str(exc), exit_codes.USAGE)
    report = replay_amqp_traces(factory, loaded, known)
    if report.expectations_error is not None:
        fail(report.expectations_error, exit_codes.USAGE)
    saver = Saver()
    if as_json:
        click.echo(json.dumps(saver.annotate(report.to_json())))
        saver.exit(report.exit_code)
    if report.failure is not None and not report.outcomes:
        fail(report.failure, exit_codes.ADAPTER_FAILURE)
    named = report.adapter if "@" in report.adapter else f"{report.adapter} {report.version}"
    click.echo(f"creditflow replay: {printable(named)}")
    if report.expectations is not None:
        for k in report.expectations.known:
            click.echo(printable(f"  EXPECTED  {k.name} ({k.signature}): {k.reason}"))
        for name in report.unexpected_passes:
            click.echo(
                printable(
                    f"  XPASS     {name}: passes, but the expectations list it; remove it "
                    f"from {expectations}"
                )
            )
        for name, why in report.expectations.not_run.items():
            click.echo(printable(f"  NOT RUN   {name}: {why}"))
    for o in report.outcomes:
        path = printable(str(o.trace.path))
        if o.status == PASS:
            click.echo(f"  PASS      {path} ({len(o.trace.trace.ops)} ops)")
        elif o.status == XFAIL:
            click.echo(printable(f"  XFAIL     {o.trace.path}: {o.reason}"))
        elif o.status == XPASS:
            click.echo(
                printable(
                    f"  XPASS     {o.trace.path}: passes, but the expectations list it "
                    f"({o.reason}); remove it from {expectations}"
                )
            )
        elif o.status == FAILED:
            click.echo(printable(f"  FAILED    {o.trace.path}: {o.failure}"))
        elif o.status == NOT_RUN:
            click.echo(printable(f"  NOT RUN   {o.trace.path}: {o.why_not_run}"))
        elif o.status in (DIVERGED, PROPERTY):
            assert o.run is not None
            head = "DIVERGED " if o.status == DIVERGED else "PROPERTY "
            click.echo(f"  {head} {path}")
            for line in run_lines(o.run):
                click.echo("    " + printable(line))
    summary = ", ".join(f"{v} {k}" for k, v in report.counts.items() if v)
    if report.unexpected_passes:
        summary += f"; {len(report.unexpected_passes)} listed trace(s) pass (XPASS)"
    click.echo(f"{len(report.outcomes)} traces: {summary}")
    if report.failure is not None:
        fail(f"could not restart the adapter: {report.failure}", exit_codes.ADAPTER_FAILURE)
    saver.exit(report.exit_code)
