"""Per-process traces as ITF (TRACE-PROCESS-DOC, TRACE-PROCESS-VARS) and loading any
trace for replay against an adapter (TRACE-PROCESS-REPLAY, TRACE-PROJECTION).

A per-process trace is a list of protocol ops with, per op, the model's answer: the
acting process's state and the grants it sent. It is what ``conform`` writes when an
implementation diverges, what the regression corpus holds and what ``replay`` and the
pytest plugin run. The explorer's network traces are accepted as well: they are
replayed through the network model, then projected to per-process ops.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.projection import run_ops
from creditflow.conformance.differential.protocol import (
    DEFAULT_SPEC,
    OP_ARGS,
    Observation,
    Op,
    ProcessView,
    compare,
)
from creditflow.conformance.differential.session import ProcessTrace
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
from creditflow.conformance.traces.network import (
    ACTION_VAR,
    NETWORK_MODEL,
    PICKS_VAR,
    TraceReplayError,
    replay_network_document,
)
from creditflow.model.credit.spec import CreditSpec

PROCESS_MODEL = "credit-flow-process"
PROCESS_VERSION = 1
PROCESS_VARS = ["proc", "state", "emitted", ACTION_VAR, PICKS_VAR]
SUFFIX = ".itf.json"


def _grants(grants: Any) -> list[Record]:
    return [Record({"to": to, "amount": amount}) for to, amount in grants]


def _state_record(view: ProcessView) -> Record:
    return Record(
        {
            "credit_from": dict(sorted(view.credit_from.items())),
            "credit_to": dict(sorted(view.credit_to.items())),
            "blocked": list(view.blocked),
            "deferred": _grants(view.deferred),
        }
    )


def _picks(op: Op | None, spec: CreditSpec | None) -> Record:
    """TRACE-OPTIONS: the op's arguments, those it has."""
    return picks_record(
        {
            "proc": op.proc if op else None,
            "peer": op.peer if op else None,
            "amount": op.amount if op else None,
            "spec": tuple(spec) if spec is not None else None,
        }
    )


def process_trace_document(
    trace: ProcessTrace,
    description: str,
    source: str,
    extra: Mapping[str, Any] | None = None,
    created: bool = True,
) -> dict[str, Any]:
    """TRACE-PROCESS-DOC: the ITF document of a per-process trace. State 0 is the
    ``reset`` (action ``init``, the default spec among the picks); state ``i`` is op
    ``i`` with the acting process's state and the grants it sent."""
    states: list[dict[str, Any]] = [
        {
            "proc": "",
            "state": _state_record(ProcessView()),
            "emitted": [],
            ACTION_VAR: "init",
            PICKS_VAR: _picks(None, trace.spec),
        }
    ]
    for op, obs in trace.steps:
        states.append(
            {
                "proc": op.proc,
                "state": _state_record(obs.state),
                "emitted": _grants(obs.emitted),
                ACTION_VAR: op.kind,
                PICKS_VAR: _picks(op, op.spec),
            }
        )
    spec = {"spec": [trace.spec.initial, trace.spec.more_after]}
    meta = trace_meta(
        source, description, PROCESS_MODEL, PROCESS_VERSION, spec, len(trace.steps), extra, created
    )
    return trace_document(PROCESS_VARS, states, meta)


def trace_digest(trace: ProcessTrace) -> str:
    """A short content hash of the ops (for file names that deduplicate)."""
    text = json.dumps([trace.spec, [op.request() for op in trace.ops]], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def write_process_trace(
    trace: ProcessTrace,
    path: str | Path,
    description: str,
    source: str,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    return write_document(process_trace_document(trace, description, source, extra), path)


# -- reading -----------------------------------------------------------------------------


class TraceFile:
    """What a trace file read is called: its file name without the ITF suffix, and the
    description its ``#meta`` gives."""

    path: Path
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(SUFFIX).removesuffix(".json")

    @property
    def description(self) -> str:
        return str(self.meta.get("description", ""))


@dataclass
class LoadedTrace(TraceFile):
    """A trace ready to replay: its ops, with the expected answer of each."""

    path: Path
    kind: str  #: ``process`` or ``network``
    trace: ProcessTrace
    meta: dict[str, Any] = field(default_factory=dict)


def _pick(picks: Mapping[str, Any], key: str) -> Any:
    return pick_value(picks, key)


def _spec(value: Any, where: str) -> CreditSpec:
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise TraceFormatError(f"{where}: spec must be a pair of integers")
    return CreditSpec(*value)


def _read_grants(value: Any, where: str) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, list):
        raise TraceFormatError(f"{where} must be a list of {{to, amount}} records")
    out = []
    for g in value:
        if (
            not isinstance(g, Mapping)
            or not isinstance(g.get("to"), str)
            or not isinstance(g.get("amount"), int)
        ):
            raise TraceFormatError(f"{where} must be a list of {{to, amount}} records")
        out.append((g["to"], g["amount"]))
    return tuple(out)


def _read_view(value: Any, where: str) -> ProcessView:
    if not isinstance(value, Mapping):
        raise TraceFormatError(f"{where} must be a record")
    maps = []
    for key in ("credit_from", "credit_to"):
        m = value.get(key)
        if not isinstance(m, Mapping) or not all(
            isinstance(k, str) and isinstance(v, int) for k, v in m.items()
        ):
            raise TraceFormatError(f"{where}.{key} must be a map from names to integers")
        maps.append(dict(m))
    blocked = value.get("blocked")
    if not isinstance(blocked, list) or not all(isinstance(b, str) for b in blocked):
        raise TraceFormatError(f"{where}.blocked must be a list of names")
    return ProcessView(
        maps[0], maps[1], tuple(blocked), _read_grants(value.get("deferred"), f"{where}.deferred")
    )


def process_trace_from_document(doc: Mapping[str, Any], where: str) -> ProcessTrace:
    """TRACE-PROCESS-REPLAY, first half: read a per-process trace and check that the
    model reproduces every recorded answer (a trace the model disagrees with is stale
    or edited: :class:`TraceFormatError`)."""
    missing = [v for v in PROCESS_VARS if v not in doc["vars"]]
    if missing:
        raise TraceFormatError(f"{where}: a per-process trace needs vars {missing}")
    states = decoded_states(doc)
    first = states[0]
    if first.get(ACTION_VAR) != "init":
        raise TraceFormatError(f"{where}: states[0] must be the init (reset) state")
    try:
        spec_value = _pick(first.get(PICKS_VAR) or {}, "spec")
        spec = DEFAULT_SPEC if spec_value is None else _spec(spec_value, "states[0]")
        steps = []
        for i, values in enumerate(states[1:], start=1):
            at = f"states[{i}]"
            kind = values.get(ACTION_VAR)
            if kind not in OP_ARGS:
                raise TraceFormatError(f"{at}: unknown op {kind!r}")
            picks = values.get(PICKS_VAR)
            if not isinstance(picks, Mapping):
                raise TraceFormatError(f"{at}: {PICKS_VAR} must be a record")
            op_spec = _pick(picks, "spec")
            try:
                op = Op(
                    kind,
                    _pick(picks, "proc"),
                    _pick(picks, "peer"),
                    _pick(picks, "amount"),
                    None if op_spec is None else _spec(op_spec, at),
                )
            except ValueError as exc:
                raise TraceFormatError(f"{at}: {exc}") from None
            if values.get("proc") != op.proc:
                raise TraceFormatError(
                    f"{at}: proc {values.get('proc')!r} is not the acting process {op.proc!r}"
                )
            expected = Observation(
                _read_view(values.get("state"), f"{at}.state"),
                _read_grants(values.get("emitted"), f"{at}.emitted"),
            )
            steps.append((op, expected))
    except TraceFormatError as exc:
        raise TraceFormatError(f"{where}: {exc}") from None
    model = ProcessModel(spec)
    for i, (op, expected) in enumerate(steps, start=1):
        diffs = compare(model.observe(op), expected)
        if diffs:
            d = diffs[0]
            raise TraceFormatError(
                f"{where}: states[{i}] {op}: the model gives {d.field} = {d.model!r}, the "
                f"trace records {d.implementation!r} (a stale or edited trace)"
            )
    return ProcessTrace(spec, tuple(steps))


def project_network_document(doc: Mapping[str, Any], where: str) -> ProcessTrace:
    """TRACE-PROJECTION: replay a network trace through the NET model (TRACE-REPLAY),
    then list its steps' per-process ops with the CF model's answers."""
    try:
        replayed = replay_network_document(doc, where)
    except TraceReplayError as exc:
        raise TraceFormatError(str(exc)) from None
    network = replayed.system.network
    steps = [network.decode(a) for a in replayed.actions if a is not None]
    model = ProcessModel(DEFAULT_SPEC)
    ops = run_ops(network.graph, steps)
    return ProcessTrace(DEFAULT_SPEC, tuple((op, model.observe(op)) for op in ops))


def load_trace(path: str | Path) -> LoadedTrace:
    """Read a per-process or a network trace; :class:`TraceFormatError` names the file
    and the problem."""
    path = Path(path)
    doc = read_document(path)  # IN-SCHEMA: shape and values checked
    meta = doc.get("#meta", {})
    model = trace_model(doc)
    with malformed_trace(path):
        if model == PROCESS_MODEL:
            return LoadedTrace(path, "process", process_trace_from_document(doc, str(path)), meta)
        if model == NETWORK_MODEL:
            return LoadedTrace(path, "network", project_network_document(doc, str(path)), meta)
    raise TraceFormatError(
        f"{path}: not a creditflow trace (#meta.creditflow.model is {model!r}; expected "
        f"{PROCESS_MODEL!r} or {NETWORK_MODEL!r})"
    )


def trace_files(paths: list[Path]) -> list[Path]:
    """The trace files named, with folders expanded to their ``*.itf.json`` (sorted)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(p.rglob(f"*{SUFFIX}"))
        else:
            out.append(p)
    return out
