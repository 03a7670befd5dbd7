"""Shared set-up of the suite's Hypothesis state machines: one place for the settings
every ``RuleBasedStateMachine`` here runs under."""

from __future__ import annotations

import unittest

from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine


def machine_test_case(
    machine: type[RuleBasedStateMachine], max_examples: int, steps: int
) -> type[unittest.TestCase]:
    """The test case pytest collects for ``machine``: ``max_examples`` runs of at most
    ``steps`` rules each, no deadline, slow data generation tolerated."""
    machine.TestCase.settings = settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    return machine.TestCase
