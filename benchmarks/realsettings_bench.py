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
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, status, usage = os.wait4(proc.pid, 0)
        return {
            "seconds": None,
            "peak_mb": round(usage.ru_maxrss / 1024),
            "exit": None,
            "claim": f"no answer within {limit:g} s",
        }
    seconds = time.perf_counter() - started
    # communicate() reaped the child: its peak RSS is in the children's usage
    report = json.loads(stdout) if stdout.strip().startswith("{") else {}
    return {
        "seconds": round(seconds, 2),
        "exit": proc.returncode,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_side_options(parser)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per run")
    args = parser.parse_args()
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
                row = measured(root, cargs, args.limit, folder)
                row.update(case=label, side=side)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print(f"{'case':32} {'side':24} {'s':>8} {'peak MB':>8} {'exit':>5} {'len':>8}  claim")
    for r in rows:
        print(
            f"{r['case']:32} {r['side']:24} {r['seconds'] or '-':>8} {r['peak_mb']:>8} "
            f"{r['exit'] if r['exit'] is not None else '-':>5} {r.get('length') or '':>8}  "
            f"{r['claim']}"
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
