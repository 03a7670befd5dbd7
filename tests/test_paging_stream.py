"""PG-STREAM and PG-SIZES: ``paging --json`` streams JSON Lines with bounded memory;
a publish step cycles a size pattern. Cost: about 4 s of CPU (a 3,004-step subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from creditflow.conformance.families.paging.compare import view_of_state
from creditflow.conformance.inputs.paging_scenarios import parse_scenario, run_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from paging_stream_bench import MEASURE, scenario  # noqa: E402

#: Peak RSS allowed for the streamed run: the interpreter and its imports take ~70 MB;
#: the same scenario as one JSON document took ~250 MB, and the issue's 3,004-step
#: scenario 2.2 GB (benchmarks/paging_stream_bench.py).
PEAK_MB = 130


def test_long_scenario_streams_with_bounded_memory(tmp_path: Path) -> None:
    """PG-STREAM: 3,004 steps give 3,006 lines (header, steps, summary), more bytes
    than the process's whole peak memory."""
    base_mb = _peak_mb(tmp_path, scenario(3, 21))
    peak_mb = _peak_mb(tmp_path, scenario(3004, 21))
    assert peak_mb < PEAK_MB, peak_mb
    out = tmp_path / "out.jsonl"
    with out.open() as lines:
        header = json.loads(next(lines))
        count = 0
        for line in lines:
            last = json.loads(line)
            count += 1
    assert header["steps"] == 3004 and count == 3005
    assert last == {"end": True, "steps": 3004, "violation_count": 0, "violations": []}
    # What the long run kept beyond the interpreter is a fraction of what it wrote.
    assert peak_mb - base_mb < out.stat().st_size / 2**20 / 4, (base_mb, peak_mb)


def _peak_mb(tmp_path: Path, doc: dict) -> float:
    """Peak RSS (MB) of ``creditflow paging FILE --json``, its output in out.jsonl."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc))
    creditflow = str(Path(sys.executable).with_name("creditflow"))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            MEASURE,
            str(tmp_path / "out.jsonl"),
            creditflow,
            "paging",
            str(path),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    code, kb = (int(x) for x in done.stdout.split())
    assert code == 0
    return kb / 1024


def test_size_pattern_is_one_publish_per_message() -> None:
    """PG-SIZES: ``sizes`` cycled over ``count`` equals one step per message."""
    pattern = parse_scenario(
        {
            "steps": [
                {"op": "target", "duration": 0},
                {"op": "publish", "count": 5, "sizes": [100, 10000]},
            ]
        },
        "pattern",
    )
    single = parse_scenario(
        {
            "steps": [{"op": "target", "duration": 0}]
            + [
                {"op": "publish", "size": n, "settle": i == 4}
                for i, n in enumerate([100, 10000, 100, 10000, 100])
            ]
        },
        "single",
    )
    assert pattern.steps[1].message_sizes() == [100, 10000, 100, 10000, 100]
    assert pattern.steps[1].describe() == "publish 5 x 100/10000 B transient"
    a = run_scenario(pattern).results[-1].settled
    b = run_scenario(single).results[-1].settled
    assert view_of_state(a) == view_of_state(b)
