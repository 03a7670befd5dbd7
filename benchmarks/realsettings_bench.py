"""RabbitMQ's real credit settings, side by side with an old commit: time, peak memory,
exit code and verdict of ``creditflow check`` per case (SCOPE-*, EXP-DIRECTED).

The old commit answered for the preset's supply only, so each case runs it twice: as a
user would (the default, which said "holds" for settings that block publishers
forever), and with ``--publishes I+1``, the supply that reveals the deadlock. The new
side runs the default, which asks for every supply. Each run is its own subprocess;
its peak RSS is read with ``wait4``. Runs still going after ``--limit`` seconds are
stopped and reported as "no answer".

    .venv/bin/python benchmarks/realsettings_bench.py --old 63b30e8 [--limit 120]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sides import REPO, add_side_options, old_tree

CHAIN = [("reader", "channel"), ("channel", "queue"), ("queue", "msg_store")]


def chain_file(folder: Path, name: str, credits: list[tuple[int, int]]) -> str:
    """reader -> channel -> queue -> msg_store with one spec per edge (4 publishes)."""
    doc = {
        "directed": True,
        "graph": {"name": name},
        "nodes": [
            {"id": "reader", "publishes": 4},
            {"id": "channel"},
            {"id": "queue"},
            {"id": "msg_store"},
        ],
        "links": [
            {"source": s, "target": r, "credit": list(c)}
            for (s, r), c in zip(CHAIN, credits, strict=True)
        ],
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def cases(folder: Path) -> list[tuple[str, list[str], int]]:
    """(label, check arguments, the supply that reveals a deadlock or 0)."""
    store0 = chain_file(folder, "store-4000-0", [(400, 200), (400, 200), (4000, 0)])
    return [
        ("defaults {400,200}/{4000,800}", ["rabbitmq-publish"], 0),
        ("{400,0}", ["rabbitmq-publish", "--credit", "400,0"], 401),
        ("{100,200}", ["rabbitmq-publish", "--credit", "100,200"], 101),
        ("msg_store {4000,0}", [store0], 4001),
        ("stalled-queue {400,200}", ["stalled-queue", "--credit", "400,200"], 801),
        ("fanout {400,200}", ["fanout", "--credit", "400,200"], 0),
        ("{1000000,0}", ["rabbitmq-publish", "--credit", "1000000,0"], 1_000_001),
    ]


@dataclass(frozen=True)
class StoppedRun:
    """What :func:`run_stopped_after` saw of one process."""

    stdout: str | None  #: ``None``: stopped at the limit
    exit: int | None
    seconds: float
    stopped_peak_kb: int  #: the peak RSS of a stopped process (0 for one that ended)


def run_stopped_after(command: list[str], limit: float, cwd: str | None = None) -> StoppedRun:
    """Run ``command`` in its own process group (stdout read, stderr dropped); after
    ``limit`` seconds the group is killed and the process reaped with ``wait4``."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        cwd=cwd,
    )
    try:
        stdout, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, _status, usage = os.wait4(proc.pid, 0)
        return StoppedRun(None, None, time.perf_counter() - started, usage.ru_maxrss)
    return StoppedRun(stdout, proc.returncode, time.perf_counter() - started, 0)


def run_check(root: Path | None, args: list[str], limit: float, out: Path) -> dict:
    """One ``creditflow check`` in a subprocess: seconds, peak RSS, exit code, claim."""
    prelude = (
        f"import sys; sys.path.insert(0, {str(REPO / 'benchmarks')!r}); "
        f"from sides import use_tree; use_tree({str(root) if root else None!r}); "
        "from creditflow.conformance.cli import main; sys.argv[0] = 'creditflow'; main()"
    )
    command = [
        sys.executable,
        "-c",
        prelude,
        "check",
        *args,
        "--json",
        "--trace-out",
        str(out / "t.itf.json"),
    ]
    run = run_stopped_after(command, limit)
    if run.stdout is None:
        return {
            "seconds": None,
            "peak_mb": round(run.stopped_peak_kb / 1024),
            "exit": None,
            "claim": f"no answer within {limit:g} s",
        }
    # communicate() reaped the child: its peak RSS is in the children's usage
    report = json.loads(run.stdout) if run.stdout.strip().startswith("{") else {}
    return {
        "seconds": round(run.seconds, 2),
        "exit": run.exit,
        "claim": report.get("claim") or _old_claim(report),
        "length": report.get("shortest_counterexample_length"),
    }


def _old_claim(report: dict) -> str:
    if not report:
        return "?"
    return (
        "deadlock"
        if report.get("deadlock")
        else "holds"
        if report.get("exit_code") == 0
        else (f"exit {report.get('exit_code')}")
    )


def measured_options(doc: str) -> argparse.Namespace:
    """The command line of a benchmark of :func:`measured` runs: the side options and
    ``--limit`` (seconds per run); ``doc``'s first line describes it."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    add_side_options(parser)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per run")
    return parser.parse_args()


def main() -> None:
    args = measured_options(__doc__)
    old = old_tree(args.old)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = []
        for label, check_args, reveal in cases(folder):
            runs = {
                "new (every supply)": (None, check_args),
                "old (default)": (old, check_args),
            }
            if reveal:
                runs["old (--publishes I+1)"] = (old, [*check_args, "--publishes", str(reveal)])
            for side, (root, cargs) in runs.items():
                rows.append(measured_row(root, cargs, args.limit, folder, label, side))
    print_table(rows, case_width=32, side_width=24, lengths=True)


def measured_row(
    root: Path | None, cargs: list[str], limit: float, folder: Path, case: str, side: str
) -> dict:
    """:func:`measured`, labelled with its case and side, printed as a JSON line."""
    row = measured(root, cargs, limit, folder)
    row.update(case=case, side=side)
    print(json.dumps(row), flush=True)
    return row


def print_table(rows: list[dict], case_width: int, side_width: int, lengths: bool) -> None:
    """The measured rows as a table after a blank line; ``lengths``: with the shortest
    counterexample's length."""
    head = f" {'len':>8}" if lengths else ""
    print()
    print(
        f"{'case':{case_width}} {'side':{side_width}} {'s':>8} {'peak MB':>8} {'exit':>5}"
        f"{head}  claim"
    )
    for r in rows:
        exit_code = r["exit"] if r["exit"] is not None else "-"
        length = f" {r.get('length') or '':>8}" if lengths else ""
        print(
            f"{r['case']:{case_width}} {r['side']:{side_width}} {r['seconds'] or '-':>8} "
            f"{r['peak_mb']:>8} {exit_code:>5}{length}  {r['claim']}"
        )


def measured(root: Path | None, cargs: list[str], limit: float, folder: Path) -> dict:
    """Run one case in a fresh helper process so that RUSAGE_CHILDREN is its own peak."""
    job = json.dumps(
        {"root": str(root) if root else None, "args": cargs, "limit": limit, "folder": str(folder)}
    )
    out = subprocess.run(
        [sys.executable, __file__, "--one", job], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def one(job: str) -> None:
    """``--one JOB``: run one case and print its row with the peak RSS of its child."""
    import resource

    spec = json.loads(job)
    root = Path(spec["root"]) if spec["root"] else None
    row = run_check(root, spec["args"], spec["limit"], Path(spec["folder"]))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    row.setdefault("peak_mb", round(peak / 1024))
    print(json.dumps(row))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        one(sys.argv[2])
    else:
        main()
