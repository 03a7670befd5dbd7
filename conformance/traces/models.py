"""Counterexample traces (ITF, TRACE-ITF) of the models of any family (accounts, alarms,
and every family written through its codec), and their replay (TRACE-REPLAY).

The run is rendered with the system's own ``render``/``action_record`` (as for credit
networks, :func:`creditflow.conformance.traces.network.run_states`); ``#meta.creditflow`` names
the model, the property and what was checked, so the trace explains itself.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.family import registry
from creditflow.conformance.family.interface import Family
from creditflow.conformance.inputs.itf import trace_document, write_document
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.traces.network import (
    ACTION_VAR,
    PICKS_VAR,
    TraceReplayError,
    run_states,
)
from creditflow.model.system import TransitionSystem


def model_trace(
    system: TransitionSystem,
    finding: Finding,
    model: str,
    subject: Mapping[str, Any],
    source: str,
) -> dict[str, Any]:
    run = finding.path + finding.continuation
    variables = [*system.render(finding.path[0][1]).keys(), ACTION_VAR, PICKS_VAR]
    meta = {
        "source": source,
        "description": f"creditflow counterexample for {finding.property_id} ({finding.kind}), "
        f"created {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        "creditflow": {
            "model": model,
            "version": 1,
            **subject,
            "property": finding.property_id,
            "kind": finding.kind,
            "processes": list(finding.processes),
            "detail": finding.detail,
            "length": finding.length,
        },
    }
    return trace_document(variables, run_states(system, run), meta, loop=finding.loop_start)


def write_model_trace(
    system: TransitionSystem,
    finding: Finding,
    path: str | Path,
    model: str,
    subject: Mapping[str, Any],
    source: str,
) -> Path:
    """Write the counterexample before anything reports it (exit codes come after)."""
    return write_document(model_trace(system, finding, model, subject, source), path)


@dataclass(frozen=True)
class ModelReplay:
    """A model trace of a family replayed through its transition system (TRACE-REPLAY,
    FAM-CODEC): the family, the instance its ``#meta`` embeds, the system and the run."""

    family: Family
    instance: Any
    system: TransitionSystem
    run: list[tuple[int | None, Any]]
    property_id: str | None
    #: the step after which the property fails (the run may go on: a lasso, a stall)
    length: int | None


def _recorded(state: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "#meta"}


def _encoded(system: TransitionSystem, action: int | None, state: Any) -> dict[str, Any]:
    values = run_states(system, [(action, state)])
    return _recorded(trace_document(list(values[0]), values, {})["states"][0])


def family_of_model(model: str) -> Family | None:
    """FAM-CODEC: the registered family whose codec writes traces of ``model``."""
    for family in registry.families():
        if family.codec is not None and family.codec.load().model == model:
            return family
    return None


def replay_model_document(doc: Mapping[str, Any], where: str) -> ModelReplay | None:
    """TRACE-REPLAY for any family with a codec: rebuild the instance from the trace's
    ``#meta`` (FAM-READER ``from_trace_meta``) and the system with the supply it was
    explored with, then walk the trace: state 0 must be the initial state and each next
    state a successor, action and variables equal. ``None``: no family writes this model;
    :class:`TraceReplayError` names the first state that does not replay."""
    meta = doc.get("#meta", {}).get("creditflow", {})
    family = family_of_model(str(meta.get("model")))
    if family is None:
        return None
    try:
        instance = family.reader.load().from_trace_meta(meta, where)
    except InputError as exc:  # IN-ONE-LINE: the reader's own line (place and problem)
        raise TraceReplayError(str(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise TraceReplayError(f"{where}: #meta does not describe a {family.name} input") from exc
    system = family.checking.load().system(instance, {"supply": meta.get("supply")})
    states = doc.get("states") or []
    state = system.initial()
    if not states or _recorded(states[0]) != _encoded(system, None, state):
        raise TraceReplayError(f"{where}: state 0 is not the initial state (TRACE-REPLAY)")
    run: list[tuple[int | None, Any]] = [(None, state)]
    for i, recorded in enumerate(states[1:], start=1):
        want = _recorded(recorded)
        step = next(
            ((a, t) for a, t in system.successors(state) if _encoded(system, a, t) == want),
            None,
        )
        if step is None:
            raise TraceReplayError(
                f"{where}: state {i} is not a successor of state {i - 1} (TRACE-REPLAY)"
            )
        run.append(step)
        state = step[1]
    prop, length = meta.get("property"), meta.get("length")
    return ModelReplay(
        family,
        instance,
        system,
        run,
        None if prop is None else str(prop),
        length if isinstance(length, int) else None,
    )
