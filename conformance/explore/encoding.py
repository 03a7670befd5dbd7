"""The network semantics of credit flow over a process graph (NET-*).

Read next to ``spec/network.md``. A network state is a flat tuple of ints, so
that it is immutable, hashable and cheap to store by the million:

* per edge ``e = S->R`` (in graph order), five fields at ``5*e``:
  ``credit_from`` (S's ``credit_from[R]``), ``credit_to`` (R's ``credit_to[S]``),
  ``data`` (messages S->R not yet taken by R), ``bumps`` (grants R->S in flight),
  ``deferred`` (grants R owes S, held back while R is blocked);
* per source, the publishes it has not read yet (NET-SOURCE);
* per sink (a node without successors), the messages it has consumed — only when
  ``count_consumed`` is set (the default, used by the Z3 encoding, the conformance
  machinery and the ITF traces). The explorer leaves the counters out (EXP-FINITE):
  no property needs them (PROP-NOTHING-LOST is a step property), and on a graph where
  a cycle feeds a sink they grow forever.

Messages of one pair are indistinguishable, so each FIFO is a count
(NET-FIFO). Whether a process is blocked is not stored: with the send-only
blocking of a network, ``R`` is among ``S``'s blockers exactly when the edge can
block (``InitialCredit >= 1``) and ``credit_from <= 0`` (NET-BLOCKED). The
per-process model in :mod:`creditflow.model.credit.flow` keeps the multiset;
``tests/test_network_vs_process.py`` checks that the two agree on every step.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any, cast

from creditflow.model.network.graph import FlowGraph
from creditflow.model.network.rules import Step

CREDIT_FROM, CREDIT_TO, DATA, BUMPS, DEFERRED = range(5)
EDGE_FIELDS = 5
FIELD_NAMES = ("credit_from", "credit_to", "data", "bumps", "deferred")

#: Action kinds; an action is ``kind << ACTION_SHIFT | index`` (node index for READ,
#: edge index for TAKE and BUMP).
READ, TAKE, BUMP = 0, 1, 2
ACTION_SHIFT = 20
ACTION_NAMES = ("read", "take", "bump")

State = tuple[int, ...]


class CreditNetwork:
    """The NET transition system of a :class:`FlowGraph`."""

    def __init__(self, graph: FlowGraph, count_consumed: bool = True) -> None:
        self.graph = graph
        #: whether the state carries the sinks' consumed counters (EXP-FINITE)
        self.count_consumed = count_consumed
        names = graph.node_names
        index = {name: i for i, name in enumerate(names)}
        self.node_index = index
        n_edges = len(graph.edges)
        self.n_nodes = len(names)
        self.n_edges = n_edges
        self.edge_index = {(e.sender, e.receiver): i for i, e in enumerate(graph.edges)}
        self.edge_ends = tuple((index[e.sender], index[e.receiver]) for e in graph.edges)

        base = EDGE_FIELDS * n_edges
        self.source_nodes = tuple(i for i, n in enumerate(graph.nodes) if n.source)
        self.remaining_slot = {n: base + j for j, n in enumerate(self.source_nodes)}
        base += len(self.source_nodes)
        out_degree = [0] * self.n_nodes
        for s, _ in self.edge_ends:
            out_degree[s] += 1
        self.sink_nodes = tuple(i for i in range(self.n_nodes) if out_degree[i] == 0)
        counted = self.sink_nodes if count_consumed else ()
        self.delivered_slot = {n: base + j for j, n in enumerate(counted)}
        self.size = base + len(counted)

        self.checks = tuple(n.checks_blocked for n in graph.nodes)
        self.stalled = tuple(n.stalled for n in graph.nodes)
        self.initial_credit = tuple(e.credit.initial for e in graph.edges)
        self.more_after = tuple(e.credit.more_after for e in graph.edges)
        self.debits = tuple(e.sends_per_message for e in graph.edges)
        # NET-BLOCKED, CF-DISABLED: whether each edge can block its sender (I >= 1). Kept
        # as the spec's own test, not as a plain bool, so that the Z3 encoding
        # (conformance/symbolic/encoding.py) can run this very code on symbolic credits.
        self.edge_blocks = tuple(e.credit.blocks for e in graph.edges)
        out_edges: list[list[int]] = [[] for _ in range(self.n_nodes)]
        in_edges: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for i, (s, r) in enumerate(self.edge_ends):  # IN-WORK: linear, not nodes x edges
            out_edges[s].append(i)
            in_edges[r].append(i)
        self.out_edges = tuple(map(tuple, out_edges))
        self.in_edges = tuple(map(tuple, in_edges))
        #: Every action of the graph, in the fixed order of :meth:`enabled`.
        self.actions = (
            tuple(READ << ACTION_SHIFT | n for n in self.source_nodes)
            + tuple(TAKE << ACTION_SHIFT | e for e in range(n_edges))
            + tuple(BUMP << ACTION_SHIFT | e for e in range(n_edges))
        )

    @cached_property
    def blocking_slots(self) -> tuple[tuple[int, ...], ...]:
        """NET-BLOCKED: per node, the credit_from slots whose value <= 0 blocks it."""
        return tuple(
            tuple(EDGE_FIELDS * e + CREDIT_FROM for e in self.out_edges[n] if self.edge_blocks[e])
            for n in range(self.n_nodes)
        )

    # -- state ------------------------------------------------------------------------

    def initial(self) -> State:
        """NET-INIT: full credit on every edge, empty FIFOs, full supplies."""
        state = [0] * self.size
        for i, e in enumerate(self.graph.edges):
            state[EDGE_FIELDS * i + CREDIT_FROM] = e.credit.initial
            state[EDGE_FIELDS * i + CREDIT_TO] = e.credit.more_after
        for n, slot in self.remaining_slot.items():
            state[slot] = self.graph.nodes[n].publishes
        return tuple(state)

    def field(self, state: State, edge: int, field: int) -> int:
        return state[EDGE_FIELDS * edge + field]

    def blocks_on(self, state: Sequence[int], edge: int) -> bool:
        """NET-BLOCKED: the sender of ``edge`` is blocked on its receiver: the edge can
        block (CF-DISABLED) and its credit_from is used up."""
        return self.edge_blocks[edge] and state[EDGE_FIELDS * edge + CREDIT_FROM] <= 0

    def is_blocked(self, state: Sequence[int], node: int) -> bool:
        """NET-BLOCKED: some blocking out-edge of ``node`` has no credit left."""
        return any(self.blocks_on(state, e) for e in self.out_edges[node])

    def blockers(self, state: State, node: int) -> tuple[int, ...]:
        """The nodes ``node`` is blocked on (NET-BLOCKED)."""
        return tuple(self.edge_ends[e][1] for e in self.out_edges[node] if self.blocks_on(state, e))

    def blocked_mask(self, state: State) -> int:
        """Bit ``n`` set iff node ``n`` is blocked."""
        mask = 0
        for node, slots in enumerate(self.blocking_slots):
            for slot in slots:
                if state[slot] <= 0:
                    mask |= 1 << node
                    break
        return mask

    def remaining(self, state: State, node: int) -> int:
        slot = self.remaining_slot.get(node)
        return 0 if slot is None else state[slot]

    def delivered(self, state: State, node: int) -> int:
        slot = self.delivered_slot.get(node)
        return 0 if slot is None else state[slot]

    def mailbox(self, state: State, node: int) -> int:
        """Data messages waiting for ``node``, over all its senders."""
        return sum(state[EDGE_FIELDS * e + DATA] for e in self.in_edges[node])

    def pending_work(self, state: State) -> bool:
        """Work that a non-stalled process still has to do: unread publishes or waiting
        messages (NET-DEADLOCK's "nothing can move while work is pending")."""
        for node in range(self.n_nodes):
            if self.stalled[node]:
                continue
            if self.remaining(state, node) or self.mailbox(state, node):
                return True
        return False

    def counts(self, state: State) -> dict[str, dict[Any, Any]]:
        """The state in the count form of :func:`creditflow.model.network.rules.counts`,
        which ``tests/test_network_rules.py`` compares with the readable rules."""
        names = self.graph.node_names
        pairs = {}
        for e, (s, r) in enumerate(self.edge_ends):
            base = EDGE_FIELDS * e
            pairs[(names[s], names[r])] = tuple(state[base + f] for f in range(EDGE_FIELDS))
        return {
            "pairs": pairs,
            "blockers": {
                names[n]: tuple(sorted(names[b] for b in self.blockers(state, n)))
                for n in range(self.n_nodes)
            },
            "supply": {names[n]: state[slot] for n, slot in self.remaining_slot.items()},
            "consumed": {names[n]: state[slot] for n, slot in self.delivered_slot.items()},
        }

    # -- actions ------------------------------------------------------------------------

    def _can_work(self, state: State, node: int) -> bool:
        """NET-STALLED, NET-CHECKS-BLOCKED: may ``node`` take data or read a publish?"""
        if self.stalled[node]:
            return False
        return not (self.checks[node] and self.is_blocked(state, node))

    def is_enabled(self, state: State, action: int) -> bool:
        """The guard of one action: NET-READ (supply left), NET-TAKE (a message waiting),
        NET-BUMP (a grant waiting, the sender not stalled)."""
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        if kind == READ:
            return state[self.remaining_slot[index]] > 0 and self._can_work(state, index)
        if kind == TAKE:
            receiver = self.edge_ends[index][1]
            return state[EDGE_FIELDS * index + DATA] > 0 and self._can_work(state, receiver)
        return state[EDGE_FIELDS * index + BUMPS] > 0 and not self.stalled[self.edge_ends[index][0]]

    def enabled(self, state: State) -> Iterator[int]:
        """The actions enabled in ``state``, in a fixed order (:attr:`actions`)."""
        return (a for a in self.actions if self.is_enabled(state, a))

    def _forward(self, s: list[int], node: int) -> None:
        """NET-FORWARD: ``send`` toward every successor (CF-SEND, possibly blocking the
        node on the 1 -> 0 transition) and append one message to each pair's FIFO."""
        for e in self.out_edges[node]:
            base = EDGE_FIELDS * e
            s[base + CREDIT_FROM] -= self.debits[e]
            s[base + DATA] += 1
        slot = self.delivered_slot.get(node)
        if slot is not None:
            s[slot] += 1  # NET-SINK: a node without successors consumes the message

    def apply(self, state: State, action: int) -> State:
        """Apply one enabled action (NET-READ, NET-TAKE, NET-BUMP) as one atomic step
        (NET-ATOMIC)."""
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        s = list(state)
        if kind == READ:
            # NET-READ: a source reads one publish and forwards it.
            s[self.remaining_slot[index]] -= 1
            self._forward(s, index)
        elif kind == TAKE:
            # NET-TAKE: the receiver takes the oldest message of the pair, acks it
            # (CF-ACK; the grant is deferred if the receiver is blocked, CF-DEFER) and
            # forwards it (NET-FORWARD).
            sender, receiver = self.edge_ends[index]
            base = EDGE_FIELDS * index
            s[base + DATA] -= 1
            blocked = self.is_blocked(state, receiver)
            for _ in range(self.debits[index]):
                left = s[base + CREDIT_TO]
                if left == 1:
                    s[base + CREDIT_TO] = self.more_after[index]
                    s[base + (DEFERRED if blocked else BUMPS)] += 1
                else:
                    s[base + CREDIT_TO] = left - 1
            self._forward(s, receiver)
        elif kind == BUMP:
            # NET-BUMP: the sender handles the oldest grant of the pair (CF-BUMP); a
            # crossing from <= 0 to > 0 unblocks on that peer and, if no blocker is
            # left, flushes every deferred grant (CF-UNBLOCK, CF-FLUSH).
            sender, _ = self.edge_ends[index]
            base = EDGE_FIELDS * index
            s[base + BUMPS] -= 1
            credit = s[base + CREDIT_FROM]
            s[base + CREDIT_FROM] = credit + self.more_after[index]
            if credit <= 0 < credit + self.more_after[index] and not self.is_blocked(s, sender):
                for g in self.in_edges[sender]:
                    gb = EDGE_FIELDS * g
                    s[gb + BUMPS] += s[gb + DEFERRED]
                    s[gb + DEFERRED] = 0
        else:
            raise ValueError(f"unknown action {action}")
        return tuple(s)

    def successors(self, state: State) -> list[tuple[int, State]]:
        """Every (action, next state) pair of ``state``."""
        return [(a, self.apply(state, a)) for a in self.enabled(state)]

    # -- naming -------------------------------------------------------------------------

    def decode(self, action: int) -> Step:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        names = self.graph.node_names
        if kind == READ:
            return Step("read", names[index])
        sender, receiver = self.edge_ends[index]
        if kind == TAKE:
            return Step("take", names[receiver], names[sender])
        return Step("bump", names[sender], names[receiver])

    def encode(self, step: Step) -> int:
        """The action code of a decoded step; ``KeyError``/``ValueError`` if unknown."""
        if step.kind == "read":
            node = self.node_index[step.node]
            if node not in self.remaining_slot:
                raise ValueError(f"{step.node} is not a source")
            return READ << ACTION_SHIFT | node
        if step.kind == "take":
            return TAKE << ACTION_SHIFT | self.edge_index[(cast(str, step.peer), step.node)]
        if step.kind == "bump":
            return BUMP << ACTION_SHIFT | self.edge_index[(step.node, cast(str, step.peer))]
        raise ValueError(f"unknown step kind {step.kind!r}")

    def describe(self, action: int) -> str:
        return str(self.decode(action))
