"""EXP-DIRECTED: a deadlock witness for large credits, built without a state space.

With RabbitMQ's real credits (``{400,0}``, ``{4000,800}``) the first deadlock lies
hundreds or thousands of steps deep, beyond any breadth-first search. For a graph
without cycles the way there is simple: make one process (the *target*) handle
messages until EXP-CERTIFICATE names somebody blocked forever, or nothing can move
while work is pending (a terminal deadlock). :func:`directed_run` does that with a
fixed priority among the enabled actions, on the model itself:

1. the target reads or takes (it handles one more message);
2. else the enabled read or take nearest upstream of the target (the message closest
   to it moves on);
3. else a grant handled by a blocked process (the one nearest the target first);
4. else any grant.

The run is built with an unbounded supply and then replayed step by step through
:class:`~creditflow.conformance.explore.network_system.CheckedNetwork` of the graph
with every source's supply set to exactly what the run read (:func:`replayed_finding`):
every action must be enabled there, and the last state must again be certified (or
terminal with work pending). Nothing of the schedule is trusted; how short the run is
is a separate question (Z3-STEP-BOUND).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from creditflow.conformance.explore.counterexamples import (
    DeadlockKind,
    Finding,
    Run,
    lasso_continuation,
)
from creditflow.conformance.explore.deadlock import mask_names
from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMP,
    READ,
    CreditNetwork,
    State,
)
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.model.network.graph import MAX_PUBLISHES, FlowGraph

#: The supply every source starts the directed run with (it reads what it needs).
UNBOUNDED_SUPPLY = MAX_PUBLISHES


class ReplayError(RuntimeError):
    """A directed run that the model does not replay (a bug, never expected)."""


@dataclass(frozen=True)
class DirectedRun:
    """A run found by EXP-DIRECTED toward ``target``: its actions and the reads per
    source (how it ends is decided again on the replay, :func:`replayed_finding`)."""

    target: str
    actions: tuple[int, ...]
    reads: dict[str, int]


def directed_run(
    graph: FlowGraph, target: str, max_steps: int, starve: bool = False
) -> DirectedRun | None:
    """EXP-DIRECTED toward ``target`` on the acyclic ``graph``; ``None`` when no
    deadlock is reached within ``max_steps`` steps (or the run ends with nothing pending
    and nobody blocked). With ``starve`` (EXP-DIRECTED-STARVE) the sources read nothing
    more once ``target`` is blocked: the supply is then exactly what was read, and a
    target whose receiver never grants again stays blocked in the terminal state."""
    unbounded = graph.with_supplies({n.name: UNBOUNDED_SUPPLY for n in graph.sources})
    system = CheckedNetwork(unbounded, count_consumed=False)
    net = system.network
    certify = system.stuck_certificate
    node = net.node_index[target]
    upstream, downstream, grants = _action_classes(net, node)
    state = net.initial()
    actions: list[int] = []
    starving = False
    for _ in range(max_steps):
        stuck = certify(state)
        if stuck:
            return _finish(net, target, actions)
        starving = starving or (starve and net.is_blocked(state, node))
        action = _choose(net, state, upstream, downstream, grants, no_reads=starving)
        if action is None:
            if starving:  # the unbounded supply is pending work; the exact one is not
                run = _finish(net, target, actions)
                return run if _ends_blocked(graph, run, node) else None
            if net.pending_work(state):
                return _finish(net, target, actions)
            return None
        state = net.apply(state, action)
        actions.append(action)
    return None


def _choose(
    net: CreditNetwork,
    state: State,
    upstream: list[int],
    downstream: list[int],
    grants: list[tuple[int, int]],
    no_reads: bool = False,
) -> int | None:
    """The first enabled action in EXP-DIRECTED's priority (no read with ``no_reads``)."""
    for action in upstream:
        if net.is_enabled(state, action) and not (no_reads and action >> ACTION_SHIFT == READ):
            return action
    for action, sender in grants:
        if sender >= 0 and net.is_blocked(state, sender) and net.is_enabled(state, action):
            return action
    for action in downstream:
        if net.is_enabled(state, action) and not (no_reads and action >> ACTION_SHIFT == READ):
            return action
    for action, _ in grants:
        if net.is_enabled(state, action):
            return action
    return None


def _ends_blocked(graph: FlowGraph, run: DirectedRun, node: int) -> bool:
    """EXP-DIRECTED-STARVE: whether ``node`` is still blocked at the end of ``run`` on the
    graph with exactly the supply the run read (a source with nothing left to read is
    not blocked)."""
    net = CheckedNetwork(graph.with_supplies(run.reads), count_consumed=False).network
    state = net.initial()
    for action in run.actions:
        state = net.apply(state, action)
    return net.is_blocked(state, node)


def _finish(net: CreditNetwork, target: str, actions: list[int]) -> DirectedRun:
    counts = {net.graph.node_names[n]: 0 for n in net.source_nodes}
    for a in actions:
        if a >> ACTION_SHIFT == READ:
            counts[net.graph.node_names[a & ((1 << ACTION_SHIFT) - 1)]] += 1
    return DirectedRun(target, tuple(actions), counts)


def _action_classes(
    net: CreditNetwork, target: int
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """EXP-DIRECTED's priority classes: reads and takes by the target and upstream of it
    (nearest first), reads and takes elsewhere, and grants as ``(action, sender)`` with
    the sender's node when it is the target or upstream of it (nearest first), else -1."""
    distance = _upstream_distance(net, target)
    far = net.n_nodes + 1
    upstream: list[tuple[int, int]] = []
    downstream: list[int] = []
    grants: list[tuple[int, int, int]] = []
    for action in net.actions:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        if kind == BUMP:
            sender = net.edge_ends[index][0]
            d = distance.get(sender, far)
            grants.append((d, action, sender if d < far else -1))
            continue
        actor = index if kind == READ else net.edge_ends[index][1]
        if actor in distance:
            upstream.append((distance[actor], action))
        else:
            downstream.append(action)
    upstream.sort()
    grants.sort()
    return [a for _, a in upstream], downstream, [(a, s) for _, a, s in grants]


def _upstream_distance(net: CreditNetwork, target: int) -> dict[int, int]:
    """Hops from each node to ``target`` along edges (``target`` itself: 0)."""
    distance = {target: 0}
    queue = deque([target])
    while queue:
        node = queue.popleft()
        for e in net.in_edges[node]:
            sender = net.edge_ends[e][0]
            if sender not in distance:
                distance[sender] = distance[node] + 1
                queue.append(sender)
    return distance


def replayed_finding(
    graph: FlowGraph, run: DirectedRun, mailbox_bound: int | None = None
) -> tuple[CheckedNetwork, Finding]:
    """EXP-DIRECTED's check: replay ``run`` through the model of ``graph`` with every
    source's supply set to what the run read; every action must be enabled and the last
    state must be a deadlock of the kind the run claims. The result is an explorer
    :class:`Finding` (with its EXP-LASSO continuation), written like any other."""
    exact = graph.with_supplies(run.reads)
    system = CheckedNetwork(exact, mailbox_bound=mailbox_bound)
    net = system.network
    state: State = system.initial()
    path: Run = [(None, state)]
    for i, action in enumerate(run.actions, start=1):
        if not net.is_enabled(state, action):
            raise ReplayError(f"step {i}: {net.describe(action)} is not enabled in the model")
        state = net.apply(state, action)
        path.append((action, state))
    kind, processes = _deadlock_at(system, state)
    finding = Finding(
        property_id=NO_DEADLOCK,
        kind=kind,
        path=path,
        processes=processes,
        final_processes=processes,
    )
    if kind == "blocked-forever":
        finding.continuation, finding.loop_start = lasso_continuation(system, state, len(path) - 1)
    return system, finding


def _deadlock_at(system: CheckedNetwork, state: State) -> tuple[DeadlockKind, tuple[str, ...]]:
    """PROP-NO-DEADLOCK at the end of a replayed run, as the explorer classifies it: a
    state without successors and with work pending is ``terminal``; else somebody
    certified (EXP-CERTIFICATE) or blocked in a state without successors (nothing can
    ever move again) is ``blocked-forever``. Anything else is a :class:`ReplayError`."""
    net = system.network
    names = system.graph.node_names
    final = not any(True for _ in net.enabled(state))
    if final and net.pending_work(state):
        return "terminal", ()
    stuck = system.certificate.certified(state) or (net.blocked_mask(state) if final else 0)
    if not stuck:
        raise ReplayError("the replayed run does not end in a deadlock")
    return "blocked-forever", mask_names(stuck, names)
