"""EXP-SETTLE: what a budget-bound exploration left open, decided by proof.

``check`` explores states; when it runs out of its budget (EXP-BUDGET) without seeing
any violation, no property is decided. :func:`settle` then runs Z3-PROVE on the same
graph with the same overrides. Only a proof of *every* property settles the check:
each verdict is then "holds", with the proof method that established it (an inductive
invariant, a deadlock-freedom rule). A counterexample, an unknown or a bounded "none
found" settles nothing: the check stays incomplete (exit code 4), and ``creditflow
prove`` is where to look at it. :func:`apply_settlement` records the settlement in
``check``'s typed result (OUT-TYPED-RESULT).
"""

from __future__ import annotations

import time
from dataclasses import replace

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.check import CheckOptions
from creditflow.conformance.explore.results import CheckResult, Settlement
from creditflow.conformance.symbolic.prove import check_proof_options, prove_graph
from creditflow.model.network.graph import FlowGraph

#: Seconds the proof of one settlement may take in all (each solver call and the whole).
DEFAULT_SETTLE_SECONDS = 60.0
#: The largest graph (nodes + edges) a settlement is tried on: building the Z3 encoding
#: of a bigger one costs more than its solver calls, which alone the deadline bounds
SETTLE_LIMIT = 200


def settle(
    graph: FlowGraph, options: CheckOptions, seconds: float = DEFAULT_SETTLE_SECONDS
) -> Settlement:
    """EXP-SETTLE: prove every property of ``graph`` under ``options``' overrides (not
    tried above :data:`SETTLE_LIMIT`: ``result`` is then ``too-big``)."""
    started = time.perf_counter()
    if len(graph.nodes) + len(graph.edges) > SETTLE_LIMIT:
        return Settlement(proved=False, result="too-big")
    # Z3-FAULTS: fault graphs settle too
    report = prove_graph(graph, check_proof_options(options, seconds, time.monotonic() + seconds))
    return Settlement(
        proved=report.result == "proved",
        result=report.result,
        methods={pid: v.method for pid, v in sorted(report.verdicts.items())},
        seconds=time.perf_counter() - started,
    )


def apply_settlement(report: CheckResult, settlement: Settlement) -> CheckResult:
    """``check``'s result ``report`` with the settlement recorded as ``settled``;
    when every property was proved, every verdict holds and the exit code is 0
    (EXP-SETTLE). The exploration's own figures (states, ``complete``) are kept."""
    if settlement.proved and set(report.properties) <= settlement.methods.keys():
        return replace(
            report,
            settled=settlement,
            properties={pid: True for pid in report.properties},
            deadlock=False,
            conservation=True,
            exit_code=exit_codes.OK,
        )
    return replace(report, settled=settlement)


def settle_open_check(
    report: CheckResult,
    graph: FlowGraph,
    options: CheckOptions,
    seconds: float = DEFAULT_SETTLE_SECONDS,
) -> CheckResult:
    """EXP-SETTLE for ``check``'s result ``report`` of ``graph``: tried only when the
    exploration ran out of budget with nothing found (exit code 4); else ``report``."""
    if report.exit_code != exit_codes.INCOMPLETE:
        return report
    return apply_settlement(report, settle(graph, options, seconds))
