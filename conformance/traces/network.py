"""Counterexample traces of credit networks: writing them (TRACE-ITF, TRACE-NETWORK-VARS)
and replaying them through the model (TRACE-REPLAY)."""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from creditflow.conformance.explore.counterexamples import Finding, Run
from creditflow.conformance.explore.encoding import State, Step
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.inputs.graphs import graph_from_node_link, graph_to_node_link
from creditflow.conformance.inputs.itf import (
    TraceFormatError,
    decode,
    decoded_states,
    encode,
    pick_value,
    picks_record,
    read_document,
    trace_document,
    write_document,
)
from creditflow.model.network.graph import GraphError
from creditflow.model.system import TransitionSystem

ACTION_VAR = "mbt::actionTaken"
PICKS_VAR = "mbt::nondetPicks"
NETWORK_MODEL = "credit-network"
NETWORK_VERSION = 1


def run_states(system: TransitionSystem, run: Run) -> list[dict[str, Any]]:
    """Each state of ``run`` as ITF variables, with the action that led to it."""
    out = []
    for action, state in run:
        values = dict(system.render(state))
        if action is None:
            values[ACTION_VAR] = "init"
            values[PICKS_VAR] = picks_record({})
        else:
            name, picks = system.action_record(action)
            values[ACTION_VAR] = name
            values[PICKS_VAR] = picks_record(picks)
        out.append(values)
    return out


def network_trace(
    system: CheckedNetwork, finding: Finding, source: str, description: str = ""
) -> dict[str, Any]:
    """The ITF document of a credit-network counterexample (with its lasso). A run of
    the explorer's counter-free states (EXP-FINITE) is replayed with the sinks'
    consumed counters, so that every trace carries them."""
    run = finding.path + finding.continuation
    if not system.network.count_consumed:
        system = CheckedNetwork(system.graph)
        state = system.initial()
        counted: Run = [(None, state)]
        for action, _ in run[1:]:
            assert action is not None  # only the first state has no action
            state = system.network.apply(state, action)
            counted.append((action, state))
        run = counted
    states = run_states(system, run)
    variables = [*system.render(cast(State, run[0][1])).keys(), ACTION_VAR, PICKS_VAR]
    meta = {
        "source": source,
        "description": description
        or f"creditflow counterexample for {finding.property_id} ({finding.kind}), "
        f"created {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        "creditflow": {
            "model": NETWORK_MODEL,
            "version": NETWORK_VERSION,
            "graph": graph_to_node_link(system.graph),
            "property": finding.property_id,
            "kind": finding.kind,
            "processes": list(finding.processes),
            "detail": finding.detail,
            "length": finding.length,
        },
    }
    return trace_document(variables, states, meta, loop=finding.loop_start)


#: TRACE-LIMIT: the longest run written as an ITF trace (a state per step: a million-step
#: witness would be hundreds of megabytes of JSON); longer runs are printed compressed.
TRACE_STEP_LIMIT = 15_000


def trace_too_long(finding: Finding) -> str | None:
    """TRACE-LIMIT: why ``finding`` is not written as a trace, or ``None``."""
    steps = len(finding.path) - 1 + len(finding.continuation)
    if steps <= TRACE_STEP_LIMIT:
        return None
    return f"{steps:,} steps, more than the ITF limit of {TRACE_STEP_LIMIT:,} (TRACE-LIMIT)"


def action_runs(system: CheckedNetwork, finding: Finding) -> list[tuple[str, int]]:
    """TRACE-LIMIT: the violating run as (step, repetitions), equal consecutive steps
    merged, for a run too long to write."""
    runs: list[tuple[int, int]] = []
    for action, _ in finding.path[1:]:
        assert action is not None
        if runs and runs[-1][0] == action:
            runs[-1] = (action, runs[-1][1] + 1)
        else:
            runs.append((action, 1))
    return [(system.describe(action), times) for action, times in runs]


def write_network_trace(
    system: CheckedNetwork, finding: Finding, path: str | Path, source: str
) -> Path:
    return write_document(network_trace(system, finding, source), path)


@dataclass
class Replayed:
    """A trace that replayed: its system and the model states it went through."""

    system: CheckedNetwork
    states: list[Hashable]
    actions: list[int | None]
    meta: Mapping[str, Any]


class TraceReplayError(ValueError):
    """The model does not reproduce a trace; the message names the first bad state."""


def _step(values: Mapping[str, Any], i: int) -> Step:
    picks = values.get(PICKS_VAR)
    kind = values.get(ACTION_VAR)
    if not isinstance(picks, Mapping) or kind not in ("read", "take", "bump", "crash", "down"):
        raise TraceReplayError(f"states[{i}]: unknown action {kind!r}")

    def pick(name: str) -> str | None:
        value = pick_value(picks, name)
        return value if value is None else str(value)

    node = pick("node")
    if node is None:
        raise TraceReplayError(f"states[{i}]: the action names no node")
    return Step(kind, node, pick("peer"))


def replay_network_document(doc: Mapping[str, Any], where: str = "trace") -> Replayed:
    """TRACE-REPLAY: check that the model reproduces ``doc`` state by state."""
    meta = doc.get("#meta", {}).get("creditflow", {})
    if meta.get("model") != NETWORK_MODEL:
        raise TraceFormatError(f"{where}: not a credit-network trace (#meta.creditflow.model)")
    try:
        graph = graph_from_node_link(meta.get("graph"), name=str(doc["#meta"].get("source")))
    except GraphError as exc:
        raise TraceFormatError(f"{where}: embedded graph: {exc}") from None
    system = CheckedNetwork(graph)
    recorded = decoded_states(doc)
    variables = [v for v in doc["vars"] if not v.startswith("mbt::")]
    state = system.initial()
    states: list[Hashable] = [state]
    actions: list[int | None] = [None]
    for i, values in enumerate(recorded):
        if i > 0:
            step = _step(values, i)
            try:
                action = system.network.encode(step)
            except (KeyError, ValueError):
                raise TraceReplayError(
                    f"{where}: states[{i}]: {step} is not a step of this graph"
                ) from None
            nxt = dict(system.successors(state)).get(action)
            if nxt is None:
                raise TraceReplayError(f"{where}: states[{i}]: {step} is not enabled")
            state = nxt
            states.append(state)
            actions.append(action)
        rendered = {k: decode(encode(v)) for k, v in system.render(state).items()}
        for var in variables:
            if rendered.get(var) != values.get(var):
                raise TraceReplayError(
                    f"{where}: states[{i}] {var}: model has {rendered.get(var)!r}, "
                    f"trace has {values.get(var)!r}"
                )
    return Replayed(system, states, actions, meta)


def replay_network_trace(path: str | Path) -> Replayed:
    return replay_network_document(read_document(path), where=str(path))
