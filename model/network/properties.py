"""What must hold of every reachable network state (PROP-*), read next to
``spec/properties.md``, over the readable states of :mod:`creditflow.model.network.rules`.

Deadlock (PROP-NO-DEADLOCK) is not a property of one state: the explorer decides it over
the reachable state graph (EXP-DEADLOCK). The explorer checks these same properties on
its flat encoding (:mod:`creditflow.conformance.explore.properties`);
``tests/test_network_rules.py`` requires the two to agree state by state.
"""

from __future__ import annotations

import networkx as nx

from creditflow.model.credit import flow as cf
from creditflow.model.network.graph import EdgeSpec, FlowGraph
from creditflow.model.network.rules import NetworkState, is_alive, mailbox

CONSERVATION = "PROP-CONSERVATION"
DEFERRED_IMPLIES_BLOCKED = "PROP-DEFERRED-BLOCKED"
IN_FLIGHT_BOUND = "PROP-IN-FLIGHT-BOUND"
MAILBOX_BOUND = "PROP-MAILBOX-BOUND"
NOTHING_LOST = "PROP-NOTHING-LOST"
NO_DEADLOCK = "PROP-NO-DEADLOCK"
RECOVERY = "PROP-RECOVERY"
FORGOTTEN = "PROP-FAULT-FORGET"

#: The properties of one state, in report order.
STATE_PROPERTIES = (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    IN_FLIGHT_BOUND,
    MAILBOX_BOUND,
    NOTHING_LOST,
)
#: ... and on a graph with faults (PROP-FAULT-FORGET; PROP-RECOVERY is decided with
#: PROP-NO-DEADLOCK by the explorer)
FAULT_PROPERTIES = (*STATE_PROPERTIES, FORGOTTEN, RECOVERY)


def edge_conserved(
    credit_from: int,
    credit_to: int,
    data: int,
    bumps: int,
    deferred: int,
    spec_initial: int,
    spec_more_after: int,
    debits: int = 1,
) -> bool:
    """PROP-CONSERVATION for one pair S->R with spec {I, M} and ``debits`` sends per
    message, over counts (every grant of the pair carries M):

    ``credit_from + debits*data + (M - credit_to) + M*(bumps + deferred) = I``.

    >>> edge_conserved(credit_from=2, credit_to=1, data=0, bumps=1, deferred=0,
    ...                spec_initial=2, spec_more_after=1)
    False
    >>> edge_conserved(0, 1, 1, 1, 0, 2, 1)
    True
    """
    return (
        credit_from
        + debits * data
        + (spec_more_after - credit_to)
        + spec_more_after * (bumps + deferred)
        == spec_initial
    )


def pair_alive(state: NetworkState, edge: EdgeSpec) -> bool:
    """PROP-FAULT-LIVE-PAIRS: both processes of the pair are alive (NET-CRASH)."""
    return is_alive(state, edge.sender) and is_alive(state, edge.receiver)


def pair_conserved(state: NetworkState, edge: EdgeSpec) -> bool:
    """PROP-CONSERVATION for the pair ``edge``: the credit the sender holds, the credit
    spent on messages in flight, the acks the receiver counted toward its next grant and
    the grants in flight or deferred add up to ``InitialCredit``."""
    sender, receiver = edge.sender, edge.receiver
    initial, more_after = edge.credit.initial, edge.credit.more_after
    credit_from = state.processes[sender].credit_from.get(receiver, initial)
    credit_to = state.processes[receiver].credit_to.get(sender, more_after)
    granted = sum(state.grants[(receiver, sender)]) + sum(
        amount for peer, amount in state.processes[receiver].deferred if peer == sender
    )
    spent = edge.sends_per_message * state.data[(sender, receiver)]
    return credit_from + spent + (more_after - credit_to) + granted == initial


def in_flight_bounded(graph: FlowGraph, state: NetworkState, edge: EdgeSpec) -> bool:
    """PROP-IN-FLIGHT-BOUND: a sender that checks blocking never has more than
    ``I + k - 1`` debits in flight on a blocking pair, nor credit below ``1 - k``."""
    k = edge.sends_per_message
    if not (graph.node(edge.sender).checks_blocked and edge.credit.blocks):
        return True
    credit_from = state.processes[edge.sender].credit_from.get(edge.receiver, edge.credit.initial)
    return k * state.data[(edge.sender, edge.receiver)] <= edge.credit.initial + k - 1 and (
        credit_from >= 1 - k
    )


def paths_to_sinks(graph: FlowGraph) -> dict[str, dict[str, int]] | None:
    """PROP-NOTHING-LOST weights: per sink, the number of paths from each node to it
    (1 for the sink itself; fan-out copies count once per path; nodes without a path are
    left out); ``None`` when the graph has a cycle (the property is then not checked this
    way). Each sink costs only its ancestors (IN-WORK: a 10,000-leaf star is linear)."""
    g = graph.to_networkx()
    if not nx.is_directed_acyclic_graph(g):
        return None
    position = {node: i for i, node in enumerate(nx.topological_sort(g))}
    counts: dict[str, dict[str, int]] = {}
    for sink in (node for node in graph.node_names if g.out_degree(node) == 0):
        paths = {sink: 1}
        above = sorted(nx.ancestors(g, sink), key=position.__getitem__, reverse=True)
        for node in [sink, *above]:  # successors first: each count is final when pushed
            for p in g.predecessors(node):
                paths[p] = paths.get(p, 0) + paths[node]
        counts[sink] = paths
    return counts


def nothing_lost(graph: FlowGraph, state: NetworkState) -> bool:
    """PROP-NOTHING-LOST (DAGs): what each sink consumed plus what is on its way to it
    equals what the sources published toward it, counted per path."""
    weights = paths_to_sinks(graph)
    if weights is None:
        return True
    for sink, paths in weights.items():
        on_the_way = sum(count * paths.get(r, 0) for (_, r), count in state.data.items())
        # PROP-FAULT-LOST: a message lost to d's crash would have gone on from d
        on_the_way += sum(count * paths.get(d, 0) for d, count in state.lost.items())
        published = sum(
            (n.publishes - state.supply[n.name]) * paths.get(n.name, 0) for n in graph.sources
        )
        if state.consumed[sink] + on_the_way != published:
            return False
    return True


def dead_peers_forgotten(state: NetworkState) -> bool:
    """PROP-FAULT-FORGET: a live process that has handled the DOWN of ``d`` keeps no
    credit entry for ``d`` (CF-PEER-DOWN erased both)."""
    for watcher, dead in state.handled:
        ps = state.processes[watcher]
        if is_alive(state, watcher) and (dead in ps.credit_from or dead in ps.credit_to):
            return False
    return True


def violations(
    graph: FlowGraph, state: NetworkState, mailbox_bound: int | None = None
) -> tuple[str, ...]:
    """The ids of the state properties ``state`` violates, in :data:`STATE_PROPERTIES`
    order (PROP-MAILBOX-BOUND only when a bound is given)."""
    found = []
    live = [e for e in graph.edges if pair_alive(state, e)]  # PROP-FAULT-LIVE-PAIRS
    if not all(pair_conserved(state, e) for e in live):
        found.append(CONSERVATION)
    if any(
        ps.deferred and not cf.is_blocked(ps)
        for name, ps in state.processes.items()
        if is_alive(state, name)
    ):
        found.append(DEFERRED_IMPLIES_BLOCKED)
    if not all(in_flight_bounded(graph, state, e) for e in live):
        found.append(IN_FLIGHT_BOUND)
    if mailbox_bound is not None and any(
        mailbox(state, name) > mailbox_bound for name in graph.node_names
    ):
        found.append(MAILBOX_BOUND)
    if not nothing_lost(graph, state):
        found.append(NOTHING_LOST)
    if not dead_peers_forgotten(state):
        found.append(FORGOTTEN)
    return tuple(found)


__all__ = [
    "CONSERVATION",
    "DEFERRED_IMPLIES_BLOCKED",
    "FAULT_PROPERTIES",
    "FORGOTTEN",
    "IN_FLIGHT_BOUND",
    "MAILBOX_BOUND",
    "NOTHING_LOST",
    "NO_DEADLOCK",
    "RECOVERY",
    "STATE_PROPERTIES",
    "dead_peers_forgotten",
    "edge_conserved",
    "in_flight_bounded",
    "nothing_lost",
    "pair_alive",
    "pair_conserved",
    "paths_to_sinks",
    "violations",
]
