"""Hypothesis strategies shared by the tests: small process graphs and credit specs."""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
from hypothesis import strategies as st

from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx

small_specs = st.builds(CreditSpec, st.integers(-1, 3), st.integers(-1, 3))
sane_specs = st.builds(CreditSpec, st.integers(1, 3), st.integers(1, 3)).filter(
    lambda s: s.more_after <= s.initial
)


@st.composite
def process_graphs(
    draw: st.DrawFn,
    max_nodes: int = 4,
    specs: st.SearchStrategy[CreditSpec] = small_specs,
    max_publishes: int = 3,
    acyclic: bool = False,
    allow_stalled: bool = True,
) -> FlowGraph:
    """A small random process graph with random attributes."""
    n = draw(st.integers(2, max_nodes))
    g = nx.DiGraph(name="random")
    names = [f"n{i}" for i in range(n)]
    for i, name in enumerate(names):
        attrs: dict[str, object] = {}
        if i == 0 or draw(st.booleans()) and draw(st.booleans()):
            attrs["source"] = True
            attrs["publishes"] = draw(st.integers(1, max_publishes))
        if draw(st.integers(0, 3)) == 0:
            attrs["checks_blocked"] = draw(st.booleans())
        if allow_stalled and i > 0 and draw(st.integers(0, 6)) == 0:
            attrs["stalled"] = True
        g.add_node(name, **attrs)
    for i in range(n):
        for j in range(n):
            if i == j or (acyclic and j <= i):
                continue
            if draw(st.integers(0, 2)) == 0 or (j == i + 1 and draw(st.booleans())):
                g.add_edge(
                    names[i],
                    names[j],
                    credit=list(draw(specs)),
                    sends_per_message=draw(st.sampled_from([1, 1, 1, 2])),
                )
    return flow_graph_from_networkx(g)


@st.composite
def actor_graphs(
    draw: st.DrawFn,
    max_actors: int = 4,
    max_reads: int = 3,
    max_limit: int = 3,
    allow_stalled: bool = False,
    allow_crash: bool = True,
    allow_timer: bool = True,
    shared_accounts: bool = False,
):
    """A small random acyclic actor graph (AC-GRAPH) with one or two readers."""
    from creditflow.model.accounts.graph import actor_graph_from_networkx

    n = draw(st.integers(2, max_actors))
    g = nx.DiGraph(name="random-actors", limit=draw(st.integers(0, max_limit)))
    names = [f"x{i}" for i in range(n)]
    n_readers = draw(st.integers(1, min(2, n - 1)))
    for i, name in enumerate(names):
        attrs: dict[str, object] = {}
        if i < n_readers:
            attrs["reads"] = draw(st.integers(1, max_reads))
            attrs["batch"] = draw(st.sampled_from([1, 1, 2]))
            if shared_accounts:
                attrs["account"] = "shared"
        else:
            if allow_stalled and draw(st.integers(0, 5)) == 0:
                attrs["stalled"] = True
            if allow_timer and draw(st.integers(0, 5)) == 0:
                attrs["timer"] = draw(st.integers(1, 2))
        if allow_crash and draw(st.integers(0, 4)) == 0:
            attrs["may_crash"] = True
        g.add_node(name, **attrs)
    for i in range(n):
        for j in range(max(i + 1, n_readers), n):
            if draw(st.integers(0, 2)) == 0 or (j == i + 1 and draw(st.booleans())):
                g.add_edge(names[i], names[j], events=draw(st.sampled_from([1, 1, 2])))
    return actor_graph_from_networkx(g)


@st.composite
def fault_graphs(
    draw: st.DrawFn,
    max_nodes: int = 4,
    specs: st.SearchStrategy[CreditSpec] = small_specs,
    max_publishes: int = 3,
    acyclic: bool = False,
    allow_stalled: bool = True,
    handler_odds: int = 3,
    min_max_crashes: int = 0,
) -> FlowGraph:
    """A small random process graph where at least one paired process may crash
    (NET-FAULT-NODE), some DOWN handlers (one in ``handler_odds + 1``) ignore the DOWN or
    take it early (NET-DOWN-EARLY), and the crash bound varies (at least
    ``min_max_crashes`` when drawn)."""
    graph = draw(process_graphs(max_nodes, specs, max_publishes, acyclic, allow_stalled))
    paired = {e.sender for e in graph.edges} | {e.receiver for e in graph.edges}
    names = [n for n in graph.node_names if n in paired]
    if not names:
        return graph
    crashing = set(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2)))
    g = graph.to_networkx()
    for name in g.nodes:
        if name in crashing:
            g.nodes[name]["may_crash"] = True
        if draw(st.integers(0, handler_odds)) == 0:
            g.nodes[name]["on_peer_down"] = draw(st.sampled_from(["ignore", "peer_down_early"]))
    if draw(st.booleans()):
        g.graph["max_crashes"] = draw(st.integers(min_max_crashes, len(crashing)))
    return flow_graph_from_networkx(g)


#: Small credits: with more publishes, blocking on several peers at once (and deferral)
#: is common.
tight_specs = st.builds(CreditSpec, st.integers(1, 2), st.integers(1, 2))


def with_tight_credit(
    graphs: Callable[..., st.SearchStrategy[FlowGraph]],
) -> st.SearchStrategy[FlowGraph]:
    """Up to four nodes from ``graphs`` (``process_graphs`` or ``fault_graphs``): with
    its default options, or with tight credit, up to six publishes and nothing stalled."""
    return st.one_of(
        graphs(max_nodes=4),
        graphs(max_nodes=4, specs=tight_specs, max_publishes=6, allow_stalled=False),
    )
