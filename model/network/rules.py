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
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from creditflow.model.credit import flow as cf
from creditflow.model.credit.flow import ProcessCredit
from creditflow.model.network.graph import EdgeSpec, FlowGraph

Pair = tuple[str, str]
#: The kinds of NET step (NET-READ, NET-TAKE, NET-BUMP, NET-CRASH, NET-DOWN)
StepKind = Literal["read", "take", "bump", "crash", "down"]


@dataclass(frozen=True)
class Step:
    """One NET step: ``read`` by ``node`` (NET-READ); ``take`` by ``node`` of a message
    from ``peer`` (NET-TAKE); ``bump`` handled by ``node`` from ``peer``, the receiver
    that granted (NET-BUMP); ``crash`` of ``node`` (NET-CRASH); ``down``: ``node``
    handles the DOWN of the dead ``peer`` (NET-DOWN)."""

    kind: StepKind
    node: str
    peer: str | None = None

    def __str__(self) -> str:
        if self.kind == "read":
            return f"read({self.node})"
        if self.kind == "take":
            return f"take({self.node}<-{self.peer})"
        if self.kind == "crash":
            return f"crash({self.node})"
        if self.kind == "down":
            return f"down({self.node}<-{self.peer})"
        return f"bump({self.node}<-{self.peer})"


@dataclass(frozen=True, eq=True)
class NetworkState:
    """A NET state (NET-INIT, NET-FIFO).

    ``processes[p]``: p's ``credit_flow`` state (credit, blockers, deferred grants).
    ``data[(s, r)]``: data messages from s not yet taken by r (one FIFO per pair).
    ``grants[(r, s)]``: ``bump_credit`` amounts r sent to s, oldest first.
    ``supply[p]``: publishes source p has not read yet (NET-SOURCE).
    ``consumed[p]``: messages sink p has consumed (NET-SINK).
    ``dead``: the processes that crashed (NET-CRASH); ``handled``: the ``(p, d)`` for
    which p has handled d's DOWN (NET-DOWN); ``lost[d]``: messages lost to d's crash
    (NET-LOST-TO-CRASH), for every ``may_crash`` d.
    """

    processes: Mapping[str, ProcessCredit]
    data: Mapping[Pair, int]
    grants: Mapping[Pair, tuple[int, ...]]
    supply: Mapping[str, int]
    consumed: Mapping[str, int]
    dead: frozenset[str] = frozenset()
    handled: frozenset[Pair] = frozenset()
    lost: Mapping[str, int] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(
            tuple(
                tuple(sorted(m.items()))
                for m in (self.data, self.grants, self.supply, self.consumed, self.lost)
            )
            + tuple(sorted(self.processes.items(), key=lambda kv: kv[0]))
            + (self.dead, self.handled)
        )


def _put(mapping: Mapping[Any, Any], key: Any, value: Any) -> dict[Any, Any]:
    updated = dict(mapping)
    updated[key] = value
    return updated


def initial_state(graph: FlowGraph) -> NetworkState:
    """NET-INIT: every pair at full credit, empty FIFOs, nothing deferred, every source
    with its whole supply. CF-ENTRY: no process holds a credit entry yet (an absent
    ``credit_from`` reads as ``I``, an absent ``credit_to`` as ``M``); CF-SEND, CF-ACK
    and CF-BUMP put them, as ``credit_flow`` puts them in the process dictionary."""
    processes: dict[str, ProcessCredit] = {name: cf.INITIAL for name in graph.node_names}
    return NetworkState(
        processes=processes,
        data={(e.sender, e.receiver): 0 for e in graph.edges},
        grants={(e.receiver, e.sender): () for e in graph.edges},
        supply={n.name: n.publishes for n in graph.nodes if n.source},
        consumed={name: 0 for name in graph.node_names if not graph.successors(name)},
        lost={n.name: 0 for n in graph.crashable} if graph.has_faults else {},
    )


# -- who may act -------------------------------------------------------------------------


def is_blocked(state: NetworkState, node: str) -> bool:
    """CF-BLOCKED: ``node`` has at least one blocker (NET-BLOCKED in a network)."""
    return cf.is_blocked(state.processes[node])


def is_alive(state: NetworkState, node: str) -> bool:
    """NET-CRASH: ``node`` has not died."""
    return node not in state.dead


def can_work(graph: FlowGraph, state: NetworkState, node: str) -> bool:
    """NET-STALLED, NET-CHECKS-BLOCKED, NET-CRASH: may ``node`` take data or read a
    publish? (A dead process does nothing.)"""
    spec = graph.node(node)
    if spec.stalled or not is_alive(state, node):
        return False
    return not (spec.checks_blocked and is_blocked(state, node))


def down_pairs(graph: FlowGraph) -> tuple[Pair, ...]:
    """NET-DOWN: every ``(p, d)`` where ``d`` may crash and ``p`` has a credit pair with
    it, in edge order (for each edge the sender's DOWN first, then the receiver's)."""
    if not graph.has_faults:
        return ()
    pairs: dict[Pair, None] = {}
    for e in graph.edges:
        if graph.node(e.receiver).may_crash:
            pairs[(e.sender, e.receiver)] = None
        if graph.node(e.sender).may_crash:
            pairs[(e.receiver, e.sender)] = None
    return tuple(pairs)


def may_crash_now(graph: FlowGraph, state: NetworkState, node: str) -> bool:
    """NET-CRASH, NET-FAULT-BOUND: ``node`` may crash, is alive, and fewer than the
    bound have crashed."""
    return (
        graph.has_faults
        and graph.node(node).may_crash
        and is_alive(state, node)
        and len(state.dead) < graph.crash_bound
    )


def down_deliverable(graph: FlowGraph, state: NetworkState, watcher: str, dead: str) -> bool:
    """NET-DOWN: ``dead`` is dead, ``watcher`` alive, not stalled and not told yet, and
    every message ``dead`` sent ``watcher`` — data and grants — already taken (Erlang's
    signal order: the DOWN comes after them); NET-DOWN-EARLY: data may still wait."""
    return (
        not is_alive(state, dead)
        and is_alive(state, watcher)
        and not graph.node(watcher).stalled
        and (watcher, dead) not in state.handled
        and (graph.node(watcher).down_overtakes or not state.data.get((dead, watcher), 0))
        and not state.grants.get((dead, watcher), ())
    )


def quiet(graph: FlowGraph, state: NetworkState) -> bool:
    """PROP-RECOVERY: no further crash is possible."""
    return not any(may_crash_now(graph, state, n.name) for n in graph.crashable)


def enabled_steps(graph: FlowGraph, state: NetworkState) -> list[Step]:
    """Every enabled step, reads first (source order), then takes and bumps (edge
    order), then crashes (node order) and DOWNs (:func:`down_pairs` order): NET-READ,
    NET-TAKE, NET-BUMP, NET-CRASH, NET-DOWN guards."""
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
        if state.grants[(e.receiver, e.sender)]
        and not graph.node(e.sender).stalled
        and is_alive(state, e.sender)
    ]
    steps += [Step("crash", n.name) for n in graph.crashable if may_crash_now(graph, state, n.name)]
    steps += [
        Step("down", watcher, dead)
        for watcher, dead in down_pairs(graph)
        if down_deliverable(graph, state, watcher, dead)
    ]
    return steps


# -- the steps -----------------------------------------------------------------------------


def forward(graph: FlowGraph, state: NetworkState, node: str) -> NetworkState:
    """NET-FORWARD, NET-DEBITS, NET-SINK: ``send`` toward every successor in edge order
    (``sends_per_message`` times; CF-SEND blocks on the 1 -> 0 crossing) and put one
    message into each pair's FIFO; a node without successors consumes the message.
    NET-DEAD: toward a dead successor the message is lost to its crash — after CF-SEND
    while ``node`` has not handled its DOWN, without it afterwards (no route)."""
    out_edges = [e for e in graph.edges if e.sender == node]
    if not out_edges:
        return replace(state, consumed=_put(state.consumed, node, state.consumed[node] + 1))
    ps, data, lost = state.processes[node], dict(state.data), dict(state.lost)
    for e in out_edges:
        if (node, e.receiver) not in state.handled:
            for _ in range(e.sends_per_message):
                ps = cf.send(ps, e.receiver, e.credit)
        if is_alive(state, e.receiver):
            data[(node, e.receiver)] += 1
        else:
            lost[e.receiver] += 1  # NET-LOST-TO-CRASH
    return replace(state, processes=_put(state.processes, node, ps), data=data, lost=lost)


def _deliver_grants(
    state: NetworkState, granter: str, emitted: tuple[cf.Grant, ...]
) -> dict[Pair, tuple[int, ...]]:
    """NET-FIFO: every ``bump_credit`` ``granter`` sent joins the end of its pair's FIFO;
    one sent to a dead process is dropped (NET-DEAD)."""
    grants = dict(state.grants)
    for peer, amount in emitted:
        if is_alive(state, str(peer)):
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


def crash(graph: FlowGraph, state: NetworkState, node: str) -> NetworkState:
    """NET-CRASH: ``node`` dies. Its mailbox is lost to the crash (NET-LOST-TO-CRASH),
    grants in flight to it are gone, and so is its ``credit_flow`` state (its deferred
    grants are never sent); what it sent stays in flight."""
    mailbox_lost = sum(count for (_, r), count in state.data.items() if r == node)
    return replace(
        state,
        dead=state.dead | {node},
        processes=_put(state.processes, node, cf.INITIAL),
        data={pair: 0 if pair[1] == node else n for pair, n in state.data.items()},
        grants={pair: () if pair[1] == node else g for pair, g in state.grants.items()},
        lost=_put(state.lost, node, state.lost[node] + mailbox_lost),
    )


def down(graph: FlowGraph, state: NetworkState, watcher: str, dead: str) -> NetworkState:
    """NET-DOWN: ``watcher`` handles the DOWN of ``dead``; by default its handler calls
    CF-PEER-DOWN (one unblock, flushed once no blocker is left; both entries erased);
    ``on_peer_down: "ignore"`` calls nothing."""
    state = replace(state, handled=state.handled | {(watcher, dead)})
    if not graph.node(watcher).calls_peer_down:
        return state
    ps, flushed = cf.peer_down(state.processes[watcher], dead)
    state = replace(state, processes=_put(state.processes, watcher, ps))
    return replace(state, grants=_deliver_grants(state, watcher, flushed))


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
    if step.kind == "crash":
        return crash(graph, state, step.node)
    if step.kind == "down":
        assert step.peer is not None
        return down(graph, state, step.node, step.peer)
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
        state.supply.get(n.name, 0) or mailbox(state, n.name)
        for n in graph.nodes
        if not n.stalled and is_alive(state, n.name)
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
    found: dict[str, dict[Any, Any]] = {
        "pairs": pairs,
        "blockers": {n: tuple(sorted(state.processes[n].blocked)) for n in graph.node_names},
        "supply": dict(state.supply),
        "consumed": dict(state.consumed),
    }
    if graph.has_faults:
        found["faults"] = {
            "dead": tuple(n.name for n in graph.crashable if n.name in state.dead),
            "handled": tuple(pair for pair in down_pairs(graph) if pair in state.handled),
            # PROP-FAULT-FORGET: live watchers that hold no entry for the dead peer
            "forgotten": tuple(
                (p, d)
                for p, d in down_pairs(graph)
                if (p, d) in state.handled
                and is_alive(state, p)
                and d not in state.processes[p].credit_from
                and d not in state.processes[p].credit_to
            ),
            # CF-ENTRY: the entries held by watchers that ignore DOWN
            "held": tuple(
                (p, d, entry)
                for p, d in down_pairs(graph)
                if not graph.node(p).calls_peer_down
                for entry in entries_held(state, p, d)
            ),
            "crashes": len(state.dead),
            "lost": dict(state.lost),
        }
    return found


def entries_held(state: NetworkState, watcher: str, dead: str) -> tuple[str, ...]:
    """CF-ENTRY: the ``credit_flow`` dictionary entries for ``dead`` that ``watcher``
    holds, named as Erlang names them (``credit_blocked`` while it lists ``dead``)."""
    ps = state.processes[watcher]
    found = []
    if dead in ps.credit_from:
        found.append(f"{{credit_from, {dead}}}")
    if dead in ps.blocked:
        found.append(f"credit_blocked (holds {dead})")
    if dead in ps.credit_to:
        found.append(f"{{credit_to, {dead}}}")
    return tuple(found)
