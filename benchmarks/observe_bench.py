"""Benchmark of `creditflow observe` (spec/observe.md) on a private RabbitMQ 3.10.8 broker,
all figures from one run, side by side:

- publish rate (confirmed, 3 publishers) without and with tracing (OBS-TRACE), and the
  events traced per second;
- snapshot pause (OBS-CUT: first suspend request to last resume) with 10, 100 and 1,000
  extra credit-flow processes on the node (a ring of load processes that really send
  and ack with credit_flow);
- validation speed (OBS-VALIDATE), events per second.

    .venv/bin/python benchmarks/observe_bench.py [--publishes 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from creditflow.adapters.rabbitmq.broker import PrivateBroker
from creditflow.adapters.rabbitmq.observe import (
    ConfirmedPublisher,
    NodeTarget,
    ObserveAgent,
    record,
)
from creditflow.conformance.observe.validate import load_trace, validate


def publish(params, n: int) -> float:
    """Publish n transient messages from 3 confirmed publishers; messages per second."""
    share = n // 3
    pubs = [
        ConfirmedPublisher(params, "", f"bench.q{i}", share, b"b" * 64, False) for i in range(3)
    ]
    t0 = time.perf_counter()
    for p in pubs:
        p.start()
    for p in pubs:
        p.join()
    dt = time.perf_counter() - t0
    assert all(p.acked == share for p in pubs), [p.acked for p in pubs]
    return 3 * share / dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--publishes", type=int, default=20_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict = {}
    with (
        tempfile.TemporaryDirectory() as work,
        PrivateBroker(Path(work) / "b") as broker,
        ObserveAgent(NodeTarget.of_broker(broker)) as agent,
    ):
        params = broker.connection_parameters()
        import pika

        c = pika.BlockingConnection(params)
        ch = c.channel()
        for i in range(3):
            ch.queue_declare(f"bench.q{i}")
        c.close()
        publish(params, 3000)  # warm-up
        plain = publish(params, args.publishes)
        box: dict = {}
        trace = Path(work) / "trace.json"
        t0 = time.perf_counter()
        summary = record(
            agent, trace, during=lambda: box.setdefault("rate", publish(params, args.publishes))
        )
        rec_s = time.perf_counter() - t0
        traced = box["rate"]
        plain2 = publish(params, args.publishes)  # again, to see the drift of the machine
        out["publish_rate_untraced"] = round((plain + plain2) / 2)
        out["publish_rate_traced"] = round(traced)
        out["traced_over_untraced"] = round(traced / ((plain + plain2) / 2), 3)
        out["events_traced"] = summary.events
        out["events_traced_per_s"] = round(summary.events / rec_s)
        pauses = {}
        base = len(agent.snapshot()["processes"])
        for n in (10, 100, 1000):
            agent.request(f"load_start {n}")
            time.sleep(0.5)
            runs = [agent.snapshot() for _ in range(5)]
            agent.request("load_stop")
            median = statistics.median(r["pause_ms"] for r in runs)
            pauses[n] = {
                "processes": len(runs[0]["processes"]),
                "pause_ms_median": round(median, 2),
                "pause_ms_max": round(max(r["pause_ms"] for r in runs), 2),
            }
        out["broker_processes_without_load"] = base
        out["snapshot_pause"] = pauses
        doc = load_trace(trace)
        res = validate(doc)
        assert res.ok, res.divergence
        out["validation_events"] = res.events
        out["validation_events_per_s"] = round(res.events / res.seconds)
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"publish rate untraced {out['publish_rate_untraced']:,}/s, traced "
            f"{out['publish_rate_traced']:,}/s (ratio {out['traced_over_untraced']})"
        )
        print(f"events traced {out['events_traced']:,} ({out['events_traced_per_s']:,}/s)")
        for n, p in out["snapshot_pause"].items():
            print(
                f"snapshot with {n:5} load processes ({p['processes']} credit-flow "
                f"processes): pause median {p['pause_ms_median']} ms, max {p['pause_ms_max']} ms"
            )
        print(
            f"validation {out['validation_events']:,} events, "
            f"{out['validation_events_per_s']:,} events/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
