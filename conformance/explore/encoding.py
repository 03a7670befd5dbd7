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
  a cycle feeds a sink they grow forever;
* only on a graph with faults (NET-CRASH): per ``may_crash`` node 1 while it is alive;
  per DOWN pair ``(p, d)`` (``d`` may crash, ``p`` has a pair with it) 1 once ``p`` has
  handled ``d``'s DOWN (NET-DOWN), 2 once ``p`` has acked a message of ``d`` after it
  (NET-DOWN-EARLY: the ack re-creates the entry CF-PEER-DOWN erased); per DOWN pair
  whose watcher ignores the DOWN, 1 once ``p``'s dictionary holds ``{credit_from, d}``
  (``p`` sent to ``d``) and 1 once it holds ``{credit_to, d}`` (``p`` acked ``d``): an
  entry exists only once used (CF-ENTRY), and only such an entry can leak
  (PROP-FAULT-FORGET); the number of crashes so far (NET-FAULT-BOUND); and, with
  ``count_consumed``, per ``may_crash`` node the messages lost to its crash
  (NET-LOST-TO-CRASH).

A dead process's own fields are reset to the CF defaults (``credit_from = I`` on its
out-edges, ``credit_to = M`` and nothing deferred on its in-edges: its state is gone),
and so are a live process's fields for a peer it called CF-PEER-DOWN for (the erased
entries read as the defaults), which is what the readable rules' counts show.

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

#: Action kinds; an action is ``kind << ACTION_SHIFT | index`` (node index for READ and
#: CRASH, edge index for TAKE and BUMP, DOWN-pair index for DOWN).
READ, TAKE, BUMP, CRASH, DOWN = 0, 1, 2, 3, 4
ACTION_SHIFT = 20
ACTION_NAMES = ("read", "take", "bump", "crash", "down")

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
        base += len(counted)

        # NET-FAULT-NODE, NET-FAULT-BOUND: the fault slots (none without may_crash nodes)
        self.crash_bound = graph.crash_bound
        self.crashable = (
            tuple(i for i, n in enumerate(graph.nodes) if n.may_crash) if graph.has_faults else ()
        )
        self.alive_slot = {n: base + j for j, n in enumerate(self.crashable)}
        base += len(self.crashable)
        down_pairs: dict[tuple[int, int], None] = {}
        for s, r in self.edge_ends:  # edge order: the sender's DOWN first, then the receiver's
            if r in self.alive_slot:
                down_pairs[(s, r)] = None
            if s in self.alive_slot:
                down_pairs[(r, s)] = None
        #: NET-DOWN: (watcher, dead) pairs, in a fixed order
        self.down_pairs = tuple(down_pairs)
        self.handled_slot = {pair: base + j for j, pair in enumerate(self.down_pairs)}
        base += len(self.down_pairs)
        # CF-ENTRY, PROP-FAULT-FORGET: the entries a watcher that ignores DOWN may leak
        ignores = [pair for pair in self.down_pairs if not graph.nodes[pair[0]].calls_peer_down]
        ends = set(self.edge_ends)
        held_from = [(p, d) for p, d in ignores if (p, d) in ends]
        held_to = [(p, d) for p, d in ignores if (d, p) in ends]
        #: (watcher, dead) -> slot: 1 once the watcher holds ``{credit_from, dead}``
        self.held_from_slot = {pair: base + j for j, pair in enumerate(held_from)}
        base += len(held_from)
        #: (watcher, dead) -> slot: 1 once the watcher holds ``{credit_to, dead}``
        self.held_to_slot = {pair: base + j for j, pair in enumerate(held_to)}
        base += len(held_to)
        self.crash_count_slot = base if self.crashable else None
        base += 1 if self.crashable else 0
        lost = self.crashable if count_consumed else ()
        self.lost_slot = {n: base + j for j, n in enumerate(lost)}
        self.size = base + len(lost)
        self.peer_down = tuple(n.calls_peer_down for n in graph.nodes)
        self.down_overtakes = tuple(n.down_overtakes for n in graph.nodes)

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
        self.edge_of = {ends: e for e, ends in enumerate(self.edge_ends)}
        self.actions = (
            tuple(READ << ACTION_SHIFT | n for n in self.source_nodes)
            + tuple(TAKE << ACTION_SHIFT | e for e in range(n_edges))
            + tuple(BUMP << ACTION_SHIFT | e for e in range(n_edges))
            + tuple(CRASH << ACTION_SHIFT | n for n in self.crashable)
            + tuple(DOWN << ACTION_SHIFT | k for k in range(len(self.down_pairs)))
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
        for slot in self.alive_slot.values():
            state[slot] = 1
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
        """Bit ``n`` set iff node ``n`` is blocked (a dead node never is: its fields are
        reset by NET-CRASH, PROP-FAULT-BLOCKED)."""
        mask = 0
        for node, slots in enumerate(self.blocking_slots):
            for slot in slots:
                if state[slot] <= 0:
                    mask |= 1 << node
                    break
        return mask

    def alive(self, state: Sequence[int], node: int) -> bool:
        """NET-CRASH: ``node`` has not died (a node that may not crash is always alive)."""
        slot = self.alive_slot.get(node)
        return slot is None or state[slot] == 1

    def quiet(self, state: State) -> bool:
        """PROP-RECOVERY: no crash is possible any more (every ``may_crash`` node dead, or
        the bound reached)."""
        if self.crash_count_slot is None:
            return True
        return state[self.crash_count_slot] >= self.crash_bound or not any(
            state[slot] for slot in self.alive_slot.values()
        )

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
            if self.stalled[node] or not self.alive(state, node):
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
        found: dict[str, dict[Any, Any]] = {
            "pairs": pairs,
            "blockers": {
                names[n]: tuple(sorted(names[b] for b in self.blockers(state, n)))
                for n in range(self.n_nodes)
            },
            "supply": {names[n]: state[slot] for n, slot in self.remaining_slot.items()},
            "consumed": {names[n]: state[slot] for n, slot in self.delivered_slot.items()},
        }
        if self.crashable:
            assert self.crash_count_slot is not None
            found["faults"] = {
                "dead": tuple(names[n] for n in self.crashable if not self.alive(state, n)),
                "handled": tuple(
                    (names[p], names[d])
                    for (p, d), slot in self.handled_slot.items()
                    if state[slot]
                ),
                # PROP-FAULT-FORGET: live watchers that hold no entry for the dead peer
                "forgotten": tuple(
                    (names[p], names[d])
                    for (p, d), slot in self.handled_slot.items()
                    if state[slot] == 1
                    and self.alive(state, p)
                    and (self.peer_down[p] or not self.entries_held(state, p, d))
                ),
                # CF-ENTRY: the entries held by watchers that ignore DOWN
                "held": tuple(
                    (names[p], names[d], entry)
                    for p, d in self.down_pairs
                    for entry in self.entries_held(state, p, d)
                ),
                "crashes": state[self.crash_count_slot],
                "lost": {names[n]: state[slot] for n, slot in self.lost_slot.items()},
            }
        return found

    def entries_held(self, state: Sequence[int], p: int, d: int) -> tuple[str, ...]:
        """CF-ENTRY: the ``credit_flow`` dictionary entries for ``d`` that ``p`` holds, when
        ``p`` ignores DOWN (``{credit_from, d}``, ``{credit_to, d}``; ``credit_blocked``
        too while ``p`` is blocked on ``d``); empty for a watcher that calls CF-PEER-DOWN
        (its entries are not tracked: the call erases them)."""
        found = []
        held = self.held_from_slot.get((p, d))
        if held is not None and state[held]:
            found.append(f"{{credit_from, {self.graph.node_names[d]}}}")
            edge = self.edge_of[(p, d)]
            if self.edge_blocks[edge] and state[EDGE_FIELDS * edge + CREDIT_FROM] <= 0:
                found.append(f"credit_blocked (holds {self.graph.node_names[d]})")
        held = self.held_to_slot.get((p, d))
        if held is not None and state[held]:
            found.append(f"{{credit_to, {self.graph.node_names[d]}}}")
        return tuple(found)

    def leaked_entries(self, state: Sequence[int]) -> list[tuple[int, int, tuple[str, ...]]]:
        """PROP-FAULT-FORGET: per live watcher that handled the DOWN of ``d``, the entries
        for ``d`` it still holds: an ignored DOWN leaves what was used (CF-ENTRY), an ack
        after CF-PEER-DOWN re-creates ``{credit_to, d}`` (NET-DOWN-EARLY)."""
        found: list[tuple[int, int, tuple[str, ...]]] = []
        for (p, d), slot in self.handled_slot.items():
            if not state[slot] or not self.alive(state, p):
                continue
            if state[slot] == 2:
                found.append((p, d, (f"{{credit_to, {self.graph.node_names[d]}}}",)))
            elif not self.peer_down[p] and (entries := self.entries_held(state, p, d)):
                found.append((p, d, entries))
        return found

    # -- actions ------------------------------------------------------------------------

    def _can_work(self, state: State, node: int) -> bool:
        """NET-STALLED, NET-CHECKS-BLOCKED: may ``node`` take data or read a publish?"""
        if self.stalled[node] or not self.alive(state, node):
            return False
        return not (self.checks[node] and self.is_blocked(state, node))

    def is_enabled(self, state: State, action: int) -> bool:
        """The guard of one action: NET-READ (supply left), NET-TAKE (a message waiting),
        NET-BUMP (a grant waiting, the sender not stalled), NET-CRASH (alive, bound not
        reached), NET-DOWN (the peer dead, everything it sent taken)."""
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        if kind == READ:
            return state[self.remaining_slot[index]] > 0 and self._can_work(state, index)
        if kind == TAKE:
            receiver = self.edge_ends[index][1]
            return state[EDGE_FIELDS * index + DATA] > 0 and self._can_work(state, receiver)
        if kind == BUMP:
            sender = self.edge_ends[index][0]
            return (
                state[EDGE_FIELDS * index + BUMPS] > 0
                and not self.stalled[sender]
                and self.alive(state, sender)
            )
        if kind == CRASH:
            assert self.crash_count_slot is not None
            return (
                state[self.alive_slot[index]] == 1
                and state[self.crash_count_slot] < self.crash_bound
            )
        return self._down_enabled(state, index)

    def _down_enabled(self, state: State, pair: int) -> bool:
        """NET-DOWN: ``d`` dead, ``p`` alive, not stalled, not yet told, and every message
        ``d`` sent ``p`` (data ``d -> p``, grants on ``p -> d``) taken (signal order)."""
        p, d = self.down_pairs[pair]
        if self.alive(state, d) or not self.alive(state, p) or self.stalled[p]:
            return False
        if state[self.handled_slot[(p, d)]]:
            return False
        into = self.edge_of.get((d, p))
        if into is not None and state[EDGE_FIELDS * into + DATA] and not self.down_overtakes[p]:
            return False  # NET-DOWN-EARLY: that DOWN may come before the data
        out = self.edge_of.get((p, d))
        return out is None or not state[EDGE_FIELDS * out + BUMPS]

    def enabled(self, state: State) -> Iterator[int]:
        """The actions enabled in ``state``, in a fixed order (:attr:`actions`)."""
        return (a for a in self.actions if self.is_enabled(state, a))

    def _forward(self, s: list[int], node: int) -> None:
        """NET-FORWARD: ``send`` toward every successor (CF-SEND, possibly blocking the
        node on the 1 -> 0 transition) and append one message to each pair's FIFO."""
        for e in self.out_edges[node]:
            base = EDGE_FIELDS * e
            receiver = self.edge_ends[e][1]
            held = self.held_from_slot.get((node, receiver))
            if receiver in self.alive_slot and not s[self.alive_slot[receiver]]:
                # NET-DEAD: before the DOWN, CF-SEND and the message is dropped; after it,
                # routing no longer reaches the dead receiver; either way it is lost
                if not s[self.handled_slot[(node, receiver)]]:
                    s[base + CREDIT_FROM] -= self.debits[e]
                    if held is not None and self.debits[e]:
                        s[held] = 1  # CF-ENTRY: CF-SEND puts {credit_from, receiver}
                lost = self.lost_slot.get(receiver)
                if lost is not None:
                    s[lost] += 1  # NET-LOST-TO-CRASH
                continue
            s[base + CREDIT_FROM] -= self.debits[e]
            if held is not None and self.debits[e]:
                s[held] = 1  # CF-ENTRY: CF-SEND puts {credit_from, receiver}
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
            stale = self.handled_slot.get((receiver, sender))
            if stale is not None and s[stale]:
                s[stale] = 2  # NET-DOWN-EARLY: the ack re-creates the forgotten entry
            held = self.held_to_slot.get((receiver, sender))
            if held is not None and self.debits[index]:
                s[held] = 1  # CF-ENTRY: CF-ACK puts {credit_to, sender}
            for _ in range(self.debits[index]):
                left = s[base + CREDIT_TO]
                if left == 1:
                    s[base + CREDIT_TO] = self.more_after[index]
                    if blocked:
                        s[base + DEFERRED] += 1
                    elif self.alive(state, sender):  # NET-DEAD: else dropped, sender dead
                        s[base + BUMPS] += 1
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
            held = self.held_from_slot.get(self.edge_ends[index])
            if held is not None:
                s[held] = 1  # CF-ENTRY: CF-BUMP puts {credit_from, receiver} too
            credit = s[base + CREDIT_FROM]
            s[base + CREDIT_FROM] = credit + self.more_after[index]
            if credit <= 0 < credit + self.more_after[index] and not self.is_blocked(s, sender):
                self._flush(s, sender)
        elif kind == CRASH:
            self._crash(s, index)
        elif kind == DOWN:
            self._down(s, index)
        else:
            raise ValueError(f"unknown action {action}")
        return tuple(s)

    def _flush(self, s: list[int], node: int) -> None:
        """CF-FLUSH: every grant ``node`` deferred goes into its FIFO; one for a dead
        process goes into the void (NET-DEAD)."""
        for g in self.in_edges[node]:
            gb = EDGE_FIELDS * g
            if self.alive(s, self.edge_ends[g][0]):
                s[gb + BUMPS] += s[gb + DEFERRED]
            s[gb + DEFERRED] = 0

    def _crash(self, s: list[int], node: int) -> None:
        """NET-CRASH: ``node`` dies; its mailbox is lost to the crash (NET-LOST-TO-CRASH),
        grants in flight to it are gone, its own CF state with them; what it sent stays."""
        assert self.crash_count_slot is not None
        s[self.alive_slot[node]] = 0
        s[self.crash_count_slot] += 1
        lost = self.lost_slot.get(node)
        for e in self.in_edges[node]:
            base = EDGE_FIELDS * e
            if lost is not None:
                s[lost] += s[base + DATA]
            s[base + DATA] = 0
            s[base + DEFERRED] = 0
            s[base + CREDIT_TO] = self.more_after[e]
        for e in self.out_edges[node]:
            base = EDGE_FIELDS * e
            s[base + BUMPS] = 0
            s[base + CREDIT_FROM] = self.initial_credit[e]
        for (watcher, _), slot in self.handled_slot.items():
            if watcher == node and s[slot]:
                s[slot] = 1  # its re-created entries (NET-DOWN-EARLY) died with it
        for held in (self.held_from_slot, self.held_to_slot):
            for (watcher, _), slot in held.items():
                if watcher == node:
                    s[slot] = 0  # CF-ENTRY: its dictionary died with it

    def _down(self, s: list[int], pair: int) -> None:
        """NET-DOWN: ``p`` handles ``d``'s DOWN; with ``on_peer_down = "peer_down"`` it
        calls CF-PEER-DOWN (both entries for ``d`` erased, one unblock, flushed once no
        blocker is left)."""
        p, d = self.down_pairs[pair]
        s[self.handled_slot[(p, d)]] = 1
        if not self.peer_down[p]:
            return
        out = self.edge_of.get((p, d))
        if out is not None:
            s[EDGE_FIELDS * out + CREDIT_FROM] = self.initial_credit[out]
        into = self.edge_of.get((d, p))
        if into is not None:
            s[EDGE_FIELDS * into + CREDIT_TO] = self.more_after[into]
        if not self.is_blocked(s, p):
            self._flush(s, p)

    def successors(self, state: State) -> list[tuple[int, State]]:
        """Every (action, next state) pair of ``state``."""
        return [(a, self.apply(state, a)) for a in self.enabled(state)]

    # -- naming -------------------------------------------------------------------------

    def decode(self, action: int) -> Step:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        names = self.graph.node_names
        if kind == READ:
            return Step("read", names[index])
        if kind == CRASH:
            return Step("crash", names[index])
        if kind == DOWN:
            p, d = self.down_pairs[index]
            return Step("down", names[p], names[d])
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
        if step.kind == "crash":
            node = self.node_index[step.node]
            if node not in self.alive_slot:
                raise ValueError(f"{step.node} may not crash")
            return CRASH << ACTION_SHIFT | node
        if step.kind == "down":
            pair = (self.node_index[step.node], self.node_index[cast(str, step.peer)])
            return DOWN << ACTION_SHIFT | self.down_pairs.index(pair)
        raise ValueError(f"unknown step kind {step.kind!r}")

    def describe(self, action: int) -> str:
        return str(self.decode(action))
