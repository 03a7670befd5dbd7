"""Topology features of a process graph, stored with every case (SW-FEATURES).

Example::

    >>> from creditflow.conformance.inputs.graphs import load_preset
    >>> f = graph_features(load_preset("cycle3"))
    >>> (f["nodes"], f["edges"], f["cycles"], f["depth"], f["max_fan_out"])
    (3, 3, 1, 0, 1)
"""

from __future__ import annotations

from itertools import islice

import networkx as nx

from creditflow.model.network.graph import FlowGraph

#: SW-FEATURES: simple cycles are counted up to this many (the value then means "at least").
CYCLE_CAP = 1000

FEATURE_NAMES = (
    "nodes",
    "edges",
    "sources",
    "sinks",
    "cycles",
    "has_cycle",
    "largest_scc",
    "max_fan_out",
    "max_fan_in",
    "depth",
    "mirror_edges",
    "stalled",
    "crashable",
)


def graph_features(graph: FlowGraph) -> dict[str, int | bool]:
    """SW-FEATURES: sizes, cycles (capped at :data:`CYCLE_CAP`), fan-out/fan-in, depth
    (edges on the longest path of the condensation, so a cycle counts as one node), the
    number of multi-debit edges (NET-DEBITS), of stalled processes and of ``may_crash``
    ones (SW-FAULTS)."""
    g = nx.DiGraph()
    g.add_nodes_from(graph.node_names)
    g.add_edges_from((e.sender, e.receiver) for e in graph.edges)
    cycles = sum(1 for _ in islice(nx.simple_cycles(g), CYCLE_CAP))
    condensation = nx.condensation(g)
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "sources": len(graph.sources),
        "sinks": sum(1 for n in g.nodes if g.out_degree(n) == 0),
        "cycles": cycles,
        "has_cycle": cycles > 0,
        "largest_scc": max(len(c) for c in nx.strongly_connected_components(g)),
        "max_fan_out": max(d for _, d in g.out_degree()),
        "max_fan_in": max(d for _, d in g.in_degree()),
        "depth": nx.dag_longest_path_length(condensation),
        "mirror_edges": sum(1 for e in graph.edges if e.sends_per_message > 1),
        "stalled": sum(1 for n in graph.nodes if n.stalled),
        "crashable": len(graph.crashable),
    }
