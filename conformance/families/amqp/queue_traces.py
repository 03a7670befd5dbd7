"""Queue-end runs as ITF traces (AD-AMQ-FIFO-TRACE, a queue-run variant of
TRACE-AMQP-RUN): what ``conform --adapter rabbit-fifo`` writes for a finding, what
``replay --adapter rabbit-fifo`` and the expectations run.

A trace is the run's sizes (consumer mode, prefetch, delivery limit), its ops after
``reset`` and ``checkout c``, and after each op the model's view of the queue
(``QueueModel.view``); its ``#meta.creditflow`` also holds the diverging op and fields
and the finding's ``rule``, ``class`` and ``signature``. Reading a trace follows the
model again and refuses one whose recorded views the model does not give
(TRACE-REPLAY)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creditflow.conformance.differential.traces import TraceFile
from creditflow.conformance.families.amqp.queue_conform import (
    COMPARED,
    QUEUE_ALPHABET,
    QueueModel,
    QueueOp,
    QueueRun,
)
from creditflow.conformance.families.amqp.run_traces import (
    check_recorded_views,
    read_run_trace,
    states_and_ops,
    view_states,
)
from creditflow.conformance.inputs.itf import (
    Record,
    TraceFormatError,
    pick_value,
    picks_record,
    trace_document,
    trace_meta,
    write_document,
)
from creditflow.conformance.traces.network import ACTION_VAR, PICKS_VAR

QUEUE_RUN_MODEL = "amqp-queue-run"
QUEUE_RUN_VERSION = 1
QUEUE_RUN_VARS = ["model", ACTION_VAR, PICKS_VAR]
QUEUE_OP_NAMES = tuple(dict.fromkeys(o.op for o in QUEUE_ALPHABET))
MODES = ("credited", "simple_prefetch")


@dataclass(frozen=True)
class QueueTrace:
    """A queue run ready to replay (AD-AMQ-FIFO-TRACE)."""

    sizes: dict[str, Any]
    ops: tuple[QueueOp, ...]
    views: tuple[dict[str, int], ...] = ()  #: the model's view after each op


@dataclass(frozen=True)
class LoadedQueueTrace(TraceFile):
    """A queue-run trace file read (AD-AMQ-FIFO-TRACE)."""

    path: Path
    trace: QueueTrace
    meta: dict[str, Any] = field(default_factory=dict)


def queue_views(sizes: Mapping[str, Any], ops: Sequence[QueueOp]) -> tuple[dict[str, int], ...]:
    """The model's view after each op; an op the model does not allow there raises
    :class:`ValueError` (a run never holds one)."""
    model = QueueModel.start(sizes)
    views = []
    for i, op in enumerate(ops, start=1):
        if not model.possible(op):
            raise ValueError(f"op {i} ({op}) is not possible in the model there")
        views.append(model.view(model.apply(op)))
    return tuple(views)


def trace_of_queue_run(run: QueueRun) -> QueueTrace:
    """The trace of a run: its ops up to and with the diverging one."""
    ops = run.ops if run.index is None else run.ops[: run.index + 1]
    return QueueTrace(dict(run.sizes), tuple(ops), queue_views(run.sizes, ops))


def queue_trace_digest(trace: QueueTrace) -> str:
    """A short content hash of the sizes and ops (file names that deduplicate)."""
    text = json.dumps([trace.sizes, [str(o) for o in trace.ops]], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _picks(op: QueueOp) -> Record:
    """TRACE-OPTIONS: the op's credit, when it has one."""
    return picks_record({"credit": op.credit if op.op in ("credit", "drain") else None})


def queue_trace_document(
    trace: QueueTrace, description: str, source: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """AD-AMQ-FIFO-TRACE: state 0 is ``init`` (the model's view after ``checkout``),
    state ``i`` op ``i`` with the model's view after it."""
    first = QueueModel.start(trace.sizes).view(0)
    states = view_states(
        first, ((op.op, view, _picks(op)) for op, view in zip(trace.ops, trace.views, strict=True))
    )
    fields = {"sizes": dict(trace.sizes), "compared": list(COMPARED)}
    meta = trace_meta(
        source, description, QUEUE_RUN_MODEL, QUEUE_RUN_VERSION, fields, len(trace.ops), extra
    )
    return trace_document(QUEUE_RUN_VARS, states, meta)


def write_queue_trace(
    trace: QueueTrace,
    path: str | Path,
    description: str,
    source: str,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write through the one output writer (OUT-ATOMIC, OUT-FAILURE)."""
    return write_document(queue_trace_document(trace, description, source, extra), path)


def _sizes(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping) or set(value) != {"mode", "prefetch", "delivery_limit"}:
        raise TraceFormatError(f"{where} must hold exactly mode, prefetch and delivery_limit")
    mode, prefetch, limit = value["mode"], value["prefetch"], value["delivery_limit"]
    if mode not in MODES:
        raise TraceFormatError(f"{where}.mode must be one of {', '.join(MODES)}")
    for key, v in (("prefetch", prefetch), ("delivery_limit", limit)):
        if v is None and key == "delivery_limit":
            continue
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise TraceFormatError(f"{where}.{key} must be a non-negative integer")
    return {"mode": mode, "prefetch": prefetch, "delivery_limit": limit}


def _op(kind: Any, picks: Any, at: str) -> QueueOp:
    if kind not in QUEUE_OP_NAMES:
        known = ", ".join(QUEUE_OP_NAMES)
        raise TraceFormatError(f"{at}: unknown queue op {kind!r} (known: {known})")
    if not isinstance(picks, Mapping):
        raise TraceFormatError(f"{at}: {PICKS_VAR} must be a record")
    credit = pick_value(picks, "credit")
    if kind in ("credit", "drain"):
        if not isinstance(credit, int) or isinstance(credit, bool) or credit < 1:
            raise TraceFormatError(f"{at}: {kind} needs a credit of at least 1")
        return QueueOp(str(kind), credit)
    return QueueOp(str(kind))


def is_queue_run_document(doc: Mapping[str, Any]) -> bool:
    meta = doc.get("#meta", {})
    return isinstance(meta, Mapping) and meta.get("creditflow", {}).get("model") == QUEUE_RUN_MODEL


def load_queue_trace(path: str | Path) -> LoadedQueueTrace:
    """AD-AMQ-FIFO-TRACE, TRACE-REPLAY: read a queue-run trace and follow the model again;
    :class:`TraceFormatError` names the file and the problem (another kind of trace
    included)."""
    trace, meta = read_run_trace(path, QUEUE_RUN_MODEL, "a queue-run trace", _queue_trace)
    return LoadedQueueTrace(Path(path), trace, meta)


def _queue_trace(doc: Mapping[str, Any], where: str) -> QueueTrace:
    """AD-AMQ-FIFO-TRACE: the run a queue-run document holds, checked against the model."""
    missing = [v for v in QUEUE_RUN_VARS if v not in doc["vars"]]
    if missing:
        raise TraceFormatError(f"{where}: a queue-run trace needs vars {missing}")
    sizes = _sizes(doc["#meta"]["creditflow"].get("sizes"), f"{where}: #meta.creditflow.sizes")
    states, ops = states_and_ops(doc, where, _op)
    try:
        views = queue_views(sizes, ops)
    except ValueError as exc:
        raise TraceFormatError(f"{where}: the model cannot run it: {exc}") from None
    check_recorded_views(where, views, states, ops)
    return QueueTrace(sizes, ops, views)
