"""``creditflow accounts conform``: differential testing of an ``accounts`` implementation
against the model (AD-AC-CONFORM).

Seeded random walks over the model's enabled steps; every step is asked of the
implementation too and its observations and state compared with the model's. The first
divergence is shrunk (steps are dropped while the run stays a valid model run and still
diverges), written as an ITF trace, then reported.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.conformance.families.accounts.protocol import (
    AccountsAdapter,
    observations_json,
    request_for,
    state_json,
)
from creditflow.conformance.inputs.actor_graphs import actor_graph_to_node_link
from creditflow.conformance.inputs.itf import trace_document, write_document
from creditflow.conformance.outputs import OutputError
from creditflow.conformance.traces.network import ACTION_VAR, PICKS_VAR, run_states
from creditflow.model.accounts.graph import ActorGraph
from creditflow.model.accounts.rules import AccountsModel
from creditflow.model.accounts.system import CheckedAccounts


@dataclass(frozen=True)
class Divergence:
    """The implementation answered step ``index`` (0-based) of ``actions`` differently."""

    actions: tuple[int, ...]
    index: int
    request: dict[str, Any]
    expected: dict[str, Any]
    actual: dict[str, Any]
    what: str


@dataclass(frozen=True, slots=True)
class ConformResult:
    """The verdict of an accounts conform run (AD-AC-CONFORM, OUT-TYPED-RESULT): the
    runs and steps compared, the first divergence (shrunk; ``shrunk_from``: its length
    before) and its trace; the CLI adds the adapter's name (AD-HELLO)."""

    graph: str
    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    divergence: Divergence | None = None
    shrunk_from: int | None = None
    trace: Path | None = None
    write_error: OutputError | None = None  #: OUT-FAILURE: the trace could not be written
    adapter: str | None = None

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``accounts conform --json``'s document (accounts-conform.json;
        without the CLI's ``write_errors``)."""
        d = self.divergence
        return {
            "adapter": self.adapter,
            "graph": self.graph,
            "runs": self.runs,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "conformant": d is None,
            "divergence": None
            if d is None
            else {
                "length": d.index + 1,
                "shrunk_from": self.shrunk_from,
                "what": d.what,
                "request": d.request,
                "expected": d.expected,
                "actual": d.actual,
            },
            "trace": str(self.trace) if self.trace else None,
        }


def compare_state(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> str | None:
    """AD-AC-STATE: ``debt`` and ``waiting`` must be given and equal; ``mailbox`` and
    ``held`` are compared when the implementation reports them."""
    for key in ("debt", "waiting"):
        if key not in actual:
            return f"state lacks {key!r}"
        if actual[key] != expected[key]:
            return f"state {key}: expected {expected[key]}, got {actual[key]}"
    for key in ("mailbox", "held"):
        if key in actual and actual[key] != expected[key]:
            return f"state {key}: expected {expected[key]}, got {actual[key]}"
    return None


def replay(
    adapter: AccountsAdapter, graph: ActorGraph, actions: Sequence[int]
) -> Divergence | None:
    """Reset the implementation and replay ``actions`` (a valid model run); the first
    divergence, or ``None``."""
    model = AccountsModel(graph)
    state = model.initial()
    adapter.reset(graph)
    for i, action in enumerate(actions):
        request = request_for(model, action)
        outcome = model.apply(state, action)
        want_obs = list(observations_json(model, state, action, outcome.observations))
        want_state = state_json(model, outcome.state)
        reply = adapter.step(request)
        got_obs = list(reply.observations)
        what = None
        if got_obs != want_obs:
            what = "observations differ"
        else:
            what = compare_state(want_state, reply.state)
        if what is not None:
            return Divergence(
                tuple(actions[: i + 1]),
                i,
                request,
                {"observations": want_obs, "state": want_state},
                {"observations": got_obs, "state": reply.state},
                what,
            )
        state = outcome.state
    return None


def _valid(model: AccountsModel, actions: Sequence[int]) -> bool:
    state = model.initial()
    for a in actions:
        if a not in set(model.enabled(state)):
            return False
        state = model.apply(state, a).state
    return True


def shrink(
    adapter: AccountsAdapter, graph: ActorGraph, found: Divergence, budget: int = 400
) -> Divergence:
    """Drop steps (one at a time, latest first, repeatedly) while the shorter run is still
    a valid model run that diverges."""
    model = AccountsModel(graph)
    best = found
    changed = True
    while changed and budget > 0:
        changed = False
        for i in range(len(best.actions) - 1, -1, -1):
            candidate = best.actions[:i] + best.actions[i + 1 :]
            if not candidate or not _valid(model, candidate):
                continue
            budget -= 1
            d = replay(adapter, graph, candidate)
            if d is not None:
                best = d
                changed = True
                break
            if budget <= 0:
                break
    return best


def conform(
    adapter: AccountsAdapter,
    graph: ActorGraph,
    runs: int = 50,
    max_steps: int = 60,
    seed: int = 0,
    trace_out: Path | None = None,
) -> ConformResult:
    """Random walks until a divergence or ``runs`` runs. A divergence is shrunk and its
    trace written (before anything reports it)."""
    started = time.perf_counter()
    model = AccountsModel(graph)
    done_runs = steps = 0
    for run in range(runs):
        rng = random.Random(seed * 1_000_003 + run)
        state = model.initial()
        actions: list[int] = []
        for _ in range(max_steps):
            enabled = list(model.enabled(state))
            if not enabled:
                break
            action = rng.choice(enabled)
            actions.append(action)
            state = model.apply(state, action).state
        done_runs += 1
        steps += len(actions)
        found = replay(adapter, graph, actions)
        if found is not None:
            shrunk = shrink(adapter, graph, found)
            trace, write_error = None, None
            if trace_out is not None:
                try:
                    trace = write_divergence(graph, shrunk, trace_out)
                except OutputError as exc:  # OUT-FAILURE: the verdict is still reported
                    write_error = exc
            return ConformResult(
                graph.name,
                done_runs,
                steps,
                time.perf_counter() - started,
                divergence=shrunk,
                shrunk_from=found.index + 1,
                trace=trace,
                write_error=write_error,
            )
    return ConformResult(graph.name, done_runs, steps, time.perf_counter() - started)


def write_divergence(graph: ActorGraph, divergence: Divergence, path: Path) -> Path:
    """AD-AC-TRACE: the model's run up to the diverging step (ITF), with the request and
    both answers in ``#meta``."""
    system = CheckedAccounts(graph)
    state = system.initial()
    run: list[tuple[int | None, Any]] = [(None, state)]
    for action in divergence.actions:
        state = next(s for a, s in system.successors(state) if a == action)
        run.append((action, state))
    variables = [*system.render(run[0][1]).keys(), ACTION_VAR, PICKS_VAR]
    meta = {
        "description": f"accounts divergence at step {divergence.index}: {divergence.what}",
        "creditflow": {
            "model": "accounts",
            "version": 1,
            "graph": actor_graph_to_node_link(graph),
            "divergence": {
                "index": divergence.index,
                "request": divergence.request,
                "expected": divergence.expected,
                "actual": divergence.actual,
                "what": divergence.what,
            },
        },
    }
    return write_document(trace_document(variables, run_states(system, run), meta), path)
