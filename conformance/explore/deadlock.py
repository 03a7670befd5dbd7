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

from collections.abc import Sequence

import numpy as np

#: Processes per machine word; wider graphs are analysed in several words.
WORD = 64


def _permute_bits(values: np.ndarray, frame: Sequence[int], lo: int, width: int) -> np.ndarray:
    """Map bit ``j`` (process ``lo + j``) of each value to bit ``frame[lo + j] - lo``.
    Only used when all processes fit in one word (symmetry needs that)."""
    out = np.zeros_like(values)
    for j in range(width):
        target = frame[lo + j] - lo
        out |= ((values >> np.uint64(j)) & np.uint64(1)) << np.uint64(target)
    return out


def blocked_forever(
    blocked: Sequence[int],
    offsets: Sequence[int],
    targets: Sequence[int],
    depth: Sequence[int],
    n_processes: int,
    perm_ids: Sequence[int] | None = None,
    frames: Sequence[Sequence[int]] | None = None,
) -> list[int]:
    """For each state, the mask of processes blocked forever in it.

    ``blocked[s]``: mask of processes blocked in state ``s``; ``offsets``/``targets``: the
    successors of ``s`` are ``targets[offsets[s]:offsets[s+1]]``; ``depth[s]``: its BFS
    depth (states are numbered in BFS order). With symmetry reduction, ``perm_ids[k]``
    names the automorphism that canonicalized the ``k``-th successor and ``frames[p][j]``
    is the process of the successor's own frame that bit ``j`` stands for.
    """
    n = len(blocked)
    if n == 0:
        return []
    off = np.asarray(offsets, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    dep = np.asarray(depth, dtype=np.int64)
    perms = None if perm_ids is None else np.asarray(perm_ids, dtype=np.int64)
    if perms is not None and n_processes > WORD:
        raise ValueError("symmetry reduction supports at most 64 processes")
    out_degree = np.diff(off)
    # BFS numbering: states of one level are contiguous, so are their out-edges.
    level_starts = np.searchsorted(dep, np.arange(int(dep.max()) + 2), side="left")

    result = np.zeros(n, dtype=object) if n_processes > WORD else None
    stuck_words: list[np.ndarray] = []
    for lo in range(0, max(n_processes, 1), WORD):
        width = min(WORD, n_processes - lo)
        full = np.uint64((1 << width) - 1) if width < WORD else np.uint64(2**64 - 1)
        word = np.fromiter(((b >> lo) & int(full) for b in blocked), dtype=np.uint64, count=n)
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
            for level in range(len(level_starts) - 2, -1, -1):
                s_lo, s_hi = int(level_starts[level]), int(level_starts[level + 1])
                if s_lo >= s_hi:
                    continue
                e_lo, e_hi = int(off[s_lo]), int(off[s_hi])
                if e_lo == e_hi:
                    continue
                values = contributions(e_lo, e_hi)
                acc = np.zeros(s_hi - s_lo, dtype=np.uint64)
                has_edges = out_degree[s_lo:s_hi] > 0
                starts = off[s_lo:s_hi][has_edges] - e_lo
                acc[has_edges] = np.bitwise_or.reduceat(values, starts)
                before = free[s_lo:s_hi]
                after = before | acc
                if not np.array_equal(before, after):
                    free[s_lo:s_hi] = after
                    changed = True
        stuck_words.append(word & ~free)

    if result is None:
        return [int(x) for x in stuck_words[0]]
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
