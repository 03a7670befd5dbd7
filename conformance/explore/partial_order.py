"""Partial-order reduction of a credit network: stubborn sets over processes (EXP-POR).

Read next to EXP-POR in ``spec/explorer.md``. In a state, :meth:`StubbornSets.reduce`
returns a proper subset of the enabled steps to expand instead of all of them, or
``None`` (expand everything). The subset is the enabled steps of a set ``P`` of
processes closed under "a step of a process of ``P`` that is disabled only because a
FIFO is empty needs the process that fills it" (a stubborn set: steps of different
processes are independent, NET-ATOMIC; a settled process's bumps are left out), and
every step in it is *invisible*: it blocks nobody (NET-BLOCKED) and repairs no violated
state property. The explorer adds the cycle proviso (every step of a reduced state leads
one BFS level down).

Only for networks without faults (EXP-FAULTS): a crash or a DOWN reads and writes other
processes' fields, which the independence argument does not cover.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import cast

from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMP,
    BUMPS,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    READ,
    TAKE,
    CreditNetwork,
    State,
)
from creditflow.conformance.explore.network_system import CheckedNetwork

#: one enabled step and the state it leads to
Successor = tuple[int, State]


class StubbornSets:
    """EXP-POR: stubborn sets over the processes of one credit network without faults."""

    def __init__(self, checked: CheckedNetwork) -> None:
        net = checked.network
        if net.crashable:
            raise ValueError("EXP-POR is not argued for graphs with faults (EXP-FAULTS)")
        self.network = net
        mask = (1 << ACTION_SHIFT) - 1
        #: the process that takes each action: a read's source, a take's receiver, a
        #: bump's sender (the one whose fields the step reads and writes, NET-ATOMIC)
        self.actor = {
            a: a & mask
            if a >> ACTION_SHIFT == READ
            else net.edge_ends[a & mask][1 if a >> ACTION_SHIFT == TAKE else 0]
            for a in net.actions
        }
        self.is_bump = {a: a >> ACTION_SHIFT == BUMP for a in net.actions}
        self.statically_visible = self._statically_visible(checked)
        #: EXP-SAFE actions (never disabled, independent of every action): a singleton
        #: of one that is invisible is a stubborn set by itself
        self.safe = checked.safe_actions
        #: per process: the credit_from slots that block it (NET-BLOCKED), the deferred
        #: slots of its in-edges, and the (FIFO slot, producer) pairs of the closure:
        #: ``data`` of each in-edge with its sender, ``bumps`` of each out-edge with its
        #: receiver, stalled producers left out (they never act)
        self.blocking = net.blocking_slots
        self.deferred = tuple(
            tuple(EDGE_FIELDS * g + DEFERRED for g in net.in_edges[n]) for n in range(net.n_nodes)
        )
        self.fillers = _producers(net, net.in_edges, DATA, 0)
        self.granters = _producers(net, net.out_edges, BUMPS, 1)

    def _statically_visible(self, checked: CheckedNetwork) -> frozenset[int]:
        """Actions that may repair a violation of PROP-MAILBOX-BOUND, when it is checked:
        every take (it lowers a mailbox; sends only raise them). PROP-IN-FLIGHT-BOUND
        needs none: it holds in every state where PROP-CONSERVATION does (EXP-POR), so no
        reachable step changes its truth."""
        if checked.properties.mailbox_bound is None:
            return frozenset()
        return frozenset(a for a in self.actor if a >> ACTION_SHIFT == TAKE)

    def _blocked(self, state: State, node: int) -> bool:
        """NET-BLOCKED: some blocking out-edge of ``node`` has no credit left."""
        for slot in self.blocking[node]:  # noqa: SIM110 - a loop: twice as fast as any()
            if state[slot] <= 0:
                return True
        return False

    def _deferring(self, state: State, node: int) -> bool:
        """``node`` holds a deferred grant."""
        for slot in self.deferred[node]:  # noqa: SIM110 - a loop: twice as fast as any()
            if state[slot]:
                return True
        return False

    def _visible(self, state: State, action: int, after: State) -> bool:
        """EXP-POR's visibility of one step: it may repair a PROP-MAILBOX-BOUND violation,
        or it makes its own process blocked, or it repairs that process's
        PROP-DEFERRED-IMPLIES-BLOCKED violation. (Unblocking, or breaking a property, is
        invisible: a postponed step must only never undo the goal a run reaches.) A step
        changes no other process's own fields, and its effect on its own is a function
        of them, so this is the visibility of the step in every state of the same local
        variant."""
        if action in self.statically_visible:
            return True
        who = self.actor[action]
        blocked_after = self._blocked(after, who)
        if blocked_after and not self._blocked(state, who):
            return True
        if blocked_after or self._deferring(after, who):
            return False  # PROP-DEFERRED-IMPLIES-BLOCKED holds after the step
        return self._deferring(state, who) and not self._blocked(state, who)

    def _settled(self, state: State, node: int) -> bool:
        """EXP-POR: ``node`` is neither blocked nor holding deferred grants. Then its
        bumps commute with its reads and takes in every state its reads and takes do not
        lead to (a bump only adds credit, so ``node`` stays unblocked, defers nothing and
        flushes nothing), so a stubborn set may hold its reads and takes without its
        bumps."""
        return not self._blocked(state, node) and not self._deferring(state, node)

    def _closure(self, state: State, start: int) -> tuple[int, int]:
        """EXP-POR: the least set of processes (a mask) holding ``start`` and, for every
        member, the processes that alone can enable its steps disabled by an empty FIFO:
        the sender of an empty in-edge (for a take) and, unless the member is settled
        (:meth:`_settled`: its bumps are left out), the receiver of an out-edge without
        grants in flight (for a bump). A stalled process never acts, so it needs none.
        Returns the members and, among them, those whose bumps are in the set."""
        stalled = self.network.stalled
        members = 1 << start
        with_bumps = 0
        todo = [start]
        while todo:
            q = todo.pop()
            if stalled[q]:
                continue
            for slot, r in self.fillers[q]:
                if not state[slot] and not members >> r & 1:
                    members |= 1 << r
                    todo.append(r)
            if self._settled(state, q):
                continue
            with_bumps |= 1 << q
            for slot, r in self.granters[q]:
                if not state[slot] and not members >> r & 1:
                    members |= 1 << r
                    todo.append(r)
        return members, with_bumps

    def _keeps_goals(
        self, chosen: Sequence[int], visible: Sequence[bool], steps: Sequence[tuple[int, Hashable]]
    ) -> bool:
        """EXP-POR's visibility condition: for every process ``x``, the set holds an
        enabled step that is not visible for ``x`` — an invisible step, or a step of
        another actor (a step changes no other process's blocked status, mailbox or
        deferred grants) — so a postponed run's goal about ``x`` survives a key step."""
        actors = set()
        for k in chosen:
            if not visible[k]:
                return True
            actors.add(self.actor[steps[k][0]])
        return len(actors) >= 2

    def reduce(
        self, explored: Hashable, steps: Sequence[tuple[int, Hashable]]
    ) -> list[tuple[int, Hashable]] | None:
        """EXP-POR: the smallest stubborn set found that meets the visibility condition
        (:meth:`_keeps_goals`; ties: the first process in graph order), as a proper
        subset of ``steps`` (the enabled steps of
        ``explored`` and their successors); ``None`` if there is none (every enabled
        step is then expanded)."""
        if len(steps) < 2:
            return None
        state = cast(State, explored)  # a network's states are flat tuples
        successors = cast(Sequence[Successor], steps)
        visible = [self._visible(state, a, after) for a, after in successors]
        for k, (a, _) in enumerate(successors):
            if a in self.safe and not visible[k]:
                return [steps[k]]
        actor, is_bump = self.actor, self.is_bump
        works: dict[int, list[int]] = {}  # per process, its enabled reads and takes
        bumps: dict[int, list[int]] = {}  # ... and its enabled bumps
        for k, (a, _) in enumerate(successors):
            (bumps if is_bump[a] else works).setdefault(actor[a], []).append(k)
        best: list[int] | None = None
        for p in sorted(works.keys() | bumps.keys()):
            members, with_bumps = self._closure(state, p)
            if p not in works:
                with_bumps |= 1 << p  # a settled process's bumps need nothing more
            chosen = [k for q, ks in works.items() if members >> q & 1 for k in ks]
            chosen += [k for q, ks in bumps.items() if with_bumps >> q & 1 for k in ks]
            if len(chosen) == len(successors) or not self._keeps_goals(chosen, visible, steps):
                continue
            if best is None or len(chosen) < len(best):
                best = sorted(chosen)
                if len(best) == 1:
                    break
        return None if best is None else [steps[k] for k in best]


def _producers(
    net: CreditNetwork, edges: tuple[tuple[int, ...], ...], field: int, end: int
) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per process, a (FIFO slot, producer) pair for each of its ``edges`` (its
    ``in_edges`` or ``out_edges``): the edge's slot ``field`` and the process at its
    ``end`` (0: sender, 1: receiver), stalled producers left out (they never act)."""
    return tuple(
        tuple(
            (EDGE_FIELDS * e + field, net.edge_ends[e][end])
            for e in process_edges
            if not net.stalled[net.edge_ends[e][end]]
        )
        for process_edges in edges
    )
