"""The AMQP family's hook of the version matrix (MATRIX-COMMAND): one release's
``run_amqp_conform`` as a :class:`~creditflow.conformance.matrix.table.ReleaseResult`."""

from __future__ import annotations

import time
from collections.abc import Callable

from creditflow.conformance.differential.findings import Finding
from creditflow.conformance.families.amqp.conform import (
    AmqpConformOptions,
    AmqpConformResult,
    run_amqp_conform,
)
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.conformance.matrix.table import ReleaseResult


# --- MERGE POINT (issue 36 point 2): switch to ``result.findings`` alone once
# ``AmqpConformResult.findings`` lands; the fallback below goes then. ---------------
def findings_of(result: AmqpConformResult) -> tuple[Finding, ...]:
    """MATRIX-FINDINGS: the run's distinct findings, as conform reports them (FIND-RECORD,
    FIND-EVERY: every one of the run, each with its stable signature)."""
    return tuple(result.findings)


def conform_amqp_release(
    factory: Callable[[], AmqpAdapter], options: AmqpConformOptions, version: str
) -> ReleaseResult:
    """MATRIX-COMMAND: one conform of the release ``factory`` starts, with ``options``;
    ``version`` is the release asked for (the column's name)."""
    t0 = time.perf_counter()
    result = run_amqp_conform(factory, options)
    seconds = time.perf_counter() - t0
    return ReleaseResult(
        version,
        findings_of(result),
        result.exit_code,
        seconds,
        result.failure,
        {"policy": dict(result.policy), "reported_version": result.version},
    )
