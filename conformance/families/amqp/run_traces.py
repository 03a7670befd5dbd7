"""AMQP conform runs as ITF traces (TRACE-AMQP-RUN): what ``conform`` writes when an AMQP
implementation fails, what an AMQP corpus holds, what ``replay`` and the pytest plugin
run against any AMQP adapter (AD-AMQ-REPLAY).

A trace is the run's sizes, the ops after ``reset``, ``begin s``, ``attach L``, and
after each op the model's view of both ends (``ModelLink.view()``) under the policy the
recording adapter declared, from the ids it chose. Reading a trace follows the model
again and refuses one whose recorded views the model does not give (a stale or edited
trace, TRACE-REPLAY)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from creditflow.conformance.differential.traces import TraceFile
from creditflow.conformance.families.amqp.conform import (
    ALPHABET,
    AmqpOp,
    AmqpRun,
    ModelLink,
    PolicyError,
    model_policy,
)
from creditflow.conformance.inputs.amqp_topologies import MAX_AMOUNT, MAX_UINT
from creditflow.conformance.inputs.itf import (
    Record,
    TraceFormatError,
    decoded_states,
    malformed_trace,
    pick_value,
    picks_record,
    read_document,
    trace_document,
    trace_meta,
    trace_model,
    write_document,
)
from creditflow.conformance.traces.network import ACTION_VAR, PICKS_VAR

T = TypeVar("T")
Op = TypeVar("Op")

AMQP_RUN_MODEL = "amqp-run"
AMQP_RUN_VERSION = 1
AMQP_RUN_VARS = ["model", ACTION_VAR, PICKS_VAR]
START_KEYS = (
    "delivery_count",
    "client_next_outgoing_id",
    "server_next_outgoing_id",
    "sender_window",
)
OP_NAMES = tuple(dict.fromkeys(o.op for o in ALPHABET))


@dataclass(frozen=True)
class AmqpTrace:
    """A run ready to replay (TRACE-AMQP-RUN): sizes, ops, and where it came from."""

    settings: dict[str, int]
    ops: tuple[AmqpOp, ...]
    declared: dict[str, Any] = field(default_factory=dict)
    start: dict[str, int] = field(default_factory=dict)
    views: tuple[dict[str, int], ...] = ()  #: the model's view after each op


@dataclass(frozen=True)
class LoadedAmqpTrace(TraceFile):
    """A trace file read (TRACE-AMQP-RUN)."""

    path: Path
    trace: AmqpTrace
    meta: dict[str, Any] = field(default_factory=dict)


def model_views(
    declared: Mapping[str, Any],
    settings: Mapping[str, int],
    start: Mapping[str, int],
    ops: Sequence[AmqpOp],
) -> tuple[dict[str, int], ...]:
    """TRACE-AMQP-RUN: the model's view after each op, from ``start``, under the policy
    ``declared`` with ``settings``; an op the model does not allow there raises
    :class:`ValueError` (a run never holds one)."""
    pol = model_policy(declared, settings)
    ids = {k: int(start[k]) for k in START_KEYS[:3]}
    model = ModelLink.start(pol, ids, int(start["sender_window"]))
    views = []
    for i, op in enumerate(ops, start=1):
        if not model.possible(op):
            raise ValueError(f"op {i} ({op}) is not possible in the model there")
        model.apply(op)
        views.append(model.view())
    return tuple(views)


def trace_of_run(run: AmqpRun) -> AmqpTrace:
    """The trace of a run (its ops up to and with the failing one)."""
    ops = run.ops if run.index is None else run.ops[: run.index + 1]
    views = model_views(run.declared, run.settings, run.start, ops)
    return AmqpTrace(dict(run.settings), tuple(ops), dict(run.declared), dict(run.start), views)


def _picks(op: AmqpOp) -> Record:
    """TRACE-OPTIONS: the op's arguments, those it has."""
    return picks_record(
        {
            "credit": op.credit if op.op in ("flow", "drain") else None,
            "number": op.number if op.op == "settle" else None,
            "keep": op.keep if op.op == "settle" else None,
        }
    )


def view_states(
    first: Mapping[str, int], steps: Iterable[tuple[str, Mapping[str, int], Record]]
) -> list[dict[str, Any]]:
    """The states of a run trace (TRACE-AMQP-RUN, AD-AMQ-FIFO-TRACE): state 0 the
    model's view ``first`` (action ``init``), then per step its action, the model's view
    after it and its picks."""
    states: list[dict[str, Any]] = [
        {"model": Record(first), ACTION_VAR: "init", PICKS_VAR: Record({})}
    ]
    for action, view, picks in steps:
        states.append({"model": Record(view), ACTION_VAR: action, PICKS_VAR: picks})
    return states


def check_recorded_views(
    where: str,
    views: Sequence[Mapping[str, int]],
    states: Sequence[Mapping[str, Any]],
    ops: Sequence[object],
) -> None:
    """TRACE-REPLAY: every state after the first records the model's view after its op
    (``views``); a view the model does not give is a :class:`TraceFormatError` naming
    the state (a stale or edited trace)."""
    for i, (view, s) in enumerate(zip(views, states[1:], strict=True), start=1):
        recorded = s.get("model")
        if not isinstance(recorded, Mapping):
            raise TraceFormatError(f"{where}: states[{i}].model must be a record")
        for key, value in view.items():
            if recorded.get(key) != value:
                raise TraceFormatError(
                    f"{where}: states[{i}] {ops[i - 1]}: the model gives {key} = {value}, the "
                    f"trace records {recorded.get(key)!r} (a stale or edited trace)"
                )


def amqp_trace_document(
    trace: AmqpTrace, description: str, source: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """TRACE-AMQP-RUN: state 0 is the start (action ``init``, the model's view after
    ``attach``), state ``i`` op ``i`` with the model's view after it."""
    pol = model_policy(trace.declared, trace.settings)
    ids = {k: int(trace.start[k]) for k in START_KEYS[:3]}
    first = ModelLink.start(pol, ids, int(trace.start["sender_window"])).view()
    states = view_states(
        first, ((op.op, view, _picks(op)) for op, view in zip(trace.ops, trace.views, strict=True))
    )
    fields = {
        "settings": dict(trace.settings),
        "policy": dict(trace.declared),
        "start": dict(trace.start),
    }
    meta = trace_meta(
        source, description, AMQP_RUN_MODEL, AMQP_RUN_VERSION, fields, len(trace.ops), extra
    )
    return trace_document(AMQP_RUN_VARS, states, meta)


def amqp_trace_digest(trace: AmqpTrace) -> str:
    """A short content hash of the sizes and ops (file names that deduplicate)."""
    text = json.dumps([trace.settings, [str(o) for o in trace.ops]], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def write_amqp_trace(
    trace: AmqpTrace,
    path: str | Path,
    description: str,
    source: str,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write through the one output writer (OUT-ATOMIC, OUT-FAILURE)."""
    return write_document(amqp_trace_document(trace, description, source, extra), path)


# -- reading -----------------------------------------------------------------------------


#: AMQ-TOPOLOGY-LIMITS for a run trace's numbers: serial numbers and windows are AMQP
#: ``uint``s, every other size at most the largest serial addend
_UINT_KEYS = frozenset({"initial_delivery_count", *START_KEYS})


def _int_map(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
        for k, v in value.items()
    ):
        raise TraceFormatError(f"{where} must be a map from names to integers")
    for k, v in value.items():  # every number the reader takes is one the model handles
        high = MAX_UINT if k in _UINT_KEYS else MAX_AMOUNT
        if not 0 <= v <= high:
            raise TraceFormatError(
                f"{where}.{k}: {v} is not an integer in 0 … {high} (AMQ-TOPOLOGY-LIMITS)"
            )
    return dict(value)


def _op(kind: Any, picks: Any, at: str) -> AmqpOp:
    if kind not in OP_NAMES:
        raise TraceFormatError(f"{at}: unknown AMQP op {kind!r} (known: {', '.join(OP_NAMES)})")
    if not isinstance(picks, Mapping):
        raise TraceFormatError(f"{at}: {PICKS_VAR} must be a record")
    values = {}
    for key in ("credit", "number", "keep"):
        v = pick_value(picks, key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise TraceFormatError(f"{at}: {key} must be a non-negative integer")
        values[key] = v or 0
    if kind in ("flow", "drain") and values["credit"] < 1:
        raise TraceFormatError(f"{at}: {kind} needs a credit of at least 1")
    if kind == "settle" and values["number"] < 1:
        raise TraceFormatError(f"{at}: settle needs a number of at least 1")
    return AmqpOp(str(kind), values["credit"], values["number"], values["keep"])


def states_and_ops(
    doc: Mapping[str, Any], where: str, read_op: Callable[[Any, Any, str], Op]
) -> tuple[list[dict[str, Any]], tuple[Op, ...]]:
    """TRACE-AMQP-RUN: a run trace's decoded states (the first is the init state) and the
    op each later state records, read by the family's ``read_op``."""
    states = decoded_states(doc)
    if states[0].get(ACTION_VAR) != "init":
        raise TraceFormatError(f"{where}: states[0] must be the init state")
    ops = tuple(
        read_op(s.get(ACTION_VAR), s.get(PICKS_VAR), f"{where}: states[{i}]")
        for i, s in enumerate(states[1:], start=1)
    )
    return states, ops


def amqp_trace_from_document(doc: Mapping[str, Any], where: str) -> AmqpTrace:
    """TRACE-AMQP-RUN, TRACE-REPLAY: read the run and follow the model again; a recorded
    view the model does not give is a :class:`TraceFormatError` naming the state."""
    missing = [v for v in AMQP_RUN_VARS if v not in doc["vars"]]
    if missing:
        raise TraceFormatError(f"{where}: an AMQP run trace needs vars {missing}")
    info = doc.get("#meta", {}).get("creditflow", {})
    settings = _int_map(info.get("settings"), f"{where}: #meta.creditflow.settings")
    start = _int_map(info.get("start"), f"{where}: #meta.creditflow.start")
    absent = [k for k in START_KEYS if k not in start]
    if absent:
        raise TraceFormatError(f"{where}: #meta.creditflow.start lacks {', '.join(absent)}")
    declared = info.get("policy")
    if not isinstance(declared, Mapping):
        raise TraceFormatError(f"{where}: #meta.creditflow.policy must be an object")
    states, ops = states_and_ops(doc, where, _op)
    try:
        views = model_views(declared, settings, start, ops)
    except (PolicyError, ValueError, KeyError, TypeError) as exc:
        raise TraceFormatError(f"{where}: the model cannot run it: {exc}") from None
    check_recorded_views(where, views, states, ops)
    return AmqpTrace(settings, ops, dict(declared), start, views)


def is_amqp_run_document(doc: Mapping[str, Any]) -> bool:
    meta = doc.get("#meta", {})
    return isinstance(meta, Mapping) and meta.get("creditflow", {}).get("model") == AMQP_RUN_MODEL


def read_run_trace(
    path: str | Path, model: str, kind: str, read: Callable[[dict[str, Any], str], T]
) -> tuple[T, dict[str, Any]]:
    """Read a trace file of ``model`` (``kind``: what it is, in words) with
    ``read(doc, where)``, and its ``#meta``; :class:`TraceFormatError` names the file and
    the problem (another family's trace included: it needs an adapter of its family)."""
    path = Path(path)
    doc = read_document(path)  # IN-SCHEMA: shape and values checked
    if trace_model(doc) != model:
        raise TraceFormatError(
            f"{path}: not {kind} (#meta.creditflow.model is {trace_model(doc)!r}; "
            f"expected {model!r}: replay it with an adapter of its family)"
        )
    with malformed_trace(path):
        return read(doc, str(path)), dict(doc.get("#meta", {}))


def load_amqp_trace(path: str | Path) -> LoadedAmqpTrace:
    """Read an AMQP run trace; :class:`TraceFormatError` names the file and the problem
    (another family's trace included: it needs an adapter of its family)."""
    trace, meta = read_run_trace(
        path, AMQP_RUN_MODEL, "an AMQP run trace", amqp_trace_from_document
    )
    return LoadedAmqpTrace(Path(path), trace, meta)
