"""A credit network over blocks of states at once, with numpy (EXP-VECTOR).

:class:`VectorNetwork` computes, for a block of states held as the rows of an integer
array, what :class:`~creditflow.conformance.explore.encoding.CreditNetwork` computes for
one state: the successors of every enabled action in the fixed action order (NET-READ,
NET-TAKE, NET-BUMP with CF-ACK, CF-DEFER, CF-BUMP, CF-UNBLOCK, CF-FLUSH), the first
enabled safe action (EXP-SAFE), pending work, the blocked processes (NET-BLOCKED) and the
state properties (PROP-*), plus a 64-bit hash of each row for the explorer's state
store. The breadth-first search that uses it lives in
:mod:`creditflow.conformance.explore.explorer`; ``tests/test_vectorized.py`` checks both
against the one-state-at-a-time model on random graphs: the same states, numbered the
same, with the same verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMP,
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    READ,
    TAKE,
)
from creditflow.conformance.explore.properties import (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    IN_FLIGHT_BOUND,
    MAILBOX_BOUND,
    NOTHING_LOST,
)

if TYPE_CHECKING:
    from creditflow.conformance.explore.network_system import CheckedNetwork
    from creditflow.conformance.explore.symmetry import Symmetry

#: the integer type of a stored state's fields
FIELD = np.int32


def _splitmix64(seed: int, count: int) -> list[int]:
    """``count`` well-mixed 64-bit integers from ``seed`` (SplitMix64)."""
    out, x, mask = [], seed, (1 << 64) - 1
    for _ in range(count):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


@dataclass
class Successors:
    """Successor candidates of a block, in the order the one-state model lists them:
    by parent row, then by action order. ``parents[k]`` is the block row that has
    successor ``rows[k]`` by action ``actions[k]``."""

    parents: np.ndarray
    actions: np.ndarray
    rows: np.ndarray


class VectorNetwork:
    """The NET rules and PROP checks of a :class:`CheckedNetwork`, on rows of states."""

    def __init__(self, checked: CheckedNetwork) -> None:
        net = checked.network
        self.checked = checked
        self.net = net
        self.width = net.size
        self.safe = frozenset(checked.safe_actions)
        self.actions = tuple(net.actions)
        #: odd 64-bit multipliers, one per 64-bit word of a row (the row hash)
        self.multipliers = np.array(_splitmix64(0x5EED, self.width + 1), dtype=np.uint64) | 1
        self.bad_moves = frozenset(getattr(checked, "bad_move_actions", frozenset()))
        #: blocked masks are int64 rows: up to 62 processes
        self.supported = net.n_nodes <= 62

    def certified(self, rows: np.ndarray) -> np.ndarray:
        """EXP-CERTIFICATE per row, as
        :meth:`~creditflow.conformance.explore.certificate.StuckCertificate.certified`
        over the same edge table: the greatest set of processes closed under its
        rules (int64 masks)."""
        certificate = self.checked.certificate
        n = len(rows)
        certain = np.zeros(n, dtype=np.int64)
        waits = []
        for edge in certificate.edges:
            credit = rows[:, edge.credit_from].astype(np.int64)
            stuck = credit <= 0
            credit = credit + edge.weight * rows[:, edge.bumps]
            stuck &= credit <= 0
            if edge.more_after <= 0:  # no grant (EXP-CERTIFICATE), whoever sends
                certain |= stuck.astype(np.int64) << edge.sender
                continue
            if edge.sender_checks:
                m = edge.more_after
                if m >= 1:
                    earnable = (
                        m
                        - rows[:, edge.credit_to].astype(np.int64)
                        + edge.debits * rows[:, edge.data]
                    ) // m
                else:
                    earnable = np.zeros(n, dtype=np.int64)
                sure = stuck & (credit + edge.weight * (rows[:, edge.deferred] + earnable) <= 0)
                certain |= sure.astype(np.int64) << edge.sender
                stuck &= ~sure
            if edge.back_credit_from >= 0:
                back = np.maximum(
                    rows[:, edge.back_credit_from].astype(np.int64)
                    + edge.back_weight * rows[:, edge.back_bumps],
                    0,
                )
                steps = -(-back // edge.back_debits)
                sure = stuck & (
                    credit + edge.weight * (rows[:, edge.deferred] + edge.debits * steps) <= 0
                )
                certain |= sure.astype(np.int64) << edge.sender
                stuck &= ~sure
            waits.append((edge.sender, edge.receiver, stuck))
        waiting = certain.copy()
        for p, _, stuck in waits:
            waiting |= stuck.astype(np.int64) << p
        while True:
            keep = certain.copy()
            for p, r, stuck in waits:
                there = ((waiting | certificate.stalled) >> r) & 1
                keep |= (stuck & (there == 1)).astype(np.int64) << p
            if np.array_equal(keep, waiting):
                return waiting
            waiting = keep

    @staticmethod
    def canonical(rows: np.ndarray, symmetry: Symmetry) -> tuple[np.ndarray, np.ndarray]:
        """EXP-SYMMETRY per row, as ``Symmetry.canonicalize``: the lexicographically least
        image under the automorphisms (the first one on ties) and its index."""
        best = rows.copy()
        best_id = np.zeros(len(rows), dtype=np.int64)
        everyone = np.arange(len(rows))
        for i, perm in enumerate(symmetry.permutations[1:], start=1):
            image = rows[:, perm]
            differ = image != best
            first = differ.argmax(axis=1)
            less = differ.any(axis=1) & (image[everyone, first] < best[everyone, first])
            best[less] = image[less]
            best_id[less] = i
        return best, best_id

    def maybe_certified(self, rows: np.ndarray) -> np.ndarray:
        """EXP-CERTIFICATE's first test per row (some blocking edge with ``credit_from +
        M⁺·bumps <= 0``): where it fails, the certificate names nobody."""
        out = np.zeros(len(rows), dtype=bool)
        for edge in self.checked.certificate.edges:
            out |= rows[:, edge.credit_from] + edge.weight * rows[:, edge.bumps] <= 0
        return out

    # -- helpers ----------------------------------------------------------------------

    def blocked(self, rows: np.ndarray, node: int) -> np.ndarray:
        """NET-BLOCKED of ``node`` in every row."""
        slots = self.net.blocking_slots[node]
        out = np.zeros(len(rows), dtype=bool)
        for slot in slots:
            out |= rows[:, slot] <= 0
        return out

    def blocked_masks(self, rows: np.ndarray) -> np.ndarray:
        """Bit ``n`` set iff node ``n`` is blocked, per row (int64; up to 63 nodes)."""
        out = np.zeros(len(rows), dtype=np.int64)
        for node in range(self.net.n_nodes):
            if self.net.blocking_slots[node]:
                out |= self.blocked(rows, node).astype(np.int64) << node
        return out

    def hashes(self, rows: np.ndarray) -> np.ndarray:
        """A 64-bit hash per row: a random linear form (wrapping) of the row's bytes read as
        64-bit words; equal rows hash equal."""
        rows = np.ascontiguousarray(rows, dtype=FIELD)
        if self.width % 2:
            rows = np.concatenate([rows, np.zeros((len(rows), 1), dtype=FIELD)], axis=1)
        words = rows.view(np.uint64)
        with np.errstate(over="ignore"):
            return (words * self.multipliers[: words.shape[1]]).sum(axis=1, dtype=np.uint64)

    def _can_work(self, rows: np.ndarray, node: int, blocked: list) -> np.ndarray | None:
        """NET-STALLED, NET-CHECKS-BLOCKED; ``None`` for never."""
        net = self.net
        if net.stalled[node]:
            return None
        if net.checks[node]:
            return ~blocked[node]
        return np.ones(len(rows), dtype=bool)

    def _forward(self, out: np.ndarray, node: int) -> None:
        net = self.net
        for e in net.out_edges[node]:
            base = EDGE_FIELDS * e
            out[:, base + CREDIT_FROM] -= net.debits[e]
            out[:, base + DATA] += 1
        slot = net.delivered_slot.get(node)
        if slot is not None:
            out[:, slot] += 1

    # -- the rules ----------------------------------------------------------------------

    def enabled(self, rows: np.ndarray) -> list[np.ndarray]:
        """Per action (in the fixed order), which rows enable it."""
        net = self.net
        blocked = [self.blocked(rows, n) for n in range(net.n_nodes)]
        never = np.zeros(len(rows), dtype=bool)
        masks = []
        for action in self.actions:
            kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
            if kind == READ:
                work = self._can_work(rows, index, blocked)
                supply = rows[:, net.remaining_slot[index]] > 0
                masks.append(never if work is None else work & supply)
            elif kind == TAKE:
                work = self._can_work(rows, net.edge_ends[index][1], blocked)
                data = rows[:, EDGE_FIELDS * index + DATA] > 0
                masks.append(never if work is None else work & data)
            else:
                sender = net.edge_ends[index][0]
                bumps = rows[:, EDGE_FIELDS * index + BUMPS] > 0
                masks.append(never if net.stalled[sender] else bumps)
        return masks

    def apply(self, rows: np.ndarray, action: int) -> np.ndarray:
        """The successor of every row by ``action`` (enabled in every row)."""
        net = self.net
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        out = rows.copy()
        if kind == READ:
            out[:, net.remaining_slot[index]] -= 1
            self._forward(out, index)
        elif kind == TAKE:
            receiver = net.edge_ends[index][1]
            base = EDGE_FIELDS * index
            out[:, base + DATA] -= 1
            blocked = self.blocked(rows, receiver)
            for _ in range(net.debits[index]):
                left = out[:, base + CREDIT_TO]
                wrap = left == 1
                out[:, base + CREDIT_TO] = np.where(wrap, net.more_after[index], left - 1)
                out[:, base + DEFERRED] += wrap & blocked
                out[:, base + BUMPS] += wrap & ~blocked
            self._forward(out, receiver)
        elif kind == BUMP:
            sender = net.edge_ends[index][0]
            base = EDGE_FIELDS * index
            m = net.more_after[index]
            out[:, base + BUMPS] -= 1
            credit = rows[:, base + CREDIT_FROM]
            out[:, base + CREDIT_FROM] = credit + m
            crossing = (credit <= 0) & (credit + m > 0) & ~self.blocked(out, sender)
            if crossing.any():
                for g in net.in_edges[sender]:
                    gb = EDGE_FIELDS * g
                    deferred = np.where(crossing, out[:, gb + DEFERRED], 0)
                    out[:, gb + BUMPS] += deferred
                    out[:, gb + DEFERRED] -= deferred
        else:
            raise ValueError(f"unknown action {action}")
        return out

    def successors(self, rows: np.ndarray, use_safe: bool) -> tuple[Successors, np.ndarray]:
        """Every successor of every row (only the first enabled safe action where
        ``use_safe`` and one is enabled, EXP-SAFE), and the number per row."""
        masks = self.enabled(rows)
        n = len(rows)
        if use_safe and self.safe:
            first_safe = np.full(n, -1, dtype=np.int64)
            for rank, action in enumerate(self.actions):
                if action in self.safe:
                    pick = masks[rank] & (first_safe < 0)
                    first_safe[pick] = rank
            restricted = first_safe >= 0
            if restricted.any():
                masks = [
                    (mask & ~restricted) | (restricted & (first_safe == rank))
                    for rank, mask in enumerate(masks)
                ]
        counts = np.zeros(n, dtype=np.int64)
        for mask in masks:
            counts += mask
        total = int(counts.sum())
        start = np.cumsum(counts) - counts  # where each row's successors begin
        parents = np.empty(total, dtype=np.int64)
        codes = np.empty(total, dtype=np.int64)
        out = np.empty((total, self.width), dtype=FIELD)
        for rank, action in enumerate(self.actions):
            where = np.flatnonzero(masks[rank])
            if not len(where):
                continue
            at = start[where]
            start[where] += 1  # the row's next successor goes one further
            parents[at] = where
            codes[at] = action
            out[at] = self.apply(rows[where], action)
        return Successors(parents, codes, out), counts

    # -- properties ---------------------------------------------------------------------

    def pending_work(self, rows: np.ndarray) -> np.ndarray:
        """NET-DEADLOCK's pending work per row."""
        net = self.net
        out = np.zeros(len(rows), dtype=bool)
        for node in range(net.n_nodes):
            if net.stalled[node]:
                continue
            slot = net.remaining_slot.get(node)
            if slot is not None:
                out |= rows[:, slot] != 0
            for e in net.in_edges[node]:
                out |= rows[:, EDGE_FIELDS * e + DATA] != 0
        return out

    def violations(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Per state property, which rows violate it (the compiled checks' meaning)."""
        checked, net = self.checked, self.net
        props = checked.properties
        n = len(rows)
        found: dict[str, np.ndarray] = {}
        conserved = np.zeros(n, dtype=bool)
        bounded = np.zeros(n, dtype=bool)
        for e, spec in enumerate(net.graph.edges):
            base = EDGE_FIELDS * e
            k, m, i = spec.sends_per_message, spec.credit.more_after, spec.credit.initial
            total = (
                rows[:, base + CREDIT_FROM].astype(np.int64)
                + k * rows[:, base + DATA]
                + (m - rows[:, base + CREDIT_TO])
                + m * (rows[:, base + BUMPS].astype(np.int64) + rows[:, base + DEFERRED])
            )
            conserved |= total != i
            if net.checks[net.edge_ends[e][0]] and spec.credit.blocks:
                bounded |= (k * rows[:, base + DATA].astype(np.int64) > i + k - 1) | (
                    rows[:, base + CREDIT_FROM] < 1 - k
                )
        found[CONSERVATION] = conserved
        found[IN_FLIGHT_BOUND] = bounded
        deferring = np.zeros(n, dtype=bool)
        for node in range(net.n_nodes):
            if not net.in_edges[node]:
                continue
            some = np.zeros(n, dtype=bool)
            for g in net.in_edges[node]:
                some |= rows[:, EDGE_FIELDS * g + DEFERRED] != 0
            deferring |= some & ~self.blocked(rows, node)
        found[DEFERRED_IMPLIES_BLOCKED] = deferring
        if props.mailbox_bound is not None:
            over = np.zeros(n, dtype=bool)
            for node in range(net.n_nodes):
                if net.in_edges[node]:
                    box = sum(
                        rows[:, EDGE_FIELDS * g + DATA].astype(np.int64) for g in net.in_edges[node]
                    )
                    over |= box > props.mailbox_bound
            found[MAILBOX_BOUND] = over
        if props.lost_terms is not None:
            lost = np.zeros(n, dtype=bool)
            for delivered_slot, data_weights, source_weights in props.lost_terms:
                left = rows[:, delivered_slot].astype(np.int64)
                for slot, w in data_weights:
                    left = left + w * rows[:, slot]
                right = np.zeros(n, dtype=np.int64)
                for slot, t, w in source_weights:
                    right = right + w * (t - rows[:, slot].astype(np.int64))
                lost |= left != right
            found[NOTHING_LOST] = lost
        return {pid: mask for pid, mask in found.items() if mask.any()}
