"""Shrinking a fixed diverging op sequence (explorer runs, replayed traces) by delta
debugging: every op sequence is a valid protocol input, so any subsequence can be
tried. Hypothesis shrinks the machines' own runs; this is for runs it did not make."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def shrink_sequence(items: Sequence[T], fails: Callable[[list[T]], int | None]) -> list[T]:
    """A 1-minimal failing subsequence of ``items`` (Zeller's ddmin).

    ``fails(candidate)`` returns ``None`` if the candidate passes, else the length of
    the failing prefix (the candidate is cut there: later items never matter).
    """
    current = list(items)
    cut = fails(current)
    if cut is None:
        raise ValueError("the sequence to shrink does not fail")
    current = current[:cut]
    n = 2
    while len(current) >= 2:
        size = -(-len(current) // n)
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size :]
            cut = fails(candidate)
            if cut is not None:
                current = candidate[:cut]
                n = max(n - 1, 2)
                break
        else:
            if n >= len(current):
                break
            n = min(2 * n, len(current))
    return current
