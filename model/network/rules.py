"""The network semantics of credit flow over a process graph (NET-*), as readable rules.

Read this module next to ``spec/network.md``: a network state names every process's
``credit_flow`` state (a :class:`~creditflow.model.credit.flow.ProcessCredit`), the data
messages and the ``bump_credit`` messages in flight per ordered pair, every source's
remaining supply and every sink's consumed count. Each NET rule is one short function
that *calls* the CF functions (:func:`~creditflow.model.credit.flow.send`,
:func:`~creditflow.model.credit.flow.ack`, :func:`~creditflow.model.credit.flow.handle_bump`,
whose unblock flushes deferred grants); nothing here re-derives a CF rule.

The explorer runs an optimised flat encoding of the same semantics
(:mod:`creditflow.conformance.explore.encoding`); ``tests/test_network_rules.py`` runs
both side by side on random graphs and requires identical states, enabled steps and
property verdicts.

    >>> from creditflow.model.network.graph import flow_graph_from_networkx
    >>> import networkx as nx
    >>> g = nx.DiGraph(credit=[1, 1])
    >>> g.add_node("reader", publishes=1)
    >>> g.add_edge("reader", "channel")
    >>> graph = flow_graph_from_networkx(g, "tiny")
    >>> state = read(graph, initial_state(graph), "reader")
    >>> state.data[("reader", "channel")], is_blocked(state, "reader")
    (1, True)
    >>> state = take(graph, state, "reader", "channel")
    >>> state.grants[("channel", "reader")]
    (1,)
    >>> is_blocked(bump(graph, state, "reader", "channel"), "reader")
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from creditflow.model.credit import flow as cf
from creditflow.model.credit.flow import ProcessCredit
from creditflow.model.network.graph import EdgeSpec, FlowGraph

Pair = tuple[str, str]


@dataclass(frozen=True)
class Step:
    """One NET step: ``read`` by ``node`` (NET-READ); ``take`` by ``node`` of a message
    from ``peer`` (NET-TAKE); ``bump`` handled by ``node`` from ``peer``, the receiver
    that granted (NET-BUMP)."""

    kind: str
    node: str
    peer: str | None = None

    def __str__(self) -> str:
        if self.kind == "read":
            return f"read({self.node})"
        if self.kind == "take":
            return f"take({self.node}<-{self.peer})"
        return f"bump({self.node}<-{self.peer})"


@dataclass(frozen=True, eq=True)
class NetworkState:
    """A NET state (NET-INIT, NET-FIFO).

    ``processes[p]``: p's ``credit_flow`` state (credit, blockers, deferred grants).
    ``data[(s, r)]``: data messages from s not yet taken by r (one FIFO per pair).
    ``grants[(r, s)]``: ``bump_credit`` amounts r sent to s, oldest first.
    ``supply[p]``: publishes source p has not read yet (NET-SOURCE).
    ``consumed[p]``: messages sink p has consumed (NET-SINK).
    """

    processes: Mapping[str, ProcessCredit]
    data: Mapping[Pair, int]
    grants: Mapping[Pair, tuple[int, ...]]
    supply: Mapping[str, int]
    consumed: Mapping[str, int]

    def __hash__(self) -> int:
        return hash(
            tuple(
                tuple(sorted(m.items()))
                for m in (self.data, self.grants, self.supply, self.consumed)
            )
            + tuple(sorted(self.processes.items(), key=lambda kv: kv[0]))
        )


def _put(mapping: Mapping[Any, Any], key: Any, value: Any) -> dict[Any, Any]:
    updated = dict(mapping)
    updated[key] = value
    return updated


def initial_state(graph: FlowGraph) -> NetworkState:
    """NET-INIT: every pair at full credit (``credit_from = I``, ``credit_to = M``),
    empty FIFOs, nothing deferred, every source with its whole supply."""
    processes: dict[str, ProcessCredit] = {name: cf.INITIAL for name in graph.node_names}
    for e in graph.edges:
        sender, receiver = processes[e.sender], processes[e.receiver]
        processes[e.sender] = ProcessCredit(
            _put(sender.credit_from, e.receiver, e.credit.initial), sender.credit_to
        )
        processes[e.receiver] = ProcessCredit(
            receiver.credit_from, _put(receiver.credit_to, e.sender, e.credit.more_after)
        )
    return NetworkState(
        processes=processes,
        data={(e.sender, e.receiver): 0 for e in graph.edges},
        grants={(e.receiver, e.sender): () for e in graph.edges},
        supply={n.name: n.publishes for n in graph.nodes if n.source},
        consumed={name: 0 for name in graph.node_names if not graph.successors(name)},
    )


# -- who may act -------------------------------------------------------------------------


def is_blocked(state: NetworkState, node: str) -> bool:
    """CF-BLOCKED: ``node`` has at least one blocker (NET-BLOCKED in a network)."""
    return cf.is_blocked(state.processes[node])


def can_work(graph: FlowGraph, state: NetworkState, node: str) -> bool:
    """NET-STALLED, NET-CHECKS-BLOCKED: may ``node`` take data or read a publish?"""
    spec = graph.node(node)
    if spec.stalled:
        return False
    return not (spec.checks_blocked and is_blocked(state, node))


def enabled_steps(graph: FlowGraph, state: NetworkState) -> list[Step]:
    """Every enabled step, reads first (source order), then takes and bumps (edge
    order): NET-READ, NET-TAKE, NET-BUMP guards."""
    steps = [
        Step("read", n.name)
        for n in graph.sources
        if state.supply[n.name] > 0 and can_work(graph, state, n.name)
    ]
    steps += [
        Step("take", e.receiver, e.sender)
        for e in graph.edges
        if state.data[(e.sender, e.receiver)] > 0 and can_work(graph, state, e.receiver)
    ]
    steps += [
        Step("bump", e.sender, e.receiver)
        for e in graph.edges
        if state.grants[(e.receiver, e.sender)] and not graph.node(e.sender).stalled
    ]
    return steps


# -- the steps -----------------------------------------------------------------------------


def forward(graph: FlowGraph, state: NetworkState, node: str) -> NetworkState:
    """NET-FORWARD, NET-DEBITS, NET-SINK: ``send`` toward every successor in edge order
    (``sends_per_message`` times; CF-SEND blocks on the 1 -> 0 crossing) and put one
    message into each pair's FIFO; a node without successors consumes the message."""
    out_edges = [e for e in graph.edges if e.sender == node]
    if not out_edges:
        return replace(state, consumed=_put(state.consumed, node, state.consumed[node] + 1))
    ps, data = state.processes[node], dict(state.data)
    for e in out_edges:
        for _ in range(e.sends_per_message):
            ps = cf.send(ps, e.receiver, e.credit)
        data[(node, e.receiver)] += 1
    return replace(state, processes=_put(state.processes, node, ps), data=data)


def _deliver_grants(
    state: NetworkState, granter: str, emitted: tuple[cf.Grant, ...]
) -> dict[Pair, tuple[int, ...]]:
    """NET-FIFO: every ``bump_credit`` ``granter`` sent joins the end of its pair's FIFO."""
    grants = dict(state.grants)
    for peer, amount in emitted:
        grants[(granter, peer)] = (*grants[(granter, peer)], amount)
    return grants


def read(graph: FlowGraph, state: NetworkState, source: str) -> NetworkState:
    """NET-READ: ``source`` reads one publish from its supply and forwards it."""
    state = replace(state, supply=_put(state.supply, source, state.supply[source] - 1))
    return forward(graph, state, source)


def take(graph: FlowGraph, state: NetworkState, sender: str, receiver: str) -> NetworkState:
    """NET-TAKE: ``receiver`` takes the oldest message from ``sender``, acks it (CF-ACK,
    ``sends_per_message`` times; a grant is deferred while ``receiver`` is blocked,
    CF-DEFER) and then forwards it (NET-FORWARD)."""
    edge = _edge(graph, sender, receiver)
    data = _put(state.data, (sender, receiver), state.data[(sender, receiver)] - 1)
    ps = state.processes[receiver]
    emitted: tuple[cf.Grant, ...] = ()
    for _ in range(edge.sends_per_message):
        ps, sent = cf.ack(ps, sender, edge.credit)
        emitted += sent
    state = replace(state, data=data, processes=_put(state.processes, receiver, ps))
    state = replace(state, grants=_deliver_grants(state, receiver, emitted))
    return forward(graph, state, receiver)


def bump(graph: FlowGraph, state: NetworkState, sender: str, receiver: str) -> NetworkState:
    """NET-BUMP: ``sender`` handles the oldest grant ``receiver`` sent it (CF-BUMP); the
    crossing from <= 0 to > 0 unblocks it on ``receiver`` and, with no blocker left,
    flushes its deferred grants into their FIFOs (CF-UNBLOCK, CF-FLUSH)."""
    amount, *rest = state.grants[(receiver, sender)]
    grants = _put(state.grants, (receiver, sender), tuple(rest))
    ps, flushed = cf.handle_bump(state.processes[sender], receiver, amount)
    state = replace(state, grants=grants, processes=_put(state.processes, sender, ps))
    return replace(state, grants=_deliver_grants(state, sender, flushed))


def apply(graph: FlowGraph, state: NetworkState, step: Step) -> NetworkState:
    """One atomic step (NET-ATOMIC)."""
    if step.kind == "read":
        return read(graph, state, step.node)
    if step.kind == "take":
        assert step.peer is not None
        return take(graph, state, step.peer, step.node)
    if step.kind == "bump":
        assert step.peer is not None
        return bump(graph, state, step.node, step.peer)
    raise ValueError(f"unknown step kind {step.kind!r}")


def _edge(graph: FlowGraph, sender: str, receiver: str) -> EdgeSpec:
    for e in graph.edges:
        if e.sender == sender and e.receiver == receiver:
            return e
    raise KeyError((sender, receiver))


# -- what is waiting --------------------------------------------------------------------------


def mailbox(state: NetworkState, node: str) -> int:
    """Data messages waiting for ``node``, over all its senders."""
    return sum(count for (_, receiver), count in state.data.items() if receiver == node)


def deferred_toward(state: NetworkState, granter: str, peer: str) -> int:
    """Grants ``granter`` holds back for ``peer`` (CF-DEFER)."""
    return sum(1 for p, _ in state.processes[granter].deferred if p == peer)


def pending_work(graph: FlowGraph, state: NetworkState) -> bool:
    """Work that a non-stalled process still has to do: unread publishes or waiting
    messages (the "work pending" of PROP-NO-DEADLOCK's terminal kind)."""
    return any(
        state.supply.get(n.name, 0) or mailbox(state, n.name) for n in graph.nodes if not n.stalled
    )


def counts(graph: FlowGraph, state: NetworkState) -> dict[str, dict[Any, Any]]:
    """The state as counts, the form every encoding of NET shares (NET-FIFO: messages of
    one pair are alike): per pair ``S->R`` the tuple ``(credit_from, credit_to, data,
    grants in flight, grants deferred)``, per process its blockers (sorted), per source
    its supply, per sink what it consumed."""
    pairs = {}
    for e in graph.edges:
        s, r = e.sender, e.receiver
        pairs[(s, r)] = (
            state.processes[s].credit_from.get(r, e.credit.initial),
            state.processes[r].credit_to.get(s, e.credit.more_after),
            state.data[(s, r)],
            len(state.grants[(r, s)]),
            deferred_toward(state, r, s),
        )
    return {
        "pairs": pairs,
        "blockers": {n: tuple(sorted(state.processes[n].blocked)) for n in graph.node_names},
        "supply": dict(state.supply),
        "consumed": dict(state.consumed),
    }
