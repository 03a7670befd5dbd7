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
from dataclasses import dataclass, replace

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.check import (
    CheckOptions,
    check_graph,
    prepare_graph,
    summary,
)
from creditflow.conformance.explore.counterexamples import Finding, deadlock_kind
from creditflow.conformance.explore.explorer import NO_DEADLOCK, Progress
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import CONSERVATION
from creditflow.conformance.explore.results import (
    CheckResult,
    CheckScope,
    SupplyDecision,
)
from creditflow.conformance.symbolic.prove import (
    Counterexample,
    ProveOptions,
    ProveReport,
    prove_graph,
    supply_value,
)
from creditflow.conformance.symbolic.settle import (
    DEFAULT_SETTLE_SECONDS,
    SETTLE_LIMIT,
    settle_open_check,
)
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
            v.status in ("proved", "not-checked") or pid == cex.finding.property_id
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
            max_crashes=options.max_crashes,
            timeout_s=seconds,
            deadline=time.monotonic() + seconds,
            every_supply=True,
            search=False,
        ),
    )
    return SupplyAnswer(report, time.perf_counter() - started)


def answer_summary(answer: SupplyAnswer) -> CheckResult:
    """``check``'s result for an answer decided without exploring (SCOPE-ORDER): no
    state was enumerated."""
    report = answer.report
    cex = answer.counterexample
    finding = cex.finding if cex is not None else None
    violated = {finding.property_id} if finding is not None else set()
    deadlock = finding if finding is not None and finding.property_id == NO_DEADLOCK else None
    return CheckResult(
        graph=report.graph.name,
        complete=True,
        stopped_at_deadlock=False,
        deadlock=deadlock is not None,
        deadlock_kind=deadlock_kind(deadlock),
        blocked_forever=tuple(finding.processes) if finding is not None else (),
        blocked_forever_drawn=tuple(finding.final_processes) if finding is not None else (),
        conservation=CONSERVATION not in violated,
        properties={
            pid: False if pid in violated else True if v.status == "proved" else None
            for pid, v in report.verdicts.items()
            if v.status != "not-checked"
        },
        # SCOPE-NOT-CHECKED: asked about nothing, so neither proved nor undecided
        not_checked={
            pid: v.detail for pid, v in report.verdicts.items() if v.status == "not-checked"
        },
        states=0,
        transitions=0,
        seconds=round(answer.seconds, 4),
        states_per_second=None,
        reduced=False,
        partial_order=False,
        symmetry_order=1,
        shortest_counterexample_length=finding.length if finding is not None else None,
        # EXP-SHORTEST, SCOPE-SHORTEST: whether that length is certified as the least one
        shortest_certified=finding.shortest if finding is not None else None,
        counterexample_lengths={finding.property_id: finding.length} if finding else {},
        exit_code=exit_codes.DEADLOCK
        if finding is not None
        else exit_codes.OK
        if answer.proved
        else exit_codes.INCOMPLETE,
        decision=SupplyDecision(
            decided_by={pid: v.method for pid, v in report.verdicts.items()},
            step_bound=report.step_bound,
        ),
    )


@dataclass(frozen=True)
class CheckDecision:
    """One ``check``: its typed result (with SCOPE-JSON), the system and finding of the
    counterexample to write (``None`` when nothing is violated)."""

    report: CheckResult
    system: CheckedNetwork | None
    primary: Finding | None


def decide_check(
    graph: FlowGraph,
    options: CheckOptions,
    every_supply: bool = True,
    prove: bool = True,
    prove_seconds: float = DEFAULT_SETTLE_SECONDS,
    progress: Progress | None = None,
) -> CheckDecision:
    """``check`` of ``graph``: SCOPE-ORDER for the default question (every supply); for a
    bounded supply (SCOPE-BOUNDED-PROOF) the same proofs first, then an exploration of the
    supply asked (with EXP-SETTLE when its budget runs out); the verdict scoped
    (SCOPE-JSON, SCOPE-EXIT). A graph with faults is proved for every supply where the
    invariant and k-induction decide it (Z3-FAULTS); else its example supply is explored
    and "holds" is then not established for every supply (SCOPE-EXIT: ask with
    --graph-supply)."""
    answer = answer_every_supply(graph, options, prove_seconds) if prove else None
    if answer is not None and not every_supply and not answer.proved:
        # SCOPE-BOUNDED-PROOF: only "proved for every supply" carries over to the supply
        # asked; a counterexample may need another supply, so the asked one is explored
        answer = None
    if answer is not None and answer.decided:
        report = answer_summary(answer)
        cex = answer.counterexample
        system, primary = (cex.system, cex.finding) if cex else (None, None)
    else:
        system, result = check_graph(graph, options, progress)
        report = summary(system, result)
        if prove and answer is None:
            report = settle_open_check(report, graph, options, prove_seconds)
        primary = result.primary()
        cex = answer.counterexample if answer is not None else None
        if primary is None and cex is not None and answer is not None:
            # SCOPE-ORDER: the example supply showed nothing, the proof's run stands
            report = replace(
                answer_summary(answer),
                properties={**report.properties, cex.finding.property_id: False},
            )
            system, primary = cex.system, cex.finding
    report = scoped(report, graph, options, every_supply, answer)
    report = replace(report, graph=report.graph or graph.name)
    return CheckDecision(report, system, primary)


def scoped(
    report: CheckResult,
    graph: FlowGraph,
    options: CheckOptions,
    every_supply: bool,
    answer: SupplyAnswer | None,
) -> CheckResult:
    """SCOPE-JSON and SCOPE-EXIT for ``check``'s result: what was asked (``supply``:
    ``"every"`` or the supply explored), what limits the answer (``explored_supply``,
    ``max_states``), the claim in words, and exit 0 only when the claim asked for is
    established."""
    supplies = {n.name: n.publishes for n in prepare_graph(graph, options).nodes if n.source}
    example = supply_value(supplies)
    decided = answer is not None and answer.decided
    scope = (
        CheckScope(supply="every" if every_supply else example)
        if decided
        else CheckScope(
            supply="every" if every_supply else example,
            explored_supply=example,
            max_states=None if report.complete else options.max_states,
        )
    )
    code = report.exit_code
    asked = supply_words(scope.supply)
    if code in (exit_codes.DEADLOCK, exit_codes.VIOLATION):
        cex = answer.counterexample if answer is not None else None
        used = supply_value(cex.publishes) if cex is not None else example
        claim = f"violated with {supply_words(used)}" + (
            f": not for {asked}" if every_supply else ""
        )
    elif code == exit_codes.OK and every_supply and not decided and report.settled is None:
        code = exit_codes.INCOMPLETE
        claim = (
            f"holds for {supply_words(example)} (every state explored); for every supply: "
            "not established"
        )
    elif code == exit_codes.OK:
        claim = f"holds for {asked}"
    elif report.complete or report.stopped_at_deadlock:
        claim = f"not established for {asked}"
    else:
        claim = (
            f"no counterexample within {report.states:,} states "
            f"({supply_words(example)}); not established for {asked}"
        )
    return replace(report, scope=scope, exit_code=code, claim=claim)


def supply_words(supply: object) -> str:
    """SCOPE-TEXT: ``every supply``, ``10 publishes per source`` or
    ``400 publishes at reader``."""
    if supply == "every":
        return "every supply"
    if isinstance(supply, dict):
        return ", ".join(f"{v:,} publishes at {k}" for k, v in supply.items())
    return f"{supply:,} publishes per source" if supply != 1 else "1 publish per source"
