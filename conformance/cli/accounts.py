"""``creditflow accounts …`` and ``creditflow alarms …``: the AC and AL models from the
command line. Exit codes as every command (:mod:`creditflow.conformance.exit_codes`)."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import click

from creditflow.adapters.rabbitmq.alarms import broker_alarm_run, model_alarm_run
from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import (
    COUNT,
    DEFAULT_FOLDER,
    OUTPUT_FILE,
    POSITIVE,
    SEED,
    Saver,
    TimeoutParam,
    console,
    fail,
    folder_option,
    output_path,
    shown,
)
from creditflow.conformance.explore.check import exit_code
from creditflow.conformance.explore.explorer import DEFAULT_MAX_STATES, explore
from creditflow.conformance.explore.results import AccountsCheckResult, WrittenTrace
from creditflow.conformance.families.accounts.compare import (
    cycle_comparison,
    slow_consumer_comparison,
)
from creditflow.conformance.families.accounts.conform import conform
from creditflow.conformance.families.accounts.explore import (
    AccountsOptions,
    accounts_summary,
    check_actor_graph,
)
from creditflow.conformance.families.accounts.protocol import (
    AdapterError,
    ReferenceAccountsAdapter,
    SubprocessAccountsAdapter,
)
from creditflow.conformance.families.alarms.explore import alarms_summary
from creditflow.conformance.inputs.actor_graphs import (
    ActorGraphFileError,
    actor_graph_to_node_link,
    actor_preset_names,
    load_actor_graph,
)
from creditflow.conformance.inputs.alarm_timelines import (
    TimelineError,
    TimelineStuck,
    load_timeline,
    run_timeline,
    state_view,
    timeline_names,
    timeline_row,
)
from creditflow.conformance.outputs import derived_path
from creditflow.conformance.outputs.streams import printable
from creditflow.conformance.runtime import signals
from creditflow.conformance.traces.models import write_model_trace
from creditflow.model.accounts.graph import ActorGraphError, seed_example
from creditflow.model.accounts.rules import AccountsModel
from creditflow.model.alarms.rules import AlarmConfig, ConnectionSpec
from creditflow.model.alarms.system import CheckedAlarms


@click.group()
def accounts() -> None:
    """Syndicate-style accounts (spec/accounts.md): explore actor graphs, compare with
    credit flow, replay the worked example."""


@accounts.command("presets")
def accounts_presets() -> None:
    """List the preset actor graphs."""
    for name in actor_preset_names():
        graph = load_actor_graph(name)
        click.echo(f"{name:16} {graph.description}")


@accounts.command("check")
@click.argument("graph")
@click.option("--limit", type=COUNT, help="Override the global limit.")
@click.option("--reads", type=COUNT, help="Set every reader's supply.")
@click.option(
    "--naive-bound",
    is_flag=True,
    help="Also check the notes' bound limit + one read x fan-out (AC-OVERSHOOT-NAIVE).",
)
@click.option("--max-states", type=POSITIVE, default=DEFAULT_MAX_STATES, show_default=True)
@click.option("--no-symmetry", is_flag=True, help="Do not merge interchangeable actors.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--trace-out",
    type=OUTPUT_FILE,
    help="Where to write the counterexample (ITF): a file, or a folder (DIR/ or an "
    "existing folder) to hold GRAPH.accounts.itf.json. Default: "
    "counterexamples/GRAPH.accounts.itf.json",
)
def accounts_check(
    graph: str,
    limit: int | None,
    reads: int | None,
    naive_bound: bool,
    max_states: int,
    no_symmetry: bool,
    as_json: bool,
    trace_out: Path | None,
) -> None:
    """Explore every interleaving of the actor graph GRAPH (a file or a preset) and check
    the AC properties, deadlock freedom, and each account's largest debt against its
    overshoot bound.

    \b
    Examples:
      creditflow accounts check seed --naive-bound
      creditflow accounts check slow-consumer --json
    """
    try:
        g = load_actor_graph(graph)
        options = AccountsOptions(
            limit=limit,
            reads=reads,
            naive_bound=naive_bound,
            max_states=max_states,
            symmetry=not no_symmetry,
        )
        system, result = check_actor_graph(g, options)
    except (ActorGraphFileError, ActorGraphError) as exc:
        fail(str(exc))
        return
    report = replace(accounts_summary(system, result), source=graph)
    primary = result.primary()
    saver = Saver()
    if primary is not None:
        path = output_path(trace_out, DEFAULT_FOLDER, system.graph.name, ".accounts.itf.json")
        saved = saver.attempt(
            write_model_trace,
            system,
            primary,
            path,
            "accounts",
            {"graph": actor_graph_to_node_link(system.graph)},
            graph,
        )
        report = replace(report, files=WrittenTrace(trace=str(saved) if saved else None))
    if as_json:
        click.echo(json.dumps(saver.annotate(report.to_json())))
    else:
        _print_accounts(report, primary)
        saver.show_unsaved()
    saver.exit(exit_code(result))


def _print_accounts(report: AccountsCheckResult, primary: Any) -> None:
    for pid, holds in report.properties.items():
        verdict = {True: "holds", False: "VIOLATED", None: "undecided"}[holds]
        length = report.counterexample_lengths.get(pid)
        click.echo(f"  {pid:26} {verdict}" + (f"  (shortest: {length} steps)" if length else ""))
    for name, a in report.accounts.items():
        tight = {True: "tight", False: "not reached", None: "undecided"}[a.tight]
        click.echo(
            f"  account {printable(name)}: max debt {a.max_debt}, bound {a.bound} ({tight}), "
            f"limit {report.limit}, naive bound {a.naive_bound}"
        )
    click.echo(
        f"{report.states:,} states in {report.seconds:.2f} s"
        + ("" if report.complete else " (incomplete: --max-states reached)")
    )
    if primary is not None:
        who = f" — blocked forever: {printable(', '.join(primary.processes))}"
        who = who if primary.processes else ""
        click.echo(f"{primary.property_id} ({primary.kind}) in {primary.length} steps{who}")
        if primary.detail:
            click.echo(printable(primary.detail))
        click.echo(f"trace: {report.files.trace if report.files else None}")


@accounts.command("compare")
@click.option("--json", "as_json", is_flag=True)
def accounts_compare(as_json: bool) -> None:
    """Credit flow vs accounts on two topologies (spec/credit-vs-accounts.md): a
    request/reply cycle (CMP-CYCLE) and a stalled consumer (CMP-SLOW-CONSUMER)."""

    comparisons = (cycle_comparison(), slow_consumer_comparison())
    if as_json:
        click.echo(json.dumps([row for c in comparisons for row in c.to_json()]))
        return
    for c in comparisons:
        for v in (c.credit, c.accounts):
            verdict = (
                f"{v.deadlock} deadlock in {v.shortest} steps "
                f"(blocked forever: {', '.join(v.blocked_forever)})"
                if v.deadlock
                else "no deadlock"
            )
            ends = " | ".join(", ".join(s) or "nobody" for s in v.ends())
            figures = " ".join(f"{k}={n}" for k, n in v.figures.items())
            click.echo(
                f"{c.rule:18} {v.mechanism:12} {verdict}; blocked at the end: {ends}; "
                f"{v.states} states {figures}".rstrip()
            )


@accounts.command("example")
def accounts_example() -> None:
    """Replay the flow-control note's worked example (AC-EXAMPLE) step by step."""

    model = AccountsModel(seed_example(fanout=9, limit=5, reads=2))
    state = model.initial()
    steps = [("read", "A"), ("turn", "D"), ("repay", "D"), ("wait", "A")]
    steps += [(k, f"O{i}") for i in range(1, 5) for k in ("turn", "repay")]
    steps += [("read", "A")]
    click.echo("A -> D -> O1..O9, limit 5")
    for kind, actor in steps:
        outcome = model.apply(state, model.encode(kind, actor))
        state = outcome.state
        said = ", ".join(
            f"{o.kind} {o.amount}" if o.kind in ("borrow", "repay") else o.kind
            for o in outcome.observations
        )
        click.echo(f"  {kind}({actor}):".ljust(16) + f"debt {state.debt[0]:>2}   {said}")


# -- alarms ----------------------------------------------------------------------------------


@click.group()
def alarms() -> None:
    """Memory and disk alarms (spec/alarms.md): explore the model, or check a real
    RabbitMQ broker against it."""


@alarms.command("check")
@click.option(
    "--profile", type=click.Choice(["3.10.8", "2008"]), default="3.10.8", show_default=True
)
@click.option("--nodes", type=click.IntRange(1, 3), default=1, show_default=True)
@click.option("--publishers", type=click.IntRange(0, 3), default=1, show_default=True)
@click.option("--consumers", type=click.IntRange(0, 3), default=1, show_default=True)
@click.option("--publishes", type=click.IntRange(0, 6), default=3, show_default=True)
@click.option("--disk", is_flag=True, help="The environment may raise disk alarms.")
@click.option("--node-down", is_flag=True, help="Nodes may go down.")
@click.option("--json", "as_json", is_flag=True)
def alarms_check(
    profile: str,
    nodes: int,
    publishers: int,
    consumers: int,
    publishes: int,
    disk: bool,
    node_down: bool,
    as_json: bool,
) -> None:
    """Explore every interleaving of alarms, publishes and deliveries and check the AL
    properties. Publishers and consumers are spread over the nodes."""

    conns = [
        ConnectionSpec(f"pub{i}", node=i % nodes, publishes=publishes) for i in range(publishers)
    ]
    conns += [ConnectionSpec(f"con{i}", node=i % nodes, consumes=True) for i in range(consumers)]
    if not conns:
        fail("give at least one publisher or consumer")
    config = AlarmConfig(
        tuple(conns),
        nodes=tuple(f"rabbit@n{i}" for i in range(nodes)),
        disk=disk,
        node_down=node_down,
        profile=profile,
    )
    system = CheckedAlarms(config)
    result = explore(system)
    primary = result.primary()
    report = alarms_summary(profile, result)
    saver = Saver()
    if primary is not None:
        path = derived_path(DEFAULT_FOLDER, f"alarms-{profile}", ".itf.json")
        saved = saver.attempt(
            write_model_trace, system, primary, path, "alarms", {"config": repr(config)}, "alarms"
        )
        report = replace(report, files=WrittenTrace(trace=str(saved) if saved else None))
    if as_json:
        click.echo(json.dumps(saver.annotate(report.to_json())))
    else:
        words = {True: "holds", False: "VIOLATED", None: "undecided"}
        for pid, holds in report.properties.items():
            click.echo(f"  {pid:22} {words[holds]}")
        click.echo(f"{result.n_states:,} states in {result.seconds:.2f} s")
        if primary is not None:
            trace = report.files.trace if report.files else None
            click.echo(f"{primary.property_id} ({primary.kind}); trace: {trace or 'NOT WRITTEN'}")
        saver.show_unsaved()
    saver.exit(exit_code(result))


@alarms.command("run")
@click.argument("timeline", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="JSON Lines: a header, one line per step, a summary."
)
def alarms_run(timeline: str | None, as_json: bool) -> None:
    """Run a TIMELINE (a JSON file of publish / alarm / consume / clear steps, or a
    shipped one by name) through the alarm model and show the state after each step:
    each connection's reported state, the frames its client received, messages
    consumed and queued (AL-TIMELINE). Without TIMELINE, list the shipped ones.
    Exit 0; 12 if an AL property is violated; 2 for a bad file.

    \b
    Examples:
      creditflow alarms run memory-alarm
      creditflow alarms run my-broker-incident.json --json
    """
    if timeline is None:
        for name in timeline_names():
            click.echo(f"{name:16} {load_timeline(name).description[:70]}")
        return
    try:
        loaded = load_timeline(timeline)
        results = list(run_timeline(loaded))
    except (TimelineError, TimelineStuck) as exc:
        fail(str(exc))
        return
    violations = [f"step {r.index}: {pid}" for r in results for pid in r.violations]
    code = exit_codes.VIOLATION if violations else exit_codes.OK
    if as_json:
        click.echo(
            json.dumps(
                {
                    "timeline": loaded.name,
                    "source": loaded.source,
                    "description": loaded.description,
                    "profile": loaded.config.profile,
                    "steps": len(results),
                }
            )
        )
        for r in results:
            click.echo(json.dumps(timeline_row(loaded, r).to_json()))
        click.echo(json.dumps({"end": True, "steps": len(results), "violations": violations}))
        sys.exit(code)
    from rich.table import Table

    names = [c.name for c in loaded.config.connections]
    table = Table(
        title=f"creditflow alarms run {shown(loaded.name)} (profile {loaded.config.profile})"
    )
    for column in ("#", "step", "alarms", *map(shown, names), "frames", "consumed", "queued"):
        table.add_column(column, justify="left" if column in ("step", "frames") else "right")
    for r in results:
        view = state_view(loaded, r.state)
        frames = ", ".join(
            f"{shown(n.connection)}: {n.method.removeprefix('connection.')}"
            + (f" ({n.reason})" if n.reason else "")
            for n in r.notices
        )
        table.add_row(
            str(r.index),
            shown(r.step.describe()),
            " ".join(view.alarms) or "-",
            *(view.connections[n] for n in names),
            frames,
            str(sum(view.consumed.values())),
            str(view.queued),
        )
    out = console()
    out.print(table)
    for line in violations:
        out.print(f"[red]{shown(line)}")
    sys.exit(code)


@alarms.command("broker")
@click.option(
    "--before",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="Messages published before the alarm.",
)
@click.option(
    "--after",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="Messages published while the alarm is on.",
)
@click.option(
    "--empty-body",
    is_flag=True,
    help="Publish with empty bodies (one publish gets through per alarm).",
)
@folder_option(
    "--workdir", "Where the private broker keeps its state (default: a temporary folder)."
)
@click.option("--json", "as_json", is_flag=True)
def alarms_broker(
    before: int, after: int, empty_body: bool, workdir: Path | None, as_json: bool
) -> None:
    """Start Debian's RabbitMQ privately on loopback, run the memory-alarm scenario
    (AL-BROKER) with a pika publisher and consumer, and compare every checkpoint with the
    model. Exit 0 if they agree, 1 if they differ, 3 if the broker fails."""
    import tempfile

    expected, _ = model_alarm_run(before, after, empty_body)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="creditflow-broker-") as tmp,
            PrivateBroker(workdir or Path(tmp)) as broker,
        ):
            actual = broker_alarm_run(
                broker, before, after, expected.checkpoints, empty_body=empty_body
            )
    except BrokerError as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)
        return
    rows: list[dict[str, Any]] = []
    for want, got in zip(expected.checkpoints, actual.checkpoints, strict=True):
        rows.append(
            {
                "checkpoint": want.name,
                "agrees": want == got,
                "model": asdict(want),
                "broker": asdict(got),
            }
        )
    lossless = actual.bodies == [str(i).encode() for i in range(before + after)]
    ok = all(r["agrees"] for r in rows) and lossless
    if as_json:
        click.echo(json.dumps({"agrees": ok, "nothing_lost": lossless, "checkpoints": rows}))
    else:
        for r in rows:
            b = r["broker"]
            click.echo(
                f"  {r['checkpoint']:22} {'agrees' if r['agrees'] else 'DIFFERS'}  "
                f"states={b['states']} frames={b['notices']} consumed={b['consumed']} "
                f"queued={b['queued']}"
            )
            if not r["agrees"]:
                click.echo(f"  {'':22} model: {r['model']}")
        click.echo("nothing lost" if lossless else "MESSAGES LOST OR REORDERED")
    sys.exit(exit_codes.OK if ok else exit_codes.DIVERGENCE)


@accounts.command("conform")
@click.option("--adapter", type=click.Choice(["reference"]), help="A built-in adapter.")
@click.option(
    "--adapter-cmd",
    help="Command of an implementation speaking the accounts "
    "family of the adapter protocol (JSON Lines on stdin/stdout).",
)
@click.option(
    "--graph",
    "graph_name",
    default="crash-timer",
    show_default=True,
    help="Actor graph (file or preset) the runs are made on.",
)
@click.option("--runs", type=POSITIVE, default=100, show_default=True)
@click.option("--max-steps", type=POSITIVE, default=60, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option(
    "--timeout",
    type=TimeoutParam(),
    default=10.0,
    show_default=True,
    help="Seconds to wait for each answer.",
)
@click.option(
    "--trace-out",
    type=OUTPUT_FILE,
    help="Where to write a divergence (ITF): a file, or a folder (DIR/ or an existing "
    "folder) to hold GRAPH.accounts-divergence.itf.json. Default: "
    "counterexamples/GRAPH.accounts-divergence.itf.json",
)
@click.option("--json", "as_json", is_flag=True)
def accounts_conform(
    adapter: str | None,
    adapter_cmd: str | None,
    graph_name: str,
    runs: int,
    max_steps: int,
    seed: int,
    timeout: float,
    trace_out: Path | None,
    as_json: bool,
) -> None:
    """Check an accounts implementation against the model (spec/adapter-protocol-accounts.md):
    seeded random runs on GRAPH, every step compared; the first divergence is shrunk and
    written as a trace. Exit 0 conformant, 1 divergence, 3 adapter failure, 2 usage.

    \b
    Example:
      creditflow accounts conform --adapter-cmd "python -m creditflow.adapters.reference.accounts"
    """

    if (adapter is None) == (adapter_cmd is None):
        fail("give exactly one of --adapter and --adapter-cmd")
    if adapter_cmd is not None:
        try:
            shlex.split(adapter_cmd)
        except ValueError as exc:  # an unbalanced quote: a usage error, exit 2
            fail(f"--adapter-cmd: {exc}")
    signals.note(seed=seed)
    try:
        g = load_actor_graph(graph_name)
    except (ActorGraphFileError, ActorGraphError) as exc:
        fail(str(exc))
        return
    path = output_path(trace_out, DEFAULT_FOLDER, g.name, ".accounts-divergence.itf.json")
    impl: Any = None
    try:
        impl = (
            ReferenceAccountsAdapter()
            if adapter_cmd is None
            else SubprocessAccountsAdapter(adapter_cmd, timeout=timeout)
        )
        hello = impl.hello()
        result = conform(impl, g, runs=runs, max_steps=max_steps, seed=seed, trace_out=path)
    except AdapterError as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)
        return
    finally:
        if impl is not None:
            impl.close()
    result = replace(result, adapter=hello.get("name"))
    d = result.divergence
    saver = Saver()
    if result.write_error is not None:
        saver.errors.append(result.write_error)
    if as_json:
        click.echo(json.dumps(saver.annotate(result.to_json())))
    elif d is None:
        click.echo(
            f"conformant: {result.runs} runs, {result.steps} steps on {g.name} "
            f"in {result.seconds:.2f} s"
        )
    else:
        click.echo(
            f"DIVERGENCE after {d.index + 1} steps (shrunk from {result.shrunk_from}): "
            f"{d.what} at {d.request}"
        )
        click.echo(f"  expected: {d.expected['observations']}")
        click.echo(f"  actual:   {d.actual['observations']}")
        click.echo(f"trace: {result.trace or 'NOT WRITTEN'}")
        saver.show_unsaved()
    saver.exit(exit_codes.OK if d is None else exit_codes.DIVERGENCE)
