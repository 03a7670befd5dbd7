"""The AMQP family's hook of the version matrix (MATRIX-COMMAND): one release's
``run_amqp_conform`` as a :class:`~creditflow.conformance.matrix.table.ReleaseResult`."""

from __future__ import annotations

import time
from collections.abc import Callable

from creditflow.conformance.differential.findings import Finding, Rule, finding_id, signature_text
from creditflow.conformance.families.amqp.conform import (
    AmqpConformOptions,
    AmqpConformResult,
    run_amqp_conform,
)
from creditflow.conformance.families.amqp.expected import run_signature
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.conformance.matrix.table import ReleaseResult


# --- MERGE POINT (issue 36 point 2): switch to ``result.findings`` alone once
# ``AmqpConformResult.findings`` lands; the fallback below goes then. ---------------
def findings_of(result: AmqpConformResult) -> tuple[Finding, ...]:
    """MATRIX-FINDINGS: the run's distinct findings: ``result.findings`` where conform
    reports them (FIND-RECORD); else the one failing run as one ``must`` finding, its
    signature from :func:`run_signature` (FIND-SIGNATURE), its rule the first monitor
    rule broken or the first diverging field."""
    listed = getattr(result, "findings", None)
    if listed is not None:
        return tuple(listed)
    run = result.run
    if run is None or run.index is None:
        return ()
    sig = run_signature(run)
    rule = run.violations[0].rule if run.violations else run.diffs[0].field
    text = signature_text(rule, sig.op, sig.differences)
    witness = tuple(str(o) for o in run.ops)
    return (
        Finding(
            finding_id(text),
            Rule(rule, "must", "AD-AMQ-CONFORM-VERDICT"),
            text,
            witness,
            found_by=result.found_by,
        ),
    )


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
