"""Sweep throughput: Spark local[1] vs local[2] vs multiprocessing.Pool(2) (issue 7).

The same sweep (benchmarks/sweep10k.toml: more than 10,000 small cases) runs through
the same driver (planning, adaptive batches, waves, Parquet commits, traces) on each
engine, each in a fresh process, one after the other on this machine. Printed: the
engine's start-up, the sweep's wall time, cases per second, and the ratios. Every run
must produce the same verdict for every case (checked).

    .venv/bin/python benchmarks/sweep_bench.py [--rounds N] [--engines LIST] [--sweep FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ENGINES = ("serial", "spark-local[1]", "spark-local[2]", "pool(2)")


class SerialRunner:
    """In this process, one batch after another (one job at a time, although the
    engine keeps two in flight): the single-core baseline without any engine."""

    parallelism = 1

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def run(self, fn, batches, group):
        with self.lock:
            return [fn(b) for b in batches]

    def cancel_all(self) -> None:
        pass


def run_one(engine: str, sweep_file: str, out: str) -> dict:
    """Runs in a child process: start the engine, sweep, report figures as JSON."""
    from creditflow.conformance.sweep.driver import run_sweep

    plan, store = planned(sweep_file, out)
    started = time.perf_counter()
    handle = None
    if engine.startswith("spark"):
        from creditflow.conformance.sweep.runners import SparkRunner
        from creditflow.conformance.sweep.spark import start_spark

        handle = start_spark(engine.removeprefix("spark-"), app_name="creditflow bench")
        runner = SparkRunner(handle.sc)
        runner.warm_up()
    elif engine == "pool(2)":
        from creditflow.conformance.sweep.runners import PoolRunner

        runner = PoolRunner(2)
    else:
        runner = SerialRunner()
    start_seconds = time.perf_counter() - started
    run = run_sweep(plan, store, runner)
    if handle is not None:
        handle.stop()
    elif engine == "pool(2)":
        runner.close()
    return {
        "engine": engine,
        "start_seconds": start_seconds,
        "sweep_seconds": run.seconds,
        "cases": run.written,
        "tasks": len(run.batch_sizes),
        "max_batch": max(run.batch_sizes),
        "case_seconds": None,
        "verdicts": dict(run.verdicts),
    }


def planned(sweep_file: str, out: str) -> tuple[Any, Any]:
    """In a child: the sweep of ``sweep_file`` planned into a fresh store at ``out``; the
    plan and the store."""
    from creditflow.conformance.sweep.driver import plan_sweep
    from creditflow.conformance.sweep.store import SweepStore
    from creditflow.conformance.sweep.sweepfile import load_sweep

    spec = load_sweep(sweep_file)
    store = SweepStore(out)
    store.prepare(spec.text)
    return plan_sweep(spec, store), store


def read_results(out: str) -> tuple[dict[str, str], float]:
    """Every case's verdict in the store at ``out``, and the sum of the cases' own
    (wall-clock) seconds."""
    import pyarrow.parquet as pq

    table = pq.read_table(Path(out) / "results", columns=["case_id", "verdict", "seconds"])
    verdicts = dict(
        zip(table.column("case_id").to_pylist(), table.column("verdict").to_pylist(), strict=True)
    )
    return verdicts, float(sum(s for s in table.column("seconds").to_pylist() if s))


def child_result(
    script: str, sweep: str, child: str, out: str, what: str, env: dict[str, str] | None = None
) -> dict:
    """Run ``script --sweep SWEEP --child CHILD OUT`` and read its JSON figures; exits
    with ``what failed`` and its stderr's end when it fails."""
    proc = subprocess.run(
        [sys.executable, script, "--sweep", sweep, "--child", child, out],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        sys.exit(f"{what} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_engine(engine: str, sweep: str, tmp: str, label: str) -> tuple[dict, dict[str, str]]:
    out = str(Path(tmp) / label)
    load = os.getloadavg()[0]
    result = child_result(__file__, sweep, engine, out, engine)
    verdicts, result["case_seconds"] = read_results(out)
    result["load"] = (load, os.getloadavg()[0])
    shutil.rmtree(out)
    return result, verdicts


def median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def interleaved(
    names: list[str],
    rounds: int,
    run: Callable[[str, int], tuple[dict, dict[str, str]]],
    show: Callable[[str, dict], None],
) -> dict[str, list[dict]]:
    """Run ``run(name, round)`` for every name, ``rounds`` times interleaved (a shared
    machine's load varies); every run's verdicts must equal the first run's. Each
    result is shown as it comes; returns each name's results."""
    runs: dict[str, list[dict]] = {name: [] for name in names}
    reference: dict[str, str] | None = None
    for round_no in range(rounds):
        for name in names:
            result, verdicts = run(name, round_no)
            if reference is None:
                reference = verdicts
            elif verdicts != reference:
                sys.exit(f"{name} disagrees with the first run on some verdicts")
            runs[name].append(result)
            show(name, result)
    return runs


def sweep_parser(doc: str | None, child: str) -> argparse.ArgumentParser:
    """A sweep benchmark's parser: ``--sweep FILE`` (``sweep10k.toml``) and the hidden
    ``--child CHILD OUT`` its child processes run with."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--sweep", default=str(HERE / "sweep10k.toml"))
    parser.add_argument("--child", nargs=2, metavar=(child, "OUT"), help=argparse.SUPPRESS)
    return parser


def ran_as_child(args: argparse.Namespace, run_child: Callable[[str, str, str], dict]) -> bool:
    """With ``--child CHILD OUT``: print ``run_child(CHILD, sweep, OUT)`` as JSON; whether
    this process is such a child."""
    if args.child:
        print(json.dumps(run_child(args.child[0], args.sweep, args.child[1])))
    return bool(args.child)


def print_verdicts(runs: dict[str, list[dict]]) -> None:
    """The header line of the results: the cases and their verdicts (the same on every
    run, :func:`interleaved`)."""
    print_verdicts(runs)


def add_rounds_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--rounds N``: how many times every ``what`` runs, interleaved."""
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help=f"run every {what} this many times, interleaved; medians are "
        "compared (a shared machine's load varies)",
    )


def chosen(listed: str, known: Sequence[str], what: str) -> list[str]:
    """The comma-separated names of ``listed``; exits naming those not in ``known``."""
    names = [n for n in listed.split(",") if n]
    unknown = set(names) - set(known)
    if unknown:
        sys.exit(f"unknown {what}: {', '.join(sorted(unknown))}")
    return names


def machine_line() -> str:
    """The start of a benchmark's header: ``# Python release, CPUs, date and time``."""
    return (
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}"
    )


def main() -> None:
    parser = sweep_parser(__doc__, "ENGINE")
    parser.add_argument(
        "--engines", default=",".join(ENGINES), help=f"comma-separated, from {', '.join(ENGINES)}"
    )
    add_rounds_option(parser, "engine")
    args = parser.parse_args()
    if ran_as_child(args, run_one):
        return
    engines = chosen(args.engines, ENGINES, "engines")
    print(
        f"{machine_line()}; {args.rounds} round(s); load average (1 min) shown before/after "
        "each run"
    )

    def show(engine: str, result: dict) -> None:
        rate = result["cases"] / result["sweep_seconds"]
        print(
            f"{engine:15} start {result['start_seconds']:6.2f} s   sweep "
            f"{result['sweep_seconds']:7.2f} s   {rate:7.1f} cases/s   "
            f"{result['tasks']:4} tasks (<= {result['max_batch']} cases)   "
            f"case time {result['case_seconds']:6.1f} s   load "
            f"{result['load'][0]:.2f}/{result['load'][1]:.2f}",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="creditflow-bench-") as tmp:

        def run(engine: str, round_no: int) -> tuple[dict, dict[str, str]]:
            label = re.sub(r"[\[\]()]", "", f"{round_no}-{engine}")
            return run_engine(engine, args.sweep, tmp, label)

        runs = interleaved(engines, args.rounds, run, show)
    some = next(iter(runs.values()))[0]
    print(
        f"# {some['cases']:,} cases, identical verdicts on every run: "
        f"{dict(sorted(some['verdicts'].items()))}"
    )
    sweep_s = {e: median([r["sweep_seconds"] for r in rs]) for e, rs in runs.items()}
    total_s = {
        e: median([r["sweep_seconds"] + r["start_seconds"] for r in rs]) for e, rs in runs.items()
    }

    def ratio(a: str, b: str, table: dict[str, float]) -> str:
        return f"{table[a] / table[b]:.2f}x" if a in table and b in table else "n/a"

    print("# medians" if args.rounds > 1 else "# ratios")
    one, two = "spark-local[1]", "spark-local[2]"
    print(
        f"speed-up local[1] -> local[2]:       {ratio(one, two, sweep_s)}"
        f"   (with start-up: {ratio(one, two, total_s)})"
    )
    print(
        f"Pool(2) time / Spark local[2] time:  {ratio('pool(2)', 'spark-local[2]', sweep_s)}"
        f"   (with start-up: {ratio('pool(2)', 'spark-local[2]', total_s)})"
    )
    print(f"serial time / Spark local[1] time:   {ratio('serial', 'spark-local[1]', sweep_s)}")
    print(f"serial time / Pool(2) time:          {ratio('serial', 'pool(2)', sweep_s)}")


if __name__ == "__main__":
    main()
