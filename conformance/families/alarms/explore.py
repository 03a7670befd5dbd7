"""``creditflow alarms check``: the verdicts of an exploration of the alarms model (AL-*)
as a typed result (OUT-TYPED-RESULT)."""

from __future__ import annotations

from creditflow.conformance.explore.check import exit_code
from creditflow.conformance.explore.explorer import ExplorationResult
from creditflow.conformance.explore.results import AlarmsCheckResult


def alarms_summary(profile: str, result: ExplorationResult) -> AlarmsCheckResult:
    """Verdicts and figures of one exploration of the alarms model under ``profile``:
    a property not violated is undecided (``None``) unless every state was explored."""
    return AlarmsCheckResult(
        profile=profile,
        complete=result.complete,
        states=result.n_states,
        seconds=round(result.seconds, 3),
        properties={
            pid: h if result.complete or not h else None for pid, h in result.holds.items()
        },
        exit_code=exit_code(result),
    )
