"""A credit network with its properties, as a :class:`~creditflow.model.system.TransitionSystem`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creditflow.conformance.explore.certificate import StuckCertificate
from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMP,
    BUMPS,
    CRASH,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    DOWN,
    EDGE_FIELDS,
    FIELD_NAMES,
    READ,
    TAKE,
    CreditNetwork,
    State,
)
from creditflow.conformance.explore.properties import (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    FAULT_PROPERTIES,
    FORGOTTEN,
    STATE_PROPERTIES,
    MessageMoves,
    NetworkProperties,
    edge_conserved,
)
from creditflow.model.network.graph import FlowGraph


class CheckedNetwork:
    """The NET transition system of a graph plus its PROP state properties."""

    def __init__(
        self, graph: FlowGraph, mailbox_bound: int | None = None, count_consumed: bool = True
    ) -> None:
        self.graph = graph
        self.network = CreditNetwork(graph, count_consumed=count_consumed)
        self.properties = NetworkProperties(self.network, mailbox_bound)
        self.process_names = graph.node_names
        net = self.network
        #: PROP-FAULT-FORGET and PROP-RECOVERY only on graphs with faults
        self.property_ids = FAULT_PROPERTIES if net.crashable else STATE_PROPERTIES
        self.initial = net.initial
        self.successors = net.successors
        self.describe = net.describe
        self.blocked_mask = net.blocked_mask
        self.pending_work = net.pending_work
        self.violations = self.properties.violations
        #: PROP-RECOVERY: no further crash possible
        self.quiet = net.quiet
        self.safe_actions = self._safe_actions(mailbox_bound)
        #: EXP-CERTIFICATE: processes certainly blocked forever in a state (EXP-ONLINE)
        self.certificate = StuckCertificate(self.network)
        self.stuck_certificate = self.certificate.mask
        if net.crashable:
            # EXP-FAULTS: a crash still possible may release a process the certificate
            # names (its blocker dies, CF-PEER-DOWN), so it certifies nothing here
            self.stuck_certificate = _nobody
        if not count_consumed:
            #: PROP-NOTHING-LOST on every explored step (EXP-FINITE), for any graph
            self.moves = MessageMoves(self.network)
            self.step_violations = self.moves.violations

    def _safe_actions(self, mailbox_bound: int | None) -> frozenset[int]:
        """EXP-SAFE: actions that commute with every action, are never disabled by
        another, never block anybody and leave every checked property's truth unchanged:

        * a sink's take (NET-TAKE at a node without successors): it never blocks or
          defers, and touches only its own pair's FIFO and counters; not when the
          sender checks blocked (PROP-IN-FLIGHT-BOUND watches that FIFO) nor when a
          mailbox bound is checked (PROP-MAILBOX-BOUND watches every FIFO);
        * a pure source's bump (NET-BUMP at a node without predecessors): it only adds
          credit, so it can only unblock, and with no deferred grants it flushes nothing.
        """
        net = self.network
        if net.crashable:
            return frozenset()  # EXP-FAULTS: a crash disables a sink's take
        safe = set()
        for e, (sender, receiver) in enumerate(net.edge_ends):
            spec = self.graph.edges[e]
            if (
                mailbox_bound is None
                and not net.out_edges[receiver]
                and not net.stalled[receiver]
                and not (net.checks[sender] and spec.credit.blocks)
            ):
                safe.add(TAKE << ACTION_SHIFT | e)
            if not net.in_edges[sender] and not net.stalled[sender]:
                safe.add(BUMP << ACTION_SHIFT | e)
        return frozenset(safe)

    def unblock_helpers(self, state: State, needed: int) -> int:
        """EXP-UNBLOCK: the processes whose steps a search for a run unblocking the
        processes of ``needed`` (a mask) follows from ``state``: those processes and,
        transitively, every process one of them is blocked on (NET-BLOCKED), as a mask."""
        net = self.network
        helpers = needed
        todo = [n for n in range(net.n_nodes) if needed >> n & 1]
        while todo:
            for r in net.blockers(state, todo.pop()):
                if not helpers >> r & 1:
                    helpers |= 1 << r
                    todo.append(r)
        return helpers

    def actor(self, action: int) -> int | None:
        """The process that takes ``action``, or ``None`` for a NET-READ or a NET-CRASH
        (EXP-UNBLOCK follows no new publish and no crash)."""
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        if kind in (READ, CRASH):
            return None
        if kind == DOWN:
            return self.network.down_pairs[index][0]  # the watcher handles the DOWN
        sender, receiver = self.network.edge_ends[index]
        return receiver if kind == TAKE else sender

    def credit_deficit(self, state: State, needed: int) -> int:
        """EXP-UNBLOCK's guide: over the blocking out-edges of the processes of
        ``needed``, the credit still missing once the grants in flight are handled."""
        net = self.network
        deficit = 0
        for n in range(net.n_nodes):
            if needed >> n & 1:
                for e in net.out_edges[n]:
                    if net.edge_blocks[e]:
                        base = EDGE_FIELDS * e
                        weight = max(net.more_after[e], 0)
                        have = state[base + CREDIT_FROM] + weight * state[base + BUMPS]
                        deficit += max(0, 1 - have)
        return deficit

    def explain(self, state: State, property_id: str) -> str:
        """Where ``state`` violates ``property_id``, in one line."""
        net = self.network
        names = self.process_names
        if property_id == CONSERVATION:
            bad = []
            for e, (s, r) in enumerate(net.edge_ends):
                spec = self.graph.edges[e]
                f = state[EDGE_FIELDS * e : EDGE_FIELDS * (e + 1)]
                credit_from, credit_to, data, bumps, deferred = f
                initial, more_after = spec.credit
                if not edge_conserved(
                    credit_from,
                    credit_to,
                    data,
                    bumps,
                    deferred,
                    initial,
                    more_after,
                    spec.sends_per_message,
                ):
                    bad.append(f"{names[s]}->{names[r]} {dict(zip(FIELD_NAMES, f, strict=True))}")
            return "credit not conserved on " + "; ".join(bad)
        if property_id == DEFERRED_IMPLIES_BLOCKED:
            return "grants deferred by a process that is not blocked"
        if property_id == FORGOTTEN:
            leaks = "; ".join(
                f"{names[p]} keeps {', '.join(entries)} for dead {names[d]} "
                + (
                    "(an ack after CF-PEER-DOWN re-created it, NET-DOWN-EARLY)"
                    if net.peer_down[p]
                    else "(its DOWN handler does not call CF-PEER-DOWN)"
                )
                for p, d, entries in net.leaked_entries(state)
            )
            return leaks or "a live process keeps credit for a dead peer whose DOWN it handled"
        return property_id

    def render(self, state: State) -> Mapping[str, Any]:
        """Named variables (the ITF ``vars``) of a network state."""
        net = self.network
        names = self.process_names
        pairs = [(names[s], names[r]) for s, r in net.edge_ends]
        consumed = (
            {"consumed": {names[n]: net.delivered(state, n) for n in net.sink_nodes}}
            if net.count_consumed
            else {}
        )

        def per_edge(field: int) -> dict[tuple[str, str], int]:
            return {pair: state[EDGE_FIELDS * e + field] for e, pair in enumerate(pairs)}

        return {
            "credit_from": per_edge(CREDIT_FROM),
            "credit_to": per_edge(CREDIT_TO),
            "data_in_flight": per_edge(DATA),
            "bumps_in_flight": per_edge(BUMPS),
            "deferred": per_edge(DEFERRED),
            "blocked": {
                names[n]: frozenset(names[r] for r in net.blockers(state, n))
                for n in range(net.n_nodes)
            },
            "publishes_left": {names[n]: net.remaining(state, n) for n in net.source_nodes},
            **consumed,
            **self._render_faults(state),
        }

    def _render_faults(self, state: State) -> dict[str, Any]:
        """NET-CRASH, NET-DOWN, NET-LOST-TO-CRASH variables of a graph with faults."""
        net = self.network
        if not net.crashable:
            return {}
        names = self.process_names
        assert net.crash_count_slot is not None
        found: dict[str, Any] = {
            "dead": frozenset(names[n] for n in net.crashable if not net.alive(state, n)),
            "down_handled": frozenset(
                (names[p], names[d]) for (p, d), slot in net.handled_slot.items() if state[slot]
            ),
            "crashes": state[net.crash_count_slot],
        }
        if net.lost_slot:
            found["lost_to_crash"] = {names[n]: state[slot] for n, slot in net.lost_slot.items()}
        return found

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        step = self.network.decode(action)
        return step.kind, {"node": step.node, "peer": step.peer}


def _nobody(state: State) -> int:
    """A certificate that names no process."""
    return 0
