"""PG-STREAM: peak memory and time of ``paging SCENARIO --json`` streamed as JSON Lines
versus the former single JSON document (every step's views built in memory, then
dumped), on one generated scenario, side by side in one run.

    .venv/bin/python benchmarks/paging_stream_bench.py [STEPS] [GROWTH_EVERY]

Each variant runs in its own subprocess; its peak RSS is read with
``resource.getrusage(RUSAGE_CHILDREN)`` in a fresh parent per variant.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The former ``--json``: the whole document in memory, then one ``json.dumps``.
OLD_STYLE = r"""
import json, sys
from creditflow.conformance.families.paging.compare import view_of_state
from creditflow.conformance.inputs.paging_scenarios import load_scenario, run_scenario
run = run_scenario(load_scenario(sys.argv[1]))
doc = {"steps": [{"index": r.index, "step": r.step.describe(), "delivered": r.delivered,
                  "passes": [p._asdict() for rep in r.reports for p in rep.passes],
                  "after": view_of_state(r.after), "settled": view_of_state(r.settled)}
                 for r in run.results]}
sys.stdout.write(json.dumps(doc))
"""

MEASURE = r"""
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    code = subprocess.run(sys.argv[2:], stdout=out).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def scenario(steps: int, growth_every: int) -> dict:
    """A target 0, then publishes with a size pattern (PG-SIZES) and fetches; the
    queue grows by one message every ``growth_every`` steps."""
    out: list[dict] = [{"op": "target", "duration": 0}]
    cycle = [
        {"op": "publish", "count": 2, "sizes": [100, 10000]},
        {"op": "fetch", "count": 2, "ack": False},
    ] * (growth_every // 2)
    cycle.append({"op": "publish", "count": 1, "size": 100})
    while len(out) < steps:
        out.append(cycle[(len(out) - 1) % len(cycle)])
    return {"name": "generated", "description": "paging_stream_bench", "steps": out}


def peak(argv: list[str], out: Path) -> tuple[int, float, float]:
    """(exit code, peak RSS in MB, seconds) of ``argv`` with stdout to ``out``."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(out), *argv], capture_output=True, text=True, check=True
    )
    code, kb = done.stdout.split()
    return int(code), int(kb) / 1024, time.perf_counter() - t0


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3004
    growth = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    creditflow = str(Path(sys.executable).with_name("creditflow"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated.json"
        path.write_text(json.dumps(scenario(steps, growth)))
        out = Path(tmp) / "out"
        _, new_mb, new_s = peak([creditflow, "paging", str(path), "--json"], out)
        size = out.stat().st_size / 2**20
        _, old_mb, old_s = peak([sys.executable, "-c", OLD_STYLE, str(path)], out)
    print(f"{steps} steps, output {size:.1f} MB")
    print(f"streamed JSON Lines : peak {new_mb:7.1f} MB  {new_s:6.1f} s")
    print(f"one JSON document   : peak {old_mb:7.1f} MB  {old_s:6.1f} s")
    print(f"peak memory ratio (document / streamed): {old_mb / new_mb:.1f}x")


if __name__ == "__main__":
    main()
