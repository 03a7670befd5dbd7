"""``creditflow observe``: look at a running RabbitMQ node's credit flow (spec/observe.md).

``snapshot`` (a consistent cut: who blocks whom, conservation per pair), ``record`` (a
``credit_flow`` trace between two cuts), ``validate`` (the trace against CF and NET),
``workload`` (publishers that make flow happen on the private broker).
Without ``--node`` a private broker from Debian's package is started (OBS-CONNECT).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import networkx as nx

from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.adapters.rabbitmq.observe import (
    NodeTarget,
    ObserveAgent,
    ObserveError,
    WorkloadResult,
    run_workload,
)
from creditflow.adapters.rabbitmq.observe import record as do_record
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import BoundedParam, Saver, fail
from creditflow.conformance.inputs import bounds, itf
from creditflow.conformance.observe.snapshot import analyse, to_dot, to_graph
from creditflow.conformance.observe.validate import TraceError, load_trace, shrunk_itf, validate
from creditflow.conformance.outputs import OutputError, write_atomic
from creditflow.conformance.traces.pictures import write_picture

_node = click.option(
    "--node",
    default=None,
    metavar="NAME@HOST",
    help="the RabbitMQ node (default: start a private broker)",
)
_cookie = click.option(
    "--cookie-file",
    default=None,
    type=click.Path(dir_okay=False),
    help="Erlang cookie file (default ~/.erlang.cookie)",
)
#: OBS-EPMD-ENV: like every Erlang tool, the port of epmd is ERL_EPMD_PORT unless given
_epmd = click.option(
    "--epmd-port",
    default=None,
    envvar="ERL_EPMD_PORT",
    type=BoundedParam(bounds.PORT),
    help="epmd port (default: $ERL_EPMD_PORT, else 4369)",
)


@contextlib.contextmanager
def _connected(
    node: str | None, cookie_file: str | None, epmd_port: int | None
) -> Iterator[tuple[Any, Any]]:
    """An agent on the node (and the private broker when no node is given); any
    connection failure is one line and exit 3 (OBS-CONNECT)."""

    broker = None
    try:
        with contextlib.ExitStack() as stack:
            if node is None:
                work = stack.enter_context(tempfile.TemporaryDirectory(prefix="cf-broker-"))
                broker = stack.enter_context(PrivateBroker(Path(work)))
                target = NodeTarget.of_broker(broker)
            else:
                target = NodeTarget.from_options(node, cookie_file, epmd_port)
            agent = stack.enter_context(ObserveAgent(target))
            yield agent, broker
    except (ObserveError, BrokerError) as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)


@click.group()
def observe() -> None:
    """Observe a running RabbitMQ node: snapshot, record, validate, workload."""


def _report_snapshot(
    doc: dict[str, Any], as_json: bool, dot_out: str | None, graph_out: str | None
) -> int:
    a = analyse(doc)
    saver = Saver()  # OUT-FAILURE: reported after the analysis
    if dot_out:
        saver.attempt(write_picture, to_dot(a), dot_out)
    if graph_out:
        saver.attempt(
            write_atomic,
            graph_out,
            json.dumps(nx.node_link_data(to_graph(a), edges="edges"), indent=1, default=str),
        )
    if as_json:
        click.echo(json.dumps(a.to_json(), indent=1))
    else:
        click.echo(
            f"{a.info.get('node')} (RabbitMQ {a.info.get('rabbit_version')}): "
            f"{len(a.processes)} credit-flow processes, {len(a.edges)} pairs, "
            f"paused {a.pause_ms:.1f} ms"
        )
        blocked = [p for p in a.processes.values() if p.blocked]
        click.echo(f"blocked: {len(blocked)}")
        for c in a.chains:
            click.echo(f"  {c['text']}")
        bad = sum(1 for e in a.edges if e.holds is False)
        verdict = "holds on every pair" if not bad else f"{bad} pairs violate it"
        click.echo(f"PROP-CONSERVATION: {verdict}")
        for v in a.violations:
            click.echo(f"  {v['rule']}: {v.get('edge') or v.get('process')}: {v['detail']}")
    code = exit_codes.VIOLATION if a.violations else exit_codes.OK
    if saver.errors:
        saver.exit(code)
    return code


@observe.command()
@_node
@_cookie
@_epmd
@click.option("--json", "as_json", is_flag=True, help="the whole analysis as JSON")
@click.option("--dot-out", default=None, help="the picture of who blocks whom (DOT + SVG)")
@click.option("--graph-out", default=None, help="the live credit graph (node-link JSON)")
@click.option(
    "--max-pause-ms",
    type=BoundedParam(bounds.MILLISECONDS),
    default=5000,
    show_default=True,
    help="the watchdog resumes everything after this long",
)
@click.option(
    "--workload",
    "publishes",
    default=0,
    type=BoundedParam(bounds.PUBLISHES),
    help="on the private broker, run the workload with this many publishes and take the "
    "cut during its stall (OBS-SNAPSHOT-WORKLOAD; default: the node as it is)",
)
def snapshot(
    node: str | None,
    cookie_file: str | None,
    epmd_port: int | None,
    as_json: bool,
    dot_out: str | None,
    graph_out: str | None,
    max_pause_ms: int,
    publishes: int,
) -> None:
    """One consistent cut of every credit-flow process; checks and blocked chains
    (exit 12 if a check fails). A private broker is idle: --workload N makes flow happen
    there first, so the cut has pairs to check (--graph-out, then `creditflow check`)."""

    if publishes and node is not None:
        fail("--workload needs the private broker (no --node)", exit_codes.USAGE)
    with _connected(node, cookie_file, epmd_port) as (agent, broker):
        try:
            if publishes:
                # OBS-SNAPSHOT-WORKLOAD: the OBS-WORKLOAD run, its cut taken during the stall
                w = run_workload(agent, broker.connection_parameters(), publishes)
                if w.snapshot_during is None:
                    fail("the workload took no snapshot", exit_codes.ADAPTER_FAILURE)
                doc = w.snapshot_during
                lost = sum(w.published) - sum(w.confirmed)
                click.echo(
                    f"workload: {sum(w.published)} publishes, {lost} unconfirmed, "
                    f"{len(w.errors)} errors; the cut was taken during the stall",
                    err=True,
                )
            else:
                doc = agent.snapshot(max_pause_ms)
        except ObserveError as exc:
            fail(str(exc), exit_codes.ADAPTER_FAILURE)
    raise SystemExit(_report_snapshot(doc, as_json, dot_out, graph_out))


@observe.command()
@_node
@_cookie
@_epmd
@click.option(
    "--seconds",
    type=BoundedParam(bounds.SECONDS),
    default=10.0,
    show_default=True,
    help="how long to record",
)
@click.option("--out", required=True, help="the trace file to write")
@click.option(
    "--workload",
    "publishes",
    default=0,
    type=BoundedParam(bounds.PUBLISHES),
    help="run the workload with this many publishes while recording "
    "(default: just record for --seconds)",
)
def record(
    node: str | None,
    cookie_file: str | None,
    epmd_port: int | None,
    seconds: float,
    out: str,
    publishes: int,
) -> None:
    """Record the credit_flow calls and bump_credit sends between two cuts."""

    with _connected(node, cookie_file, epmd_port) as (agent, broker):
        during = None
        if publishes:
            if broker is None:
                fail("--workload needs the private broker (no --node)", exit_codes.USAGE)
            params = broker.connection_parameters()

            def during() -> WorkloadResult:
                return run_workload(agent, params, publishes)

        try:
            summary = do_record(agent, out, seconds=0 if publishes else seconds, during=during)
        except ObserveError as exc:
            fail(str(exc), exit_codes.ADAPTER_FAILURE)
        except OutputError as exc:  # OUT-FAILURE: the recording could not be saved
            fail(str(exc), exit_codes.OUTPUT_FAILED)
    click.echo(json.dumps(summary.to_json()))


@observe.command(name="validate")
@click.argument("trace")
@click.option(
    "--itf-out",
    default=None,
    help="where the divergence's ITF trace goes (default TRACE.divergence.itf.json)",
)
@click.option("--json", "as_json", is_flag=True)
def validate_cmd(trace: str, itf_out: str | None, as_json: bool) -> None:
    """Check a recorded trace against CF and NET (exit 1 at the first divergence)."""
    try:
        doc = load_trace(trace)
        result = validate(doc)
    except TraceError as exc:
        fail(str(exc), exit_codes.USAGE)
    saver = Saver()
    if result.divergence is not None:
        path = itf_out or f"{trace}.divergence.itf.json"
        saved = saver.attempt(itf.write_document, shrunk_itf(doc, result.divergence), path)
        d = result.divergence
        # with --json, stdout holds the JSON document alone (OUT-JSON-SCHEMA)
        click.echo(f"divergence at event {d.index}: {d.rule}: {d.detail}", err=as_json)
        click.echo(f"trace: {saved or 'NOT WRITTEN'}", err=as_json)
    if as_json:
        click.echo(json.dumps(result.to_json()))
    elif result.ok:
        click.echo(
            f"valid: {result.events} events of {result.processes} processes are a run "
            f"of CF and NET; PROP-CONSERVATION held after every event "
            f"({result.events / max(result.seconds, 1e-9):,.0f} events/s)"
        )
    if not as_json:
        saver.show_unsaved()
    saver.exit(exit_codes.OK if result.ok else exit_codes.DIVERGENCE)


@observe.command()
@click.option("--publishes", type=BoundedParam(bounds.PUBLISHES), default=10_000, show_default=True)
@click.option("--dot-out", default=None, help="picture of the snapshot taken during the stall")
@click.option("--out", default=None, help="also record a trace of the whole run to this file")
def workload(publishes: int, dot_out: str | None, out: str | None) -> None:
    """Make flow happen on a private broker: confirmed publishers, a suspended queue, a
    slow consumer; a snapshot during the stall; counts at the end (OBS-WORKLOAD)."""

    with _connected(None, None, None) as (agent, broker):
        params = broker.connection_parameters()
        try:
            if out:
                box: dict[str, WorkloadResult] = {}
                do_record(
                    agent,
                    out,
                    during=lambda: box.setdefault("w", run_workload(agent, params, publishes)),
                )
                w = box["w"]
            else:
                w = run_workload(agent, params, publishes)
        except ObserveError as exc:
            fail(str(exc), exit_codes.ADAPTER_FAILURE)
        except OutputError as exc:  # OUT-FAILURE
            fail(str(exc), exit_codes.OUTPUT_FAILED)
    click.echo(json.dumps(w.to_json()))
    lost = sum(w.published) - sum(w.confirmed)
    snap = w.snapshot_during  # taken during the stall (run_workload's default)
    code = _report_snapshot(snap, False, dot_out, None) if snap is not None else exit_codes.OK
    if lost or w.errors:
        fail(f"{lost} publishes unconfirmed; errors: {list(w.errors)}", exit_codes.VIOLATION)
    raise SystemExit(code)
