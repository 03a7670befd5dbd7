"""Sweep throughput on a real standalone Spark cluster: one worker vs two (issue 13).

The same sweep (benchmarks/sweep10k.toml by default) runs through the same driver as
`creditflow sweep` (planning, adaptive batches, waves, Parquet commits, traces; the
package shipped to the executors as a zip) on

* a standalone master with **one** worker of one core,
* a standalone master with **two** workers of one core each,
* Spark ``local[2]`` for reference,

each cluster started fresh on loopback by ``StandaloneSparkCluster`` (SW-CLUSTER) and
stopped after its run, each driver in a fresh process, the runs interleaved when there
are several rounds. Printed per run: the cluster's start-up, the driver's start-up
(session + one warm-up task per slot), the sweep's wall time, cases/s, and how many
tasks each worker's executor finished, the cases in flight on average (the sum of the
cases' own seconds over the sweep's wall time: about 1 with one single-core worker,
about 2 with two, less when other processes take the cores); then the ratios of the
medians. Every run must
give every case the same verdict (checked).

    .venv/bin/python benchmarks/sweep_cluster_bench.py [--rounds N] [--sweep FILE]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# the same driver as the local sweep benchmark
from sweep_bench import (
    add_rounds_option,
    child_result,
    chosen,
    interleaved,
    machine_line,
    median,
    planned,
    print_verdicts,
    ran_as_child,
    read_results,
    sweep_parser,
)

SETUPS = ("cluster-1-worker", "cluster-2-workers", "local[2]")


def run_child(master: str, sweep_file: str, out: str) -> dict:
    """In a fresh process: start the driver, warm up, sweep; figures as JSON."""
    from creditflow.conformance.sweep.driver import run_sweep
    from creditflow.conformance.sweep.runners import SparkRunner
    from creditflow.conformance.sweep.spark import start_spark

    plan, store = planned(sweep_file, out)
    started = time.perf_counter()
    handle = start_spark(master, app_name="creditflow cluster bench")
    runner = SparkRunner(handle.sc)
    runner.warm_up()
    start_seconds = time.perf_counter() - started
    run = run_sweep(plan, store, runner)
    handle.stop()
    return {
        "start_seconds": start_seconds,
        "sweep_seconds": run.seconds,
        "cases": run.written,
        "slots": runner.parallelism,
        "tasks": len(run.batch_sizes),
        "verdicts": dict(run.verdicts),
    }


def driver(master: str, sweep: str, out: str, env: dict[str, str]) -> dict:
    return child_result(__file__, sweep, master, out, f"driver on {master}", env)


def run_setup(setup: str, sweep: str, tmp: Path, label: str) -> tuple[dict, dict[str, str]]:
    from creditflow.conformance.sweep.standalone import StandaloneSparkCluster

    out = str(tmp / label)
    load = os.getloadavg()[0]
    if setup == "local[2]":
        result = driver("local[2]", sweep, out, dict(os.environ))
        result.update(cluster_seconds=0.0, worker_tasks={})
    else:
        workers = 1 if setup == "cluster-1-worker" else 2
        started = time.perf_counter()
        with StandaloneSparkCluster(
            workers=workers, cores_per_worker=1, root=tmp / f"{label}-cluster"
        ) as cluster:
            cluster_seconds = time.perf_counter() - started
            result = driver(cluster.master_url, sweep, out, cluster.driver_env())
            result.update(cluster_seconds=cluster_seconds, worker_tasks=cluster.finished_tasks())
        if cluster.running():
            sys.exit(f"{setup}: processes {cluster.running()} survived the cluster's stop")
        shutil.rmtree(tmp / f"{label}-cluster", ignore_errors=True)
    result["load"] = (load, os.getloadavg()[0])
    verdicts, result["case_seconds"] = read_results(out)
    shutil.rmtree(out)
    return result, verdicts


def main() -> None:
    parser = sweep_parser(__doc__, "MASTER")
    add_rounds_option(parser, "set-up")
    parser.add_argument(
        "--setups", default=",".join(SETUPS), help=f"comma-separated, from {', '.join(SETUPS)}"
    )
    args = parser.parse_args()
    if ran_as_child(args, run_child):
        return
    setups = chosen(args.setups, SETUPS, "set-ups")
    print(
        f"{machine_line()}; {args.rounds} round(s); workers of 1 core and 1 GiB; load average "
        "(1 min) before/after"
    )

    def show(setup: str, result: dict) -> None:
        rate = result["cases"] / result["sweep_seconds"]
        tasks = " ".join(f"{w}:{n}" for w, n in result["worker_tasks"].items())
        print(
            f"{setup:18} cluster {result['cluster_seconds']:5.1f} s   driver "
            f"{result['start_seconds']:5.1f} s   sweep {result['sweep_seconds']:7.2f} s"
            f"   {rate:6.1f} cases/s   {result['tasks']:4} tasks on "
            f"{result['slots']} slots   {tasks or '-':24} cases in flight "
            f"{result['case_seconds'] / result['sweep_seconds']:4.2f}   load "
            f"{result['load'][0]:.2f}/{result['load'][1]:.2f}",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="creditflow-cluster-bench-") as tmp:

        def run(setup: str, round_no: int) -> tuple[dict, dict[str, str]]:
            label = f"{round_no}-{setup}".replace("[", "").replace("]", "")
            return run_setup(setup, args.sweep, Path(tmp), label)

        runs = interleaved(setups, args.rounds, run, show)
    print_verdicts(runs)
    rates = {s: median([r["cases"] / r["sweep_seconds"] for r in rs]) for s, rs in runs.items()}

    def ratio(a: str, b: str) -> str:
        return f"{rates[a] / rates[b]:.2f}x" if a in rates and b in rates else "n/a"

    print("# ratios of cases/s" + (" (medians)" if args.rounds > 1 else ""))
    print(f"two workers / one worker:        {ratio('cluster-2-workers', 'cluster-1-worker')}")
    print(f"two workers / local[2]:          {ratio('cluster-2-workers', 'local[2]')}")
    print(f"one worker / local[2]:           {ratio('cluster-1-worker', 'local[2]')}")


if __name__ == "__main__":
    main()
