"""What the fault model predicts for a connection closed while its channel is blocked
(OBS-DIFF-CLOSE), to compare with snapshots of a live broker taken before and after.

The topology is two connections (``reader_a -> channel_a``, ``reader_b -> channel_b``)
publishing to one queue that is held (suspended, so it takes nothing and handles no
DOWN) until it is resumed. Connection a is closed while everybody is blocked. Pure:
the readable NET rules (model/network/rules.py) in their own order, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from creditflow.model.network import rules
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx

#: the closed connection's processes, in the order they die (OBS-DIFF-CLOSE)
CLOSED = ("channel_a", "reader_a")
PUBLISHERS = ("reader_a", "channel_a", "reader_b", "channel_b")


def two_publishers(
    reader_spec: tuple[int, int], queue_spec: tuple[int, int], publishes: int
) -> FlowGraph:
    """Two connections publishing ``publishes`` messages each to one queue; connection
    a's channel and reader may crash (NET-FAULT-NODE)."""
    g = nx.DiGraph()
    for side in ("a", "b"):
        closes = side == "a"
        g.add_node(f"reader_{side}", source=True, publishes=publishes, may_crash=closes)
        g.add_node(f"channel_{side}", may_crash=closes)
        g.add_edge(f"reader_{side}", f"channel_{side}", credit=list(reader_spec))
        g.add_edge(f"channel_{side}", "queue", credit=list(queue_spec))
    g.add_node("queue")
    return flow_graph_from_networkx(g, "closed-connection")


def settle(
    graph: FlowGraph, state: rules.NetworkState, held: Iterable[str] = ()
) -> rules.NetworkState:
    """Every enabled step but crashes and the ``held`` processes' own (take, DOWN), in
    the rules' order, until none is left."""
    frozen = set(held)
    while steps := [
        s
        for s in rules.enabled_steps(graph, state)
        if s.kind != "crash" and not (s.node in frozen and s.kind in ("take", "down"))
    ]:
        state = rules.apply(graph, state, steps[0])
    return state


@dataclass(frozen=True)
class ClosePrediction:
    """The model's cuts: before the close, after it while the queue is held, and after
    the resume once everything has settled."""

    graph: FlowGraph
    before: rules.NetworkState
    held: rules.NetworkState
    after: rules.NetworkState

    def blocked(self, state: rules.NetworkState) -> set[str]:
        """The live publishers that are blocked in ``state`` (CF-BLOCKED)."""
        return {n for n in PUBLISHERS if rules.is_alive(state, n) and rules.is_blocked(state, n)}

    def live_pairs(self, state: rules.NetworkState) -> int:
        """Credit pairs whose two ends are alive (PROP-FAULT-LIVE-PAIRS)."""
        return sum(
            1
            for e in self.graph.edges
            if rules.is_alive(state, e.sender) and rules.is_alive(state, e.receiver)
        )


def predict_close(
    reader_spec: tuple[int, int], queue_spec: tuple[int, int], publishes: int, client_side: bool
) -> ClosePrediction:
    """OBS-DIFF-CLOSE: connection a closed while both connections are blocked on the
    held queue. Server side: a's channel, then its reader, crash at once (NET-CRASH;
    what the channel sent stays in flight and its DOWN follows it, NET-DOWN). Client
    side: the close waits behind the publishes a's blocked reader does not read
    (NET-READ), so nothing changes until the queue is resumed; then a's reader reads
    to the end and both processes die in a quiet state."""
    graph = two_publishers(reader_spec, queue_spec, publishes)
    before = settle(graph, rules.initial_state(graph), held=("queue",))
    closed = before
    if not client_side:
        for node in CLOSED:
            closed = rules.apply(graph, closed, rules.Step("crash", node))
    held = settle(graph, closed, held=("queue",))
    after = settle(graph, held)
    if client_side:
        for node in CLOSED:
            after = rules.apply(graph, after, rules.Step("crash", node))
        after = settle(graph, after)
    return ClosePrediction(graph, before, held, after)
