"""Z3 witnesses as explorer counterexamples (Z3-WITNESS).

A run that Z3 found (its credit values, supplies, actions and states) is replayed
step by step through the Python model
(:class:`~creditflow.conformance.explore.network_system.CheckedNetwork`
of the concrete graph). Every action must be enabled there and every state must equal
Z3's; otherwise :class:`EncodingDriftError` is raised, since the encoding and the
model disagree. The replayed run becomes a
:class:`~creditflow.conformance.explore.counterexamples.Finding`
exactly like the explorer's, so :func:`~creditflow.conformance.traces.network.network_trace`
writes it as the same ITF document and ``replay`` reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from creditflow.conformance.explore.counterexamples import (
    Finding,
    FindingKind,
    Run,
    lasso_continuation,
)
from creditflow.conformance.explore.encoding import EDGE_FIELDS, CreditNetwork, State, Step
from creditflow.conformance.explore.explorer import NO_DEADLOCK, RECOVERY
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.model.network.graph import FlowGraph


class EncodingDriftError(RuntimeError):
    """The Z3 encoding and the Python model disagree on a run (a bug, never expected)."""


@dataclass(frozen=True)
class Witness:
    """A run found by Z3, before replay: the concrete graph (credits and supplies as Z3
    chose them), the action codes and Z3's state after each step (``states[0]`` is
    the initial state)."""

    graph: FlowGraph
    property_id: str
    kind: FindingKind
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
    end = cast(State, run[-1][1])  # a replayed network run
    finding = Finding(property_id=witness.property_id, kind=witness.kind, path=run)
    if witness.property_id in (NO_DEADLOCK, RECOVERY):
        finding.processes = witness.processes
        if witness.kind == "blocked-forever":
            finding.continuation, finding.loop_start = lasso_continuation(system, end, len(run) - 1)
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
    return tuple(system.process_names[n] for n in range(net.n_nodes) if net.is_blocked(state, n))


def map_witness(witness: Witness, phi: Mapping[str, str]) -> Witness:
    """The image of ``witness`` under a structural automorphism ``phi`` of its graph (a
    node renaming that preserves sources, supplies, checking, stalled flags and sends
    per message): each edge ``e`` hands its credit spec to ``phi(e)``, each action and
    state slot moves with it. The result still has to replay (nothing is trusted)."""
    graph = witness.graph
    net = CreditNetwork(graph)
    edge_of = {(e.sender, e.receiver): i for i, e in enumerate(graph.edges)}
    image = [edge_of[(phi[e.sender], phi[e.receiver])] for e in graph.edges]
    specs = {target: graph.edges[e].credit for e, target in enumerate(image)}
    mapped = replace(
        graph,
        edges=tuple(replace(e, credit=specs[i]) for i, e in enumerate(graph.edges)),
    )
    target_net = CreditNetwork(mapped)
    perm = list(range(net.size))  # new slot -> old slot
    for e, target in enumerate(image):
        for f in range(EDGE_FIELDS):
            perm[EDGE_FIELDS * target + f] = EDGE_FIELDS * e + f
    names = graph.node_names
    for n, slot in net.remaining_slot.items():
        perm[target_net.remaining_slot[target_net.node_index[phi[names[n]]]]] = slot
    for n, slot in net.delivered_slot.items():
        perm[target_net.delivered_slot[target_net.node_index[phi[names[n]]]]] = slot
    actions = []
    for a in witness.actions:
        step = net.decode(a)
        actions.append(
            target_net.encode(
                Step(step.kind, phi[step.node], phi[step.peer] if step.peer else None)
            )
        )
    return Witness(
        graph=mapped,
        property_id=witness.property_id,
        kind=witness.kind,
        actions=tuple(actions),
        states=tuple(tuple(s[perm[i]] for i in range(net.size)) for s in witness.states),
        processes=tuple(phi[p] for p in witness.processes),
        detail=witness.detail,
    )
