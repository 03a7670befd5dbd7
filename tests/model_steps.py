"""Driving a model by named steps: each step must be enabled where it is taken, and
what every step's outcome reports is collected in order."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def apply_steps(
    model: Any,
    state: Any,
    steps: Iterable[tuple[str, ...]],
    reported: Callable[[Any], Iterable[Any]],
) -> tuple[Any, list[Any]]:
    """Apply ``steps`` (``model.encode``'s arguments, e.g. ``("turn", "D")``) in order,
    asserting each is enabled; the final state and ``reported(outcome)`` of every step."""
    reports: list[Any] = []
    for step in steps:
        action = model.encode(*step)
        assert action in set(model.enabled(state)), f"{step} not enabled"
        outcome = model.apply(state, action)
        reports.extend(reported(outcome))
        state = outcome.state
    return state, reports
