"""PROP-NO-DEADLOCK over an explored state graph (EXP-DEADLOCK): who is blocked forever.

A process ``p`` is *blocked forever* in a reachable state ``s`` when ``p`` is blocked
in ``s`` and in every state reachable from ``s`` (no continuation can unblock it,
CTL ``AG(blocked(p) -> EF !blocked(p))`` fails). This catches credit deadlocks that
are not terminal: other processes may keep moving forever.

The computation is a least fixpoint over the state graph,
``free(s) = unblocked(s) | OR_{s->t} free(t)``, done with numpy one BFS level at a
time, deepest first (Gauss-Seidel), repeated until nothing changes: two sweeps
when the state graph is acyclic, more when it has cycles.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

#: Processes per machine word; wider graphs are analysed in several words.
WORD = 64


def _permute_bits(values: np.ndarray, frame: Sequence[int], lo: int, width: int) -> np.ndarray:
    """Map bit ``j`` (process ``lo + j``) of each value to bit ``frame[lo + j] - lo``.
    Only used when all processes fit in one word (symmetry needs that)."""
    wide = values.astype(np.uint64)
    out = np.zeros_like(wide)
    for j in range(width):
        target = frame[lo + j] - lo
        out |= ((wide >> np.uint64(j)) & np.uint64(1)) << np.uint64(target)
    return out.astype(values.dtype)


#: states swept at once (bounds the sweep's temporary arrays)
SWEEP_STATES = 1 << 16

#: the ``array`` typecode of an unsigned word, by its size in bytes
_TYPECODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _word_type(width: int) -> type[np.unsignedinteger]:
    """EXP-STORE: the narrowest unsigned integer type of ``width`` bits or more."""
    for word in (np.uint8, np.uint16, np.uint32):
        if width <= np.iinfo(word).bits:
            return word
    return np.uint64


def _masks(
    blocked: Sequence[int], lo: int, width: int, word: type[np.unsignedinteger]
) -> np.ndarray:
    """Bits ``lo`` to ``lo + width`` of each mask, as ``word``s (without a Python loop
    when the masks are an ``array``/numpy sequence of at most 64 bits)."""
    full = (1 << width) - 1
    if lo == 0 and width <= WORD and not isinstance(blocked, list):
        view = np.asarray(blocked)
        if view.dtype.kind in "iu":
            return (view & view.dtype.type(full) if view.dtype.kind == "u" else view & full).astype(
                word
            )
    return np.fromiter(((b >> lo) & full for b in blocked), dtype=word, count=len(blocked))


def blocked_forever(
    blocked: Sequence[int],
    offsets: Sequence[int],
    targets: Sequence[int],
    depth: Sequence[int],
    n_processes: int,
    perm_ids: Sequence[int] | None = None,
    frames: Sequence[Sequence[int]] | None = None,
) -> Sequence[int]:
    """For each state, the mask of processes blocked forever in it (an ``array`` of
    unsigned words up to 64 processes, EXP-STORE; a list of ints beyond).

    ``blocked[s]``: mask of processes blocked in state ``s``; ``offsets``/``targets``: the
    successors of ``s`` are ``targets[offsets[s]:offsets[s+1]]``; ``depth[s]``: its BFS
    depth (states are numbered in BFS order). With symmetry reduction, ``perm_ids[k]``
    names the automorphism that canonicalized the ``k``-th successor and ``frames[p][j]``
    is the process of the successor's own frame that bit ``j`` stands for.
    """
    n = len(blocked)
    if n == 0:
        return []
    # EXP-STORE: the arrays are read in place, in their own (packed) integer types
    off = np.asarray(offsets)
    dst = np.asarray(targets)
    dep = np.asarray(depth)
    perms = None if perm_ids is None else np.asarray(perm_ids)
    if perms is not None and n_processes > WORD:
        raise ValueError("symmetry reduction supports at most 64 processes")
    # BFS numbering: states of one level are contiguous, so are their out-edges.
    levels = np.arange(int(dep.max()) + 2, dtype=dep.dtype)  # the type of dep: no copy of it
    level_starts = np.searchsorted(dep, levels, side="left")
    # deepest first, each level in pieces of at most SWEEP_STATES states (the fixpoint
    # does not depend on the order; the pieces bound the sweep's working memory)
    pieces = [
        (lo, min(lo + SWEEP_STATES, int(level_starts[level + 1])))
        for level in range(len(level_starts) - 2, -1, -1)
        for lo in range(int(level_starts[level]), int(level_starts[level + 1]), SWEEP_STATES)
    ]

    result = np.zeros(n, dtype=object) if n_processes > WORD else None
    stuck_words: list[np.ndarray] = []
    for lo in range(0, max(n_processes, 1), WORD):
        width = min(WORD, n_processes - lo)
        word_type = _word_type(width)
        full = word_type((1 << width) - 1)
        word = _masks(blocked, lo, width, word_type)
        free = (~word) & full

        def contributions(
            edge_lo: int, edge_hi: int, free: np.ndarray = free, lo: int = lo, width: int = width
        ) -> np.ndarray:
            values = free[dst[edge_lo:edge_hi]]
            if perms is not None and frames is not None:
                ids = perms[edge_lo:edge_hi]
                for p in np.unique(ids):
                    if p == 0:
                        continue
                    sel = ids == p
                    values[sel] = _permute_bits(values[sel], frames[int(p)], lo, width)
            return values

        changed = True
        while changed:
            changed = False
            for s_lo, s_hi in pieces:
                e_lo, e_hi = int(off[s_lo]), int(off[s_hi])
                if e_lo == e_hi:
                    continue
                values = contributions(e_lo, e_hi)
                acc = np.zeros(s_hi - s_lo, dtype=word_type)
                has_edges = off[s_lo + 1 : s_hi + 1] > off[s_lo:s_hi]
                starts = off[s_lo:s_hi][has_edges] - e_lo
                acc[has_edges] = np.bitwise_or.reduceat(values, starts)
                before = free[s_lo:s_hi]
                after = before | acc
                if not np.array_equal(before, after):
                    free[s_lo:s_hi] = after
                    changed = True
        stuck_words.append(word & ~free)

    if result is None:
        # EXP-STORE: one packed word per state
        words = stuck_words[0]
        packed = array(_TYPECODES[words.itemsize])
        packed.frombytes(words.tobytes())
        return packed
    for i in range(n):
        result[i] = sum(int(w[i]) << (WORD * k) for k, w in enumerate(stuck_words))
    return [int(x) for x in result]


def first_blocked_forever(stuck: Sequence[int]) -> int | None:
    """The lowest state index (hence a shortest path in BFS order) with a process
    blocked forever, or ``None``."""
    for i, mask in enumerate(stuck):
        if mask:
            return i
    return None


def mask_names(mask: int, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(name for i, name in enumerate(names) if mask >> i & 1)
