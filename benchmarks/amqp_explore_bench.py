"""The AMQP search on the one explorer (EXP-FIRST, EXP-INTERN) against the AMQP search of
commit 6a55cb7 (its own breadth-first search, a dict of parents), side by side in one run.

Each side runs ``creditflow check TOPOLOGY --publishes N --json --progress`` in its own
interpreter — the old one from a read-only checkout of 6a55cb7 with its own virtualenv
(``--baseline``, default ``/work/wt/baseline``), the new one from this tree — and reports
wall and CPU seconds, states, states per second, the peak RSS (``ru_maxrss``), the RSS once
the command's modules are imported, bytes per state (peak over states, and the peak above
that import floor over states), and how many progress lines the command printed
(OUT-PROGRESS). Then the ratios new/old.

    .venv/bin/python benchmarks/amqp_explore_bench.py [--publishes 20] [--topology NAME]

``--only new`` skips the baseline (a quick look; no ratio).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: what a side runs: the CLI in-process, measured (written for both trees: it names only
#: the command line, and imports the command's modules before taking the floor)
CHILD = r"""
import json, resource, runpy, sys, time
stats_path, *args = sys.argv[1:]
def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
import creditflow.conformance.cli.app, creditflow.conformance.cli.amqp  # the floor
for name in (
    "creditflow.conformance.families.amqp.checking",
    "creditflow.conformance.explore.amqp",
):
    try:
        __import__(name)
    except ImportError:
        pass
floor = rss_kb()
sys.argv = ["creditflow", *args]
wall, cpu = time.perf_counter(), time.process_time()
code = 0
try:
    runpy.run_module("creditflow.conformance.cli", run_name="__main__")
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(stats_path, "w") as out:
    json.dump({"exit": code, "wall": wall, "cpu": cpu, "peak_kb": peak, "floor_kb": floor}, out)
"""


def side(python: Path, cwd: Path, args: list[str]) -> dict[str, Any]:
    """Run one side; its ``--json`` document, its measurements and its progress lines."""
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        done = subprocess.run(
            [str(python), "-c", CHILD, str(stats), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        if not stats.exists():
            raise SystemExit(f"{python}: no measurements\n{done.stderr[-2000:]}")
        measured: dict[str, Any] = json.loads(stats.read_text())
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    states = int(doc["states"])
    peak, floor = measured["peak_kb"] * 1024, measured["floor_kb"] * 1024
    progress = [ln for ln in done.stderr.splitlines() if "states" in ln]
    return {
        **measured,
        "states": states,
        "complete": doc["complete"],
        "claim": doc["claim"],
        "states_per_s": states / measured["wall"],
        "states_per_cpu_s": states / measured["cpu"],
        "bytes_per_state": peak / states,
        "bytes_per_state_above_floor": (peak - floor) / states,
        "progress_lines": len(progress),
        "last_progress": progress[-1] if progress else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default="rabbitmq4-consume")
    parser.add_argument("--publishes", type=int, default=20)
    parser.add_argument("--baseline", type=Path, default=Path("/work/wt/baseline"))
    parser.add_argument("--only", choices=("new",), default=None)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures here")
    a = parser.parse_args()
    args = ["check", a.topology, "--publishes", str(a.publishes), "--json", "--progress"]
    sides: dict[str, Any] = {}
    sides["new"] = side(Path(sys.executable), ROOT, args)
    if a.only is None:
        sides["old"] = side(a.baseline / ".venv/bin/python", a.baseline, args)
    for name, s in sides.items():
        print(
            f"{name}: {s['states']:,} states in {s['wall']:.1f} s ({s['cpu']:.1f} s CPU): "
            f"{s['states_per_s']:,.0f} states/s, peak {s['peak_kb'] / 1024:,.0f} MB = "
            f"{s['bytes_per_state']:.0f} B/state ({s['bytes_per_state_above_floor']:.0f} B/state "
            f"above the {s['floor_kb'] / 1024:.0f} MB of imports), "
            f"{s['progress_lines']} progress lines; exit {s['exit']}: {s['claim']}"
        )
    if "old" in sides:
        new, old = sides["new"], sides["old"]
        ratios = {
            "states_per_s": new["states_per_s"] / old["states_per_s"],
            "states_per_cpu_s": new["states_per_cpu_s"] / old["states_per_cpu_s"],
            "bytes_per_state": new["bytes_per_state"] / old["bytes_per_state"],
        }
        same = new["states"] == old["states"] and new["exit"] == old["exit"]
        print(
            f"new/old: {ratios['states_per_s']:.1f}x states/s "
            f"({ratios['states_per_cpu_s']:.1f}x per CPU second), "
            f"{ratios['bytes_per_state']:.2f}x bytes/state; same states and exit: {same}"
        )
        sides["ratios"] = ratios
    if a.out is not None:
        a.out.write_text(json.dumps(sides, indent=2) + "\n")


if __name__ == "__main__":
    main()
