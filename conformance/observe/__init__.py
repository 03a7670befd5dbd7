"""Observing a running broker's credit flow (spec/observe.md, ``OBS-*``): the live credit
graph of one consistent cut and its checks (:mod:`.snapshot`), and recorded traces
validated against the per-process model and the network semantics (:mod:`.validate`).
Plain data in and out; the broker side is ``creditflow.adapters.rabbitmq.observe``."""

from creditflow.conformance.observe.snapshot import (
    Analysis,
    Edge,
    Process,
    SnapshotError,
    analyse,
    to_dot,
    to_graph,
)
from creditflow.conformance.observe.validate import (
    TRACE_FORMAT,
    Divergence,
    Result,
    TraceError,
    load_trace,
    shrunk_itf,
    validate,
)

__all__ = [
    "TRACE_FORMAT",
    "Analysis",
    "Divergence",
    "Edge",
    "Process",
    "Result",
    "SnapshotError",
    "TraceError",
    "analyse",
    "load_trace",
    "shrunk_itf",
    "to_dot",
    "to_graph",
    "validate",
]
