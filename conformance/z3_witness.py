"""Z3 witnesses as explorer counterexamples (Z3-WITNESS).

A run that Z3 found (its credit values, supplies, actions and states) is replayed
step by step through the Python model (:class:`~creditflow.model.network_system.CheckedNetwork`
of the concrete graph). Every action must be enabled there and every state must equal
Z3's; otherwise :class:`EncodingDriftError` is raised, since the encoding and the
model disagree. The replayed run becomes a :class:`~creditflow.conformance.counterexamples.Finding`
exactly like the explorer's, so :func:`~creditflow.conformance.traces.network_trace`
writes it as the same ITF document and ``replay`` reads it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from creditflow.conformance.counterexamples import Finding, Run, _continuation
from creditflow.conformance.explorer import NO_DEADLOCK
from creditflow.model.graph import FlowGraph
from creditflow.model.network_system import CheckedNetwork


class EncodingDriftError(RuntimeError):
    """The Z3 encoding and the Python model disagree on a run (a bug, never expected)."""


@dataclass(frozen=True)
class Witness:
    """A run found by Z3, before replay: the concrete graph (credits and supplies as Z3
    chose them), the action codes and Z3's state after each step (``states[0]`` is
    the initial state)."""

    graph: FlowGraph
    property_id: str
    kind: str
    actions: tuple[int, ...]
    states: tuple[tuple[int, ...], ...]
    processes: tuple[str, ...] = ()
    detail: str = ""


def replay_witness(
    witness: Witness, mailbox_bound: int | None = None
) -> tuple[CheckedNetwork, Run]:
    """Replay ``witness`` through the Python model; raise :class:`EncodingDriftError` at the
    first step where the model does not do what Z3 says."""
    system = CheckedNetwork(witness.graph, mailbox_bound=mailbox_bound)
    state = system.initial()
    if tuple(state) != tuple(witness.states[0]):
        raise EncodingDriftError(
            f"initial state: model {state}, Z3 {witness.states[0]} ({witness.graph.name})"
        )
    run: Run = [(None, state)]
    for i, action in enumerate(witness.actions, start=1):
        nxt = dict(system.successors(state)).get(action)
        if nxt is None:
            raise EncodingDriftError(
                f"step {i}: {system.describe(action)} is enabled for Z3 but not in the model"
            )
        if tuple(nxt) != tuple(witness.states[i]):
            raise EncodingDriftError(
                f"step {i} {system.describe(action)}: model {nxt}, Z3 {witness.states[i]}"
            )
        state = nxt
        run.append((action, state))
    return system, run


def finding_from_witness(
    witness: Witness, mailbox_bound: int | None = None
) -> tuple[CheckedNetwork, Finding]:
    """The explorer-style finding of a replayed witness: a deadlock's processes and, for a
    blocked-forever one, the continuation (EXP-LASSO); a state property's explanation."""
    system, run = replay_witness(witness, mailbox_bound)
    end = run[-1][1]
    finding = Finding(property_id=witness.property_id, kind=witness.kind, path=run)
    if witness.property_id == NO_DEADLOCK:
        finding.processes = witness.processes
        if witness.kind == "blocked-forever":
            finding.continuation, finding.loop_start = _continuation(system, end, len(run) - 1)
        finding.detail = witness.detail
    else:
        violated = system.violations(end)
        if witness.property_id not in violated:
            raise EncodingDriftError(
                f"Z3 says the last state violates {witness.property_id}, the model says "
                f"{violated or 'nothing'}"
            )
        finding.detail = system.explain(end, witness.property_id)
    return system, finding


def blocked_names(system: CheckedNetwork, state: Sequence[int]) -> tuple[str, ...]:
    net = system.network
    return tuple(
        system.process_names[n] for n in range(net.n_nodes) if net.is_blocked(state, n)
    )
