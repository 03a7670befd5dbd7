"""The explorer's compact state store (EXP-STORE).

What a breadth-first search keeps per state is packed to what its bounds allow:

* the state numbers (parents, successor lists) and depths in 32-bit integers while the
  budget is below 2**31 states (:func:`index_typecode`); the successor lists' offsets in
  32-bit integers while the budget times the number of actions is
  (:func:`offset_typecode`); the actions in 32-bit integers where they fit; the blocked
  masks in the narrowest unsigned word that holds one bit per process
  (:func:`mask_typecode`), and so are the blocked-forever masks (EXP-DEADLOCK);
* the states of the vectorized engine (EXP-VECTOR) as rows of the narrowest of int8,
  int16 and int32 that holds every value stored so far (:class:`PackedRows`), widened
  when a new row needs it, in one buffer that grows in place (``array.array``: the
  C library's ``realloc``, no second copy of the rows during growth);
* their lookup in an open-addressing table of state numbers (linear probing, at most
  :data:`MAX_LOAD` full, grown by :data:`GROWTH`), keyed by the row's 64-bit hash but
  deciding membership by comparing the stored row with the state: the table holds no
  hashes and no states, only numbers, and a hash is never trusted alone.

Packing changes no value: a state reads back as the same tuple of integers, numbered
the same, so the verdicts, the numbering and the counterexamples are those of the
unpacked search (``tests/test_store.py``, ``tests/test_vectorized.py``).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

import numpy as np

#: EXP-STORE: the table is rebuilt larger once more than this share of its slots is used
MAX_LOAD = 0.7
#: EXP-STORE: ... this many times larger
GROWTH = 1.5
#: EXP-STORE: the stored rows' integer types, narrowest first, with their typecodes
ROW_TYPES: tuple[tuple[type[np.signedinteger], str], ...] = (
    (np.int8, "b"),
    (np.int16, "h"),
    (np.int32, "i"),
)
#: rows hashed at once when the table is rebuilt
REHASH_CHUNK = 1 << 16


def index_typecode(max_states: int) -> str:
    """EXP-STORE: the ``array`` typecode of a state number (or a depth) in a search of at
    most ``max_states`` + 1 states: 32-bit while that fits, else 64-bit."""
    return "i" if max_states + 1 < 2**31 else "q"


def offset_typecode(max_states: int, max_degree: int | None) -> str:
    """EXP-STORE: the ``array`` typecode of a transition number, in a search of at most
    ``max_states`` + 1 states with at most ``max_degree`` successors each (``None``:
    unknown): 32-bit while every transition number fits, else 64-bit."""
    if max_degree is not None and (max_states + 1) * max_degree < 2**31:
        return "i"
    return "q"


def mask_typecode(n_processes: int) -> str:
    """EXP-STORE: the ``array`` typecode of a blocked mask over ``n_processes`` processes
    (one bit each): the narrowest unsigned word of 8, 16, 32 or 64 bits, or ``"q"``
    (signed 64-bit, as the masks are computed) when 64 bits do not fit them."""
    for code in ("B", "H", "I", "Q"):
        if n_processes <= 8 * array(code).itemsize:
            return code
    return "q"


def _fits(dtype: type[np.signedinteger], low: int, high: int) -> bool:
    info = np.iinfo(dtype)
    return info.min <= low and high <= info.max


class PackedRows:
    """EXP-STORE: states as packed integer rows, numbered in the order they are added,
    with an open-addressing table from a row to its number.

    ``hashes`` maps a block of rows (any integer type) to their 64-bit hashes; equal
    rows must have equal hashes, and the same hashes whatever integer type holds them.
    """

    def __init__(self, width: int, hashes: Callable[[np.ndarray], np.ndarray]) -> None:
        self.width = width
        self.hashes = hashes
        self.n = 0
        self._kind = 0  # index into ROW_TYPES
        self._data = array(ROW_TYPES[0][1])
        self._table = np.full(1024, -1, dtype=np.int32)

    @property
    def dtype(self) -> type[np.signedinteger]:
        return ROW_TYPES[self._kind][0]

    @property
    def array(self) -> np.ndarray:
        """The stored rows (a view: do not keep it across :meth:`add`)."""
        return np.frombuffer(self._data, dtype=self.dtype).reshape(-1, self.width)

    def nbytes(self) -> int:
        """Bytes held by the rows and the table."""
        return len(self._data) * self._data.itemsize + self._table.nbytes

    def add(self, rows: np.ndarray, keys: np.ndarray) -> None:
        """Store ``rows`` (numbered from :attr:`n` on; none stored yet) with their hashes
        ``keys``, widening the row type first if a value does not fit it."""
        if not len(rows):
            return
        low, high = int(rows.min()), int(rows.max())
        kind = self._kind
        while not _fits(ROW_TYPES[kind][0], low, high):
            kind += 1  # int32 holds every field (FIELD)
        if kind != self._kind:
            wider, code = ROW_TYPES[kind]
            self._data = array(code, self.array.astype(wider).tobytes())
            self._kind = kind
        start = self.n
        self._data.frombytes(np.ascontiguousarray(rows, dtype=self.dtype).tobytes())
        self.n += len(rows)
        if self.n > MAX_LOAD * len(self._table):
            self._rebuild()
        else:
            self._place(keys, np.arange(start, self.n, dtype=np.int64))

    def lookup(self, rows: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The number of each of ``rows`` (hashes ``keys``), or -1 where not stored."""
        found = np.full(len(rows), -1, dtype=np.int64)
        size = len(self._table)
        slot = (keys % np.uint64(size)).astype(np.int64)
        pending = np.arange(len(rows))
        stored = self.array
        while len(pending):
            held = self._table[slot[pending]]
            occupied = held >= 0
            pending, held = pending[occupied], held[occupied]
            same = (stored[held] == rows[pending]).all(axis=1)
            found[pending[same]] = held[same]
            pending = pending[~same]
            slot[pending] += 1
            slot[pending[slot[pending] == size]] = 0
        return found

    def _place(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Put the numbers ``ids`` (of rows not in the table) at their first free slot."""
        size = len(self._table)
        slot = (keys % np.uint64(size)).astype(np.int64)
        table = self._table
        while len(ids):
            free = np.flatnonzero(table[slot] < 0)
            # of several numbers probing one free slot, one takes it (the last written)
            table[slot[free]] = ids[free]
            taken = free[table[slot[free]] == ids[free]]
            left = np.ones(len(ids), dtype=bool)
            left[taken] = False
            ids, slot = ids[left], slot[left] + 1
            slot[slot == size] = 0

    def _rebuild(self) -> None:
        """A table :data:`GROWTH` times larger (or more), holding every stored row."""
        size = len(self._table)
        while self.n > MAX_LOAD * size:
            size = int(size * GROWTH)
        self._table = np.zeros(0, dtype=np.int32)  # the old one is not needed
        self._table = np.full(size, -1, dtype=np.int32 if size < 2**31 else np.int64)
        for lo in range(0, self.n, REHASH_CHUNK):
            hi = min(self.n, lo + REHASH_CHUNK)
            self._place(self.hashes(self.array[lo:hi]), np.arange(lo, hi, dtype=np.int64))
