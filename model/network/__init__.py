"""Credit flow over a process graph (NET-*): the graph, the readable network rules that
call the CF functions, and the properties every network state must satisfy (PROP-*).

Read next to ``spec/network.md`` and ``spec/properties.md``. The explorer's flat,
optimised encoding of the same semantics lives in :mod:`creditflow.conformance.explore`
and is checked against these rules."""

from creditflow.model.network.graph import (
    EdgeSpec,
    FlowGraph,
    GraphError,
    NodeSpec,
    flow_graph_from_networkx,
)
from creditflow.model.network.properties import (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    IN_FLIGHT_BOUND,
    MAILBOX_BOUND,
    NO_DEADLOCK,
    NOTHING_LOST,
    STATE_PROPERTIES,
    edge_conserved,
    paths_to_sinks,
)
from creditflow.model.network.rules import (
    NetworkState,
    Step,
    apply,
    enabled_steps,
    initial_state,
)
from creditflow.model.network.system import ReadableNetwork

__all__ = [
    "CONSERVATION",
    "DEFERRED_IMPLIES_BLOCKED",
    "EdgeSpec",
    "FlowGraph",
    "GraphError",
    "IN_FLIGHT_BOUND",
    "MAILBOX_BOUND",
    "NOTHING_LOST",
    "NO_DEADLOCK",
    "NetworkState",
    "NodeSpec",
    "ReadableNetwork",
    "STATE_PROPERTIES",
    "Step",
    "apply",
    "edge_conserved",
    "enabled_steps",
    "flow_graph_from_networkx",
    "initial_state",
    "paths_to_sinks",
]
