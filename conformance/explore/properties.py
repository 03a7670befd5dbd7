"""State properties of a credit network (PROP-*), read next to ``spec/properties.md``.

Deadlock (PROP-NO-DEADLOCK) is not a property of one state; the explorer decides
it over the reachable state graph (see :mod:`creditflow.conformance.explore.deadlock`).
"""

from __future__ import annotations

from operator import itemgetter

from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMPS,
    CRASH,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    READ,
    TAKE,
    CreditNetwork,
    State,
)
from creditflow.model.network.properties import (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    FAULT_PROPERTIES,
    FORGOTTEN,
    IN_FLIGHT_BOUND,
    MAILBOX_BOUND,
    NO_DEADLOCK,
    NOTHING_LOST,
    RECOVERY,
    STATE_PROPERTIES,
    edge_conserved,
    paths_to_sinks,
)

__all__ = [
    "CONSERVATION",
    "DEFERRED_IMPLIES_BLOCKED",
    "IN_FLIGHT_BOUND",
    "MAILBOX_BOUND",
    "NOTHING_LOST",
    "NO_DEADLOCK",
    "FAULT_PROPERTIES",
    "FORGOTTEN",
    "RECOVERY",
    "STATE_PROPERTIES",
    "MessageMoves",
    "NetworkProperties",
    "edge_conserved",
    "sink_path_counts",
]


def sink_path_counts(net: CreditNetwork) -> dict[int, dict[int, int]] | None:
    """PROP-NOTHING-LOST weights of :func:`~creditflow.model.network.properties.paths_to_sinks`
    by node index: per sink index, the number of paths from each node that has one (sparse,
    IN-WORK); ``None`` when the graph has a cycle."""
    by_name = paths_to_sinks(net.graph)
    if by_name is None:
        return None
    index = net.node_index
    return {
        index[sink]: {index[name]: count for name, count in paths.items()}
        for sink, paths in by_name.items()
    }


class NetworkProperties:
    """The state properties of one network, compiled for fast checking.

    ``mailbox_bound``: if given, PROP-MAILBOX-BOUND requires every process's mailbox
    (data waiting from all senders) to stay at or below it.
    """

    def __init__(self, network: CreditNetwork, mailbox_bound: int | None = None) -> None:
        self.network = net = network
        self.mailbox_bound = mailbox_bound
        edges = []
        for e, spec in enumerate(net.graph.edges):
            sender = net.edge_ends[e][0]
            checked_bound = (
                spec.credit.initial + spec.sends_per_message - 1
                if net.checks[sender] and spec.credit.blocks
                else None
            )
            edges.append(
                (
                    EDGE_FIELDS * e,
                    spec.credit.initial,
                    spec.credit.more_after,
                    spec.sends_per_message,
                    checked_bound,
                )
            )
        self._edges = tuple(edges)
        #: PROP-FAULT-LIVE-PAIRS: on a graph with faults, per edge its two ends
        self._ends = net.edge_ends if net.crashable else None
        self.lost_terms = self._nothing_lost_terms()

    def _nothing_lost_terms(self) -> tuple | None:
        """PROP-NOTHING-LOST weights for DAGs (see :func:`sink_path_counts`); ``None`` for
        graphs with cycles and for networks without consumed counters (then
        :class:`MessageMoves` checks it on every step, EXP-FINITE)."""
        net = self.network
        counts = sink_path_counts(net) if net.count_consumed else None
        if counts is None:
            return None
        terms = []
        for sink, paths in counts.items():
            data_weights = tuple(
                sorted(
                    (EDGE_FIELDS * e + DATA, paths[r])
                    for r in paths
                    for e in net.in_edges[r]
                    if paths[r]
                )
            )
            source_weights = tuple(
                (net.remaining_slot[n], net.graph.nodes[n].publishes, paths[n])
                for n in net.source_nodes
                if paths.get(n)
            )
            # PROP-FAULT-LOST: a message lost to d's crash would have gone on from d
            data_weights += tuple(
                (slot, paths[d]) for d, slot in net.lost_slot.items() if paths.get(d)
            )
            terms.append((net.delivered_slot[sink], data_weights, source_weights))
        return tuple(terms)

    @property
    def checks_nothing_lost(self) -> bool:
        return self.lost_terms is not None

    def violations(self, s: State) -> tuple[str, ...]:
        """The ids of the state properties that ``s`` violates (empty if none)."""
        found: list[str] = []
        net = self.network
        ends = self._ends
        for e, (base, initial, more_after, debits, checked_bound) in enumerate(self._edges):
            if ends is not None and not (net.alive(s, ends[e][0]) and net.alive(s, ends[e][1])):
                continue  # PROP-FAULT-LIVE-PAIRS
            if (
                CONSERVATION not in found
                and s[base + CREDIT_FROM]
                + debits * s[base + DATA]
                + (more_after - s[base + CREDIT_TO])
                + more_after * (s[base + BUMPS] + s[base + DEFERRED])
                != initial
            ):
                found.append(CONSERVATION)
            if (
                checked_bound is not None
                and IN_FLIGHT_BOUND not in found
                and (debits * s[base + DATA] > checked_bound or s[base + CREDIT_FROM] < 1 - debits)
            ):
                found.append(IN_FLIGHT_BOUND)
        for node in range(net.n_nodes):
            if (
                any(s[EDGE_FIELDS * g + DEFERRED] for g in net.in_edges[node])
                and not net.is_blocked(s, node)
                and net.alive(s, node)
            ):
                found.append(DEFERRED_IMPLIES_BLOCKED)
                break
        if self.mailbox_bound is not None:
            for node in range(net.n_nodes):
                if net.mailbox(s, node) > self.mailbox_bound:
                    found.append(MAILBOX_BOUND)
                    break
        # PROP-FAULT-FORGET: a live process handled a DOWN and still holds an entry for
        # the dead peer: it ignored the DOWN after using the entry (CF-ENTRY), or acked
        # after CF-PEER-DOWN (NET-DOWN-EARLY)
        forgotten = ends is not None and bool(net.leaked_entries(s))
        if self.lost_terms is not None:
            for delivered_slot, data_weights, source_weights in self.lost_terms:
                in_system = s[delivered_slot] + sum(s[slot] * w for slot, w in data_weights)
                published = sum((total - s[slot]) * w for slot, total, w in source_weights)
                if in_system != published:
                    found.append(NOTHING_LOST)
                    break
        if forgotten:
            found.append(FORGOTTEN)
        return tuple(found)


class MessageMoves:
    """PROP-NOTHING-LOST as a step property, for networks without consumed counters
    (EXP-FINITE): every step moves messages and never drops or invents one. A NET-READ
    of source ``n`` takes one publish from its supply and puts one message on each
    out-edge of ``n``; a NET-TAKE on edge ``e`` takes one message from ``e``'s FIFO and
    puts one on each out-edge of its receiver (none for a sink, which consumes it); a
    NET-BUMP moves no message. Every other FIFO and supply stays as it was.

    The expected movement is derived from the graph alone, not from the rule code, and
    compared with the difference of the two states' message counts (FIFOs and supplies).
    On a graph with faults (PROP-FAULT-LOST) it also depends on who is dead before the
    step: a copy toward a dead receiver is lost to its crash (no FIFO gains it), a
    NET-CRASH of ``d`` empties exactly ``d``'s FIFOs, a NET-DOWN moves nothing.
    """

    def __init__(self, network: CreditNetwork) -> None:
        net = network
        slots = [EDGE_FIELDS * e + DATA for e in range(net.n_edges)]
        slots += [net.remaining_slot[n] for n in net.source_nodes]
        #: the message slots (FIFOs, then supplies) and each action's expected change
        self.slots = tuple(slots)
        position = {slot: i for i, slot in enumerate(slots)}
        # a tuple even for a single slot: itemgetter of one index returns a scalar
        self._get = itemgetter(*slots, *slots[:1]) if slots else (lambda state: ())
        # IN-WORK: each action's change is kept sparse — the few slots it moves, as
        # (position, amount) — so the table is linear in the actions and their
        # out-edges, not actions × slots (20,000 edges once needed gigabytes).
        moves: dict[int, tuple[tuple[int, int], ...]] = {}
        for action in net.actions:
            kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
            delta: dict[int, int] = {}
            if kind == READ:
                taken = position[net.remaining_slot[index]]
                delta[taken] = delta.get(taken, 0) - 1
                taker = index
            elif kind == TAKE:
                taken = position[EDGE_FIELDS * index + DATA]
                delta[taken] = delta.get(taken, 0) - 1
                taker = net.edge_ends[index][1]
            else:
                taker = None
            if taker is not None:
                for e in net.out_edges[taker]:
                    put = position[EDGE_FIELDS * e + DATA]
                    delta[put] = delta.get(put, 0) + 1
            moves[action] = tuple(sorted((i, d) for i, d in delta.items() if d))
        self._moves = moves
        self.network = net
        self._position = position

    def _expected_after(self, before: State, action: int) -> tuple[int, ...]:
        """The message slots after the step (as ``_get`` reads them): the graph's own
        movement, and on a graph with faults (PROP-FAULT-LOST) a copy toward a dead
        receiver lost to its crash and a NET-CRASH emptying the dead process's FIFOs."""
        expected = list(self._get(before))
        for i, d in self._moves[action]:
            expected[i] += d
        net = self.network
        if net.crashable:
            position = self._position
            kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
            if kind == CRASH:
                for e in net.in_edges[index]:
                    expected[position[EDGE_FIELDS * e + DATA]] -= before[EDGE_FIELDS * e + DATA]
            elif kind in (READ, TAKE):
                taker = index if kind == READ else net.edge_ends[index][1]
                for e in net.out_edges[taker]:
                    if not net.alive(before, net.edge_ends[e][1]):
                        expected[position[EDGE_FIELDS * e + DATA]] -= 1
        if expected:
            expected[-1] = expected[0]  # the repeated first slot
        return tuple(expected)

    def change(self, action: int) -> tuple[int, ...]:
        """The change of each of :attr:`slots` that ``action`` must make."""
        dense = [0] * len(self.slots)
        for i, d in self._moves[action]:
            dense[i] = d
        return tuple(dense)

    def violations(self, before: State, action: int, after: State) -> tuple[str, ...]:
        """``(NOTHING_LOST,)`` if the step ``before -action-> after`` does not move
        messages as PROP-NOTHING-LOST says, else ``()``."""
        get = self._get
        if self._expected_after(before, action) == get(after):
            return ()
        return (NOTHING_LOST,)
