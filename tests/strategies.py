"""Hypothesis strategies shared by the tests: small process graphs and credit specs."""

from __future__ import annotations

import networkx as nx
from hypothesis import strategies as st

from creditflow.model.credit_spec import CreditSpec
from creditflow.model.graph import FlowGraph, flow_graph_from_networkx

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
