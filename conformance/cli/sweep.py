"""``creditflow sweep``, ``creditflow report`` and ``creditflow replay-corpus``.

Importing this module is cheap: pyspark, pyarrow, duckdb and matplotlib are imported
inside the commands that need them, so ``creditflow --help`` and ``creditflow check``
start as fast as before.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from creditflow.adapters.corpus_replay import resolve
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import POSITIVE, Saver, console, fail, folder_option
from creditflow.conformance.runtime import signals
from creditflow.conformance.sweep.driver import failed_verdicts, plan_sweep, run_sweep
from creditflow.conformance.sweep.engine import EngineError
from creditflow.conformance.sweep.replay import (
    ReplayError,
    corpus_files,
    run_replay,
    summary_exit_code,
)
from creditflow.conformance.sweep.report import ReportError
from creditflow.conformance.sweep.report_files import write_report
from creditflow.conformance.sweep.runners import SparkRunner
from creditflow.conformance.sweep.spark import SparkSetupError, start_spark
from creditflow.conformance.sweep.store import StoreError, SweepStore
from creditflow.conformance.sweep.sweepfile import SweepFileError, load_sweep
from creditflow.model.network.graph import GraphError

MASTER_HELP = (
    "Spark master: local[*] (default: every core of this machine), local[N], "
    "spark://HOST:PORT, yarn, k8s://… Under spark-submit the submitted master is used."
)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@contextmanager
def _status(enabled: bool, text: str) -> Iterator[None]:
    if not enabled:
        yield
        return
    with _stderr_console().status(text):
        yield


@contextmanager
def _sweep_progress(enabled: bool, total: int) -> Iterator[Any]:
    """A progress bar on stderr: cases committed, verdicts so far, rate, time left."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[verdicts]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=_stderr_console(),
    ) as bar:
        task = bar.add_task("sweep", total=total, verdicts="", rate="")

        def update(state: Any) -> None:
            elapsed = time.monotonic() - state.started
            verdicts = " ".join(f"{v} {n}" for v, n in sorted(state.verdicts.items()))
            rate = f"{state.done / elapsed:,.1f} cases/s" if elapsed > 0 and state.done else ""
            bar.update(task, completed=state.done, verdicts=verdicts, rate=rate)

        yield update


def _plan_table(plan: Any) -> Any:
    from rich.table import Table

    table = Table(title=f"sweep {plan.sweep.name}: {len(plan.cases):,} cases")
    for column in ("family", "kind", "graphs", "cases", "to run"):
        table.add_column(column, justify="left" if column in ("family", "kind") else "right")
    kinds = {f.name: f.kind.kind for f in plan.sweep.families}
    for family, (graphs, cases, pending) in plan.per_family().items():
        table.add_row(family, kinds[family], f"{graphs:,}", f"{cases:,}", f"{pending:,}")
    return table


def _plan_document(plan: Any, out: Path) -> dict[str, Any]:
    """SW-DRY-RUN: the plan as one JSON object (spec/schemas/sweep-dry-run.json): per
    family its kind, graphs, cases and cases still to run, and the totals."""
    kinds = {f.name: f.kind.kind for f in plan.sweep.families}
    return {
        "sweep": plan.sweep.name,
        "out": str(out),
        "cases": len(plan.cases),
        "pending": len(plan.pending),
        "foreign": plan.foreign,
        "families": [
            {"family": family, "kind": kinds[family], "graphs": g, "cases": c, "pending": p}
            for family, (g, c, p) in plan.per_family().items()
        ],
    }


@click.command()
@click.argument("sweepfile")
@click.option("--master", help=MASTER_HELP)
@folder_option("--out", "Output folder (default: sweeps/NAME). A rerun resumes it.")
@click.option(
    "--batch-size",
    type=POSITIVE,
    help="Cases per Spark task (default: adaptive, ~4 s of work per task).",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Also rerun cases whose latest row is a timeout, error or crash.",
)
@click.option(
    "--retry-incomplete",
    is_flag=True,
    help="Also rerun cases whose search hit the state budget (and failed ones).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only show how many graphs and cases each family has and what is left "
    "(with --json: one JSON object, SW-DRY-RUN).",
)
@click.option(
    "--ship-code/--no-ship-code",
    default=None,
    help="Send the creditflow package to the executors (default: for non-local masters).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run's summary as JSON.")
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="MODULE[:FUNCTION]",
    help="Approve a checker plug-in the sweep file names (IN-PLUGIN); repeatable. "
    "A sweep file alone never loads code.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress display on stderr (default: when stderr is a terminal).",
)
def sweep(
    sweepfile: str,
    master: str | None,
    out: Path | None,
    batch_size: int | None,
    retry_failed: bool,
    retry_incomplete: bool,
    dry_run: bool,
    ship_code: bool | None,
    as_json: bool,
    plugins: tuple[str, ...],
    progress: bool | None,
) -> None:
    """Check every case of SWEEPFILE on Spark and write one Parquet row per case.

    SWEEPFILE is a TOML sweep file or the name of a shipped one (`smoke`, `example`,
    `amqp`): graph families (broker, random-dag, random-cyclic, layered, or amqp: AMQP 1.0
    topologies with their credit and session policies, SW-AMQP) x credit specs x
    semantics variants x publishes x checkers, deterministic from its seed. Rows go to
    OUT/results/*.parquet, counterexamples to OUT/traces/. Rerunning the command skips
    every case already written, so an interrupted sweep resumes where it stopped.

    \b
    Exit codes: 0 every case has a row (whatever its verdict), 2 bad sweep file or
    folder or no usable Spark, 3 some case failed (error or crash: see its row),
    130 interrupted (committed rows are kept).

    \b
    Examples:
      creditflow sweep smoke --out sweeps/smoke
      creditflow sweep my-sweep.toml --master spark://head:7077 --out /shared/sweeps/x
      creditflow report sweeps/smoke
    """

    try:
        spec = load_sweep(sweepfile, plugins=plugins)
    except SweepFileError as exc:
        fail(str(exc))
        return
    out = out or Path("sweeps") / spec.name
    store = SweepStore(out)
    retry: frozenset[str] = frozenset()
    if retry_failed or retry_incomplete:
        retry = failed_verdicts(retry_incomplete)
    try:
        if not dry_run:
            store.prepare(spec.text)
        plan = plan_sweep(spec, store, retry)
    except (StoreError, GraphError) as exc:
        fail(str(exc))
        return
    show = sys.stderr.isatty() if progress is None else progress
    if dry_run and as_json:
        click.echo(json.dumps(_plan_document(plan, out)))
        return
    if dry_run or not as_json:
        from rich.console import Console

        Console(stderr=not dry_run).print(_plan_table(plan))
    if dry_run:
        return
    if plan.foreign:
        click.echo(
            f"note: {plan.foreign:,} rows in {out} belong to cases not in this sweep file (kept)",
            err=True,
        )
    if not plan.pending:
        click.echo(f"nothing to do: all {len(plan.cases):,} cases have rows in {out}", err=True)
        if as_json:
            click.echo(json.dumps({"out": str(out), "cases": len(plan.cases), "pending": 0}))
        return

    try:
        with _status(show, f"starting Spark ({master or 'local[*]'})…"):
            handle = start_spark(
                master, app_name=f"creditflow sweep {spec.name}", ship_code=ship_code
            )
    except SparkSetupError as exc:
        fail(str(exc))
        return
    try:
        runner = SparkRunner(handle.sc)
        with _status(show, "starting the Python workers…"):
            runner.warm_up()
        with _sweep_progress(show, len(plan.pending)) as update:
            result = run_sweep(
                plan, store, runner, batch_size=batch_size, progress=update, master=handle.master
            )
    except EngineError as exc:
        fail(
            f"{exc}; rows committed so far are in {out} (rerun to resume)",
            exit_codes.ADAPTER_FAILURE,
        )
        return
    except KeyboardInterrupt as exc:  # SIG-POLICY: 130 for SIGINT, 143 for SIGTERM
        done = len(plan.pending) - len(plan_sweep(spec, store, retry).pending)
        click.echo(
            f"creditflow: interrupted by {signals.signal_name(exc)}: {done:,} of "
            f"{len(plan.pending):,} cases committed to {out}; run the same command "
            "again to resume",
            err=True,
        )
        sys.exit(signals.exit_code(exc))
    finally:
        handle.stop()
    summary = {
        "out": str(out),
        "run_id": result.run_id,
        "master": handle.master,
        "parallelism": result.parallelism,
        "cases": result.cases,
        "pending": result.pending,
        "written": result.written,
        "verdicts": dict(result.verdicts),
        "seconds": round(result.seconds, 3),
        "batches": len(result.batch_sizes),
        "max_batch": max(result.batch_sizes, default=0),
        "failed_jobs": result.stats.failed_jobs,
    }
    if as_json:
        click.echo(json.dumps(summary))
    else:
        verdicts = ", ".join(f"{v} {n:,}" for v, n in result.verdicts.most_common())
        click.echo(
            f"{result.written:,} cases in {result.seconds:,.1f} s on {handle.master} "
            f"({result.parallelism} slots, {len(result.batch_sizes)} tasks of up to "
            f"{max(result.batch_sizes, default=0)} cases): {verdicts}"
        )
        click.echo(f"rows: {out}/results   traces: {out}/traces")
        click.echo(f"next: creditflow report {out}")
    if result.verdicts.get("error") or result.verdicts.get("crashed"):
        sys.exit(exit_codes.ADAPTER_FAILURE)


@click.command()
@click.argument("sweep_dir", type=click.Path(file_okay=False, path_type=Path))
@folder_option("--out", "Where to write the report (default: SWEEP_DIR/report).")
@click.option(
    "--top",
    type=POSITIVE,
    default=20,
    show_default=True,
    help="How many slowest cases to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report's data as JSON.")
def report(sweep_dir: Path, out: Path | None, top: int, as_json: bool) -> None:
    """Summarise a sweep folder: deadlock rate by topology feature, the minimal safe
    credit per family, the slowest cases and the failures, with plots (PNG and SVG)
    and an HTML page (SWEEP_DIR/report/index.html). Queries run on DuckDB over the
    Parquet rows; only each case's latest attempt counts."""

    try:
        written = write_report(sweep_dir, out, top)
    except ReportError as exc:
        fail(str(exc))
        return
    data = written.data
    saver = Saver()
    saver.errors.extend(written.errors)
    if as_json:
        click.echo(written.body.rstrip("\n"))
    else:
        _print_report(data)
        click.echo(f"report: {written.html or 'NOT WRITTEN'}")
    saver.exit(exit_codes.OK)


def _print_report(data: Any) -> None:
    from rich.table import Table

    out = console()
    verdicts = ", ".join(f"{v} {n:,}" for v, n in data.verdicts.items())
    out.print(f"[bold]{data.cases:,} cases[/bold] in {data.sweep_dir}: {verdicts}")
    families = Table(title="families")
    for column in ("family", "kind", "graphs", "cases", "deadlock rate", "incomplete", "failed"):
        families.add_column(column, justify="left" if column in ("family", "kind") else "right")
    for f in data.families:
        rate = "" if f["deadlock_rate"] is None else f"{f['deadlock_rate']:.0%}"
        families.add_row(
            f["family"],
            f["kind"],
            str(f["graphs"]),
            str(f["cases"]),
            rate,
            str(f["incomplete"]),
            str(f["failed"]),
        )
    out.print(families)
    safe = Table(title="minimal safe credit (least I whose every {I,M} case holds)")
    for column in ("family", "variant", "publishes", "M", "min safe I", "safe above"):
        safe.add_column(column)
    for r in data.min_safe:
        safe.add_row(
            r["family"],
            r["variant"],
            str(r["publishes"]),
            str(r["more_after"]),
            "none" if r["min_safe_initial"] is None else str(r["min_safe_initial"]),
            "yes" if r["safe_above"] else "no",
        )
    out.print(safe)
    if data.claims:  # SW-AMQP-CLAIM: what the verdicts claim
        claims = Table(title="what the verdicts claim (SW-AMQP-CLAIM)")
        for column in ("family", "claim", "verdict", "cases"):
            claims.add_column(column, justify="right" if column == "cases" else "left")
        for r in data.claims:
            claims.add_row(r["family"], r["claim_scope"], r["verdict"], str(r["cases"]))
        out.print(claims)
    slow = Table(title="slowest cases")
    for column in ("graph", "credit", "variant", "publishes", "verdict", "states", "seconds"):
        slow.add_column(column)
    for r in data.slowest[:10]:
        slow.add_row(
            r["graph_id"],
            r["credit_label"],
            r["variant"],
            str(r["publishes"]),
            r["verdict"],
            f"{r['states'] or 0:,}",
            f"{r['seconds']:.3f}",
        )
    out.print(slow)


@click.command("replay-corpus")
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--replay",
    "replay_fn",
    default="network",
    show_default=True,
    help="The replay function: `network` (the model, "
    "creditflow.conformance.traces.network:replay_network_trace) or "
    "package.module:function.",
)
@click.option(
    "--glob",
    "pattern",
    default="**/*.itf.json",
    show_default=True,
    help="Which files under CORPUS are traces.",
)
@click.option("--master", help=MASTER_HELP)
@folder_option("--out", "Folder for the Parquet rows (one per trace).", Path("replay-results"))
@click.option("--batch-size", type=POSITIVE, help="Traces per Spark task.")
@click.option(
    "--ship-code/--no-ship-code",
    default=None,
    help="Send the creditflow package to the executors (default: non-local masters).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress display on stderr (default: when stderr is a terminal).",
)
def replay_corpus(
    corpus: Path,
    replay_fn: str,
    pattern: str,
    master: str | None,
    out: Path,
    batch_size: int | None,
    ship_code: bool | None,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Replay every trace under CORPUS with a replay function, partitioned across Spark
    executors, and write one Parquet row per trace (status ok, diverged, bad-trace,
    error or crashed) to OUT.

    The replay function is pluggable (SW-REPLAY): it takes a trace path, returns on
    success and raises on divergence. Today's default replays the explorer's network
    traces through the model; adapters for real implementations plug in the same way
    (`--replay package.module:function`). Executors read the traces by path: on a
    cluster, CORPUS must be on a shared file system.

    \b
    Exit codes: 0 every trace replayed, 1 some trace diverged, 2 some file is not a
    usable trace (and nothing diverged), 3 the replay function failed or crashed.
    """

    try:
        resolve(replay_fn)
        files = corpus_files(corpus, pattern)
    except ReplayError as exc:
        fail(str(exc))
        return
    show = sys.stderr.isatty() if progress is None else progress
    try:
        with _status(show, f"starting Spark ({master or 'local[*]'})…"):
            handle = start_spark(master, app_name="creditflow replay-corpus", ship_code=ship_code)
    except SparkSetupError as exc:
        fail(str(exc))
        return
    try:
        with _sweep_progress(show, len(files)) as update:
            result = run_replay(
                files,
                replay_fn,
                SparkRunner(handle.sc),
                out,
                batch_size=batch_size,
                progress=update,
                resolver=resolve,
            )
    except EngineError as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)
        return
    finally:
        handle.stop()
    summary = {
        "corpus": str(corpus),
        "replay": replay_fn,
        "traces": len(files),
        "statuses": dict(result.statuses),
        "rows": str(result.path),
        "seconds": round(result.seconds, 3),
    }
    if as_json:
        click.echo(json.dumps(summary))
    else:
        statuses = ", ".join(f"{s} {n:,}" for s, n in result.statuses.most_common())
        click.echo(
            f"{len(files):,} traces replayed with {replay_fn} in {result.seconds:.1f} s: {statuses}"
        )
        for row in result.problems[:20]:
            click.echo(f"  {row['status']}: {row['path']}: {row['message']}")
        click.echo(f"rows: {result.path}")
    sys.exit(summary_exit_code(result.statuses))
