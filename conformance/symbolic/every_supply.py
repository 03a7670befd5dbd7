"""SCOPE-ORDER: ``check``'s default question, "for every supply", answered by proof.

``check`` asks about every supply of every source unless the user bounds it
(SCOPE-SUPPLY). Exploration cannot answer that: it enumerates one supply. So
``check`` first asks Z3-PROVE without bounded model checking: the inductive invariant
and the deadlock-freedom rules hold for every supply, and on a graph whose runs all
end EXP-DIRECTED builds a deadlock for RabbitMQ-sized credits without a state space
(replayed through the model, its length compared with Z3-STEP-BOUND). Only what that
leaves open is explored, with the graph's own supply as an example, and then the answer
is scoped to that supply (SCOPE-EXIT: exit 4 unless a violation was found).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.check import CheckOptions
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.explore.properties import CONSERVATION
from creditflow.conformance.symbolic.prove import (
    Counterexample,
    ProveOptions,
    ProveReport,
    prove_graph,
)
from creditflow.conformance.symbolic.settle import SETTLE_LIMIT
from creditflow.model.network.graph import FlowGraph


@dataclass(frozen=True)
class SupplyAnswer:
    """What Z3-PROVE (without search) and EXP-DIRECTED established for every supply:
    ``proved`` (every property), or a replayed ``counterexample``; ``report`` is the
    proof report either way."""

    report: ProveReport
    seconds: float

    @property
    def proved(self) -> bool:
        return self.report.result == "proved"

    @property
    def counterexample(self) -> Counterexample | None:
        return self.report.primary()

    @property
    def decided(self) -> bool:
        """Every property proved, or a violation found and every other property proved
        (else ``check`` explores the example supply for what is open)."""
        if self.proved:
            return True
        cex = self.counterexample
        return cex is not None and all(
            v.status == "proved" or pid == cex.finding.property_id
            for pid, v in self.report.verdicts.items()
        )


def answer_every_supply(
    graph: FlowGraph, options: CheckOptions, seconds: float
) -> SupplyAnswer | None:
    """SCOPE-ORDER: the proofs and EXP-DIRECTED for ``graph`` under ``options``'
    overrides, for every supply; ``None`` above :data:`SETTLE_LIMIT` nodes plus edges."""
    if len(graph.nodes) + len(graph.edges) > SETTLE_LIMIT:
        return None
    started = time.perf_counter()
    report = prove_graph(
        graph,
        ProveOptions(
            credit=options.credit,
            all_check_blocked=options.all_check_blocked,
            mailbox_bound=options.mailbox_bound,
            timeout_s=seconds,
            deadline=time.monotonic() + seconds,
            every_supply=True,
            search=False,
        ),
    )
    return SupplyAnswer(report, time.perf_counter() - started)


def answer_summary(answer: SupplyAnswer) -> dict[str, Any]:
    """``check``'s summary (the keys of :func:`~creditflow.conformance.explore.check.summary`)
    for an answer decided without exploring: no state was enumerated."""
    report = answer.report
    cex = answer.counterexample
    finding = cex.finding if cex is not None else None
    violated = {finding.property_id} if finding is not None else set()
    return {
        "graph": report.graph.name,
        "complete": True,
        "stopped_at_deadlock": False,
        "deadlock": finding is not None and finding.property_id == NO_DEADLOCK,
        "deadlock_kind": finding.kind if finding is not None else None,
        "blocked_forever": list(finding.processes) if finding is not None else [],
        "blocked_forever_drawn": list(finding.final_processes) if finding is not None else [],
        "conservation": CONSERVATION not in violated,
        "properties": {
            pid: False if pid in violated else True if v.status == "proved" else None
            for pid, v in report.verdicts.items()
        },
        "states": 0,
        "transitions": 0,
        "seconds": round(answer.seconds, 4),
        "states_per_second": None,
        "reduced": False,
        "symmetry_order": 1,
        "shortest_counterexample_length": finding.length if finding is not None else None,
        "counterexample_lengths": {finding.property_id: finding.length} if finding else {},
        "exit_code": exit_codes.DEADLOCK
        if finding is not None
        else exit_codes.OK
        if answer.proved
        else exit_codes.INCOMPLETE,
        "decided_by": {pid: v.method for pid, v in report.verdicts.items()},
        "step_bound": report.step_bound,
    }
