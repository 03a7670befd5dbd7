"""The readable NET rules as a :class:`~creditflow.model.system.TransitionSystem`, so the
generic explorer can run the specification itself (slowly) and its verdicts can be
compared with the optimised encoding's (``tests/test_network_rules.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.model.network import properties, rules
from creditflow.model.network.graph import FlowGraph
from creditflow.model.network.rules import NetworkState, Step


class ReadableNetwork:
    """NET over :class:`~creditflow.model.network.rules.NetworkState`; action ``i`` is
    ``steps[i]`` (every read, then every take and bump, in graph order)."""

    def __init__(self, graph: FlowGraph, mailbox_bound: int | None = None) -> None:
        self.graph = graph
        self.mailbox_bound = mailbox_bound
        self.process_names = graph.node_names
        self.property_ids = (
            properties.FAULT_PROPERTIES if graph.has_faults else properties.STATE_PROPERTIES
        )
        self.steps: tuple[Step, ...] = (
            *(Step("read", n.name) for n in graph.sources),
            *(Step("take", e.receiver, e.sender) for e in graph.edges),
            *(Step("bump", e.sender, e.receiver) for e in graph.edges),
            *(Step("crash", n.name) for n in graph.crashable if graph.has_faults),
            *(Step("down", p, d) for p, d in rules.down_pairs(graph)),
        )
        self._action = {step: i for i, step in enumerate(self.steps)}

    def initial(self) -> NetworkState:
        return rules.initial_state(self.graph)

    def successors(self, state: NetworkState) -> Sequence[tuple[int, NetworkState]]:
        return [
            (self._action[step], rules.apply(self.graph, state, step))
            for step in rules.enabled_steps(self.graph, state)
        ]

    def describe(self, action: int) -> str:
        return str(self.steps[action])

    def violations(self, state: NetworkState) -> tuple[str, ...]:
        return properties.violations(self.graph, state, self.mailbox_bound)

    def blocked_mask(self, state: NetworkState) -> int:
        """Bit ``i`` set iff process ``i`` is alive and blocked (PROP-FAULT-BLOCKED: a
        dead process is not blocked)."""
        return sum(
            1 << i
            for i, name in enumerate(self.process_names)
            if rules.is_blocked(state, name) and rules.is_alive(state, name)
        )

    def quiet(self, state: NetworkState) -> bool:
        return rules.quiet(self.graph, state)

    def pending_work(self, state: NetworkState) -> bool:
        return rules.pending_work(self.graph, state)

    def render(self, state: NetworkState) -> Mapping[str, Any]:
        return rules.counts(self.graph, state)

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        step = self.steps[action]
        return step.kind, {"node": step.node, "peer": step.peer}
