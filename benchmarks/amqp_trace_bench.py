"""Long AMQP witnesses written and printed in full vs as runs (TRACE-RUNS), side by
side in one process and one run.

For a session window of W never renewed (AMQ-DIRECTED-RUN's witness, 3.5 · W steps),
the witness is found once, then, per form: the ITF trace built and written
(``write_document``), its size, the text of the steps (one line per step before, one
line per run now), and the trace replayed through the model (TRACE-REPLAY). "full" is
what ``check`` wrote before TRACE-RUNS (every state; the compression threshold set
out of reach), "runs" what it writes now. Peak traced memory (``tracemalloc``) of
building and writing each trace is measured in a second pass, so it does not slow the
timed one.

    .venv/bin/python benchmarks/amqp_trace_bench.py [--windows 512,2048]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from creditflow.conformance.families.amqp import codec as amqp_traces
from creditflow.conformance.families.amqp.checking import AmqpViolation, check_amqp
from creditflow.conformance.families.amqp.rendering import describe_state, step_lines
from creditflow.conformance.inputs.amqp_topologies import AmqpInput, topology_from_dict
from creditflow.conformance.inputs.itf import write_document

ROOT = Path(__file__).resolve().parents[1]


def never(w: int) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (ROOT / "spec/graphs/amqp/session-window-never-renewed.json").read_text()
    )
    nodes = {n["id"]: n for n in doc["nodes"]}
    nodes["receiver-session"]["window"]["window"] = w
    nodes["sender"]["publishes"] = w + 1
    return doc


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _peak_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--windows", default="512,2048")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="amqp-trace-bench-"))
    print(
        f"{'W':>6} {'steps':>7} {'form':>5} | {'write s':>7} {'trace MB':>9} {'peak MB':>8} "
        f"| {'text lines':>10} {'text s':>6} | {'replay s':>8}"
    )
    for w in (int(x) for x in args.windows.split(",")):
        doc = never(w)
        t = topology_from_dict(doc, "never")
        v = check_amqp(t, None, True).search.violation
        assert v is not None
        inp = AmqpInput(t, doc, "never.json", ())
        forms = {
            "full": lambda v=v: [describe_state(s) for s in v.states],  # one line per step
            "runs": lambda v=v: step_lines(v.steps, v.states),
        }
        for form, text in forms.items():
            saved = amqp_traces.COMPRESS_ABOVE
            amqp_traces.COMPRESS_ABOVE = sys.maxsize if form == "full" else saved
            path = out / f"never{w}-{form}.itf.json"

            def write(path: Path = path, inp: AmqpInput = inp, v: AmqpViolation = v) -> None:
                write_document(amqp_traces.amqp_trace(inp, v, "never.json"), path)

            try:
                write_s, _ = _timed(write)
                peak = _peak_mb(write)
            finally:
                amqp_traces.COMPRESS_ABOVE = saved
            text_s, lines = _timed(text)
            size = path.stat().st_size / 2**20
            replay_s, replayed = _timed(
                lambda path=path: amqp_traces.replay_amqp_document(json.loads(path.read_text()))
            )
            assert replayed.steps == v.steps
            print(
                f"{w:6} {len(v.steps):7,} {form:>5} | {write_s:7.2f} {size:9.3f} {peak:8.1f} "
                f"| {len(lines):10,} {text_s:6.2f} | {replay_s:8.2f}"
            )
            path.unlink()


if __name__ == "__main__":
    main()
