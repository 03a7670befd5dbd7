"""TRACE-RUNS: a long witness's steps as runs, a block of actions repeated.

A directed run at a session window of 65,535 is a few hundred thousand steps, but
periodic: ``send, take_fwd, settle, …`` over and over. :func:`step_runs` gathers it,
greedily from the start, into :class:`StepRun` s: at each step the block of 1 to
:data:`MAX_PERIOD` actions whose repetition covers the most steps (the shortest block
on a tie) is one run when it covers at least :data:`MIN_GATHERED` steps; any other step
is a run of its own (count 1). Pure; the runs are data for the text, ``--json`` and the
compressed ITF trace (TRACE-RUNS in spec/trace-format.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_PERIOD = 12
"""The longest block gathered (TRACE-RUNS)."""

MIN_GATHERED = 8
"""The fewest steps a gathered run covers (TRACE-RUNS): shorter repeats stay step by
step, each state on its own line."""


@dataclass(frozen=True)
class StepRun:
    """Steps ``first`` … :attr:`last` (1-based, as printed): ``block`` repeated
    ``count`` times (TRACE-RUNS)."""

    first: int
    block: tuple[str, ...]
    count: int

    @property
    def last(self) -> int:
        """The number of the run's last step."""
        return self.first + len(self.block) * self.count - 1


def _repeats(steps: Sequence[str], i: int, period: int) -> int:
    """How many times ``steps[i : i + period]`` occurs back to back from ``i``."""
    block = steps[i : i + period]
    count = 1
    j = i + period
    while steps[j : j + period] == block and j + period <= len(steps):
        count += 1
        j += period
    return count


def step_runs(steps: Sequence[str], max_period: int = MAX_PERIOD) -> tuple[StepRun, ...]:
    """TRACE-RUNS: ``steps`` as runs, in order; expanding them gives ``steps`` back."""
    seq = tuple(steps)
    runs: list[StepRun] = []
    i = 0
    while i < len(seq):
        best_period, best_count = 1, 1
        for period in range(1, min(max_period, (len(seq) - i) // 2) + 1):
            count = _repeats(seq, i, period)
            if count >= 2 and period * count > best_period * best_count:
                best_period, best_count = period, count
        if best_period * best_count < MIN_GATHERED:
            best_period, best_count = 1, 1
        runs.append(StepRun(i + 1, seq[i : i + best_period], best_count))
        i += best_period * best_count
    return tuple(runs)


def expand(runs: Sequence[StepRun]) -> tuple[str, ...]:
    """The steps of ``runs`` one by one (the inverse of :func:`step_runs`)."""
    return tuple(a for r in runs for _ in range(r.count) for a in r.block)
