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
from typing import TYPE_CHECKING

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.check import (
    CheckOptions,
    check_graph,
    prepare_graph,
    summary,
)
from creditflow.conformance.explore.counterexamples import Finding, deadlock_kind
from creditflow.conformance.explore.explorer import NO_DEADLOCK, ExplorationResult, Progress
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import CONSERVATION
from creditflow.conformance.explore.results import (
    CheckResult,
    CheckScope,
    SupplyDecision,
)
from creditflow.conformance.symbolic.prove import (
    ProveOutcome,
    ProveReport,
    Verdict,
    check_proof_options,
    primary_counterexample,
    prove_graph,
    supply_value,
)
from creditflow.conformance.symbolic.settle import (
    DEFAULT_SETTLE_SECONDS,
    SETTLE_LIMIT,
    settle_open_check,
)
from creditflow.model.network.graph import FlowGraph

if TYPE_CHECKING:
    from creditflow.conformance.symbolic.race import ProofProcess


@dataclass(frozen=True)
class ProofCounterexample:
    """A replayed counterexample of the proofs, without Z3 (so that it crosses from the
    proof child, SCOPE-RACE): the graph with the supply it ran on, the finding, the
    mailbox bound and the encoding of the finding's states (EXP-FINITE: with or without
    the sinks' consumed counters); the system is rebuilt from them, the one that made the
    states (Z3-WITNESS and EXP-DIRECTED count, the SCOPE-SHORTEST exhaustion does not),
    so nothing reads a state with another encoding (EXP-ONE-ENCODING)."""

    graph: FlowGraph
    finding: Finding
    mailbox_bound: int | None = None
    count_consumed: bool = True

    @property
    def system(self) -> CheckedNetwork:
        return CheckedNetwork(
            self.graph, mailbox_bound=self.mailbox_bound, count_consumed=self.count_consumed
        )

    @property
    def publishes(self) -> dict[str, int]:
        return {n.name: n.publishes for n in self.graph.nodes if n.source}


@dataclass(frozen=True)
class SupplyAnswer:
    """What Z3-PROVE (without search, or with Z3-BMC for every supply on a fault graph)
    and EXP-DIRECTED established for every supply: ``result`` ``proved`` (every property)
    or ``counterexample`` (replayed) or ``unknown``, per property ``verdicts``, and
    Z3-STEP-BOUND. Frozen and free of Z3 objects (SCOPE-RACE sends it between processes)."""

    graph_name: str
    result: ProveOutcome
    verdicts: dict[str, Verdict]
    counterexamples: dict[str, ProofCounterexample]
    step_bound: int | None
    seconds: float

    @property
    def proved(self) -> bool:
        return self.result == "proved"

    @property
    def counterexample(self) -> ProofCounterexample | None:
        """The deadlock if there is one, else the shortest other violation."""
        return primary_counterexample(self.counterexamples)

    @property
    def decided(self) -> bool:
        """Every property proved, or a violation found and every other property proved
        (else ``check`` explores the example supply for what is open)."""
        if self.proved:
            return True
        cex = self.counterexample
        return cex is not None and all(
            v.status in ("proved", "not-checked") or pid == cex.finding.property_id
            for pid, v in self.verdicts.items()
        )

    @property
    def certain(self) -> bool:
        """SCOPE-RACE: the answer to "every supply?" whatever the exploration finds:
        :attr:`decided`, or a deadlock certified shortest for every supply (Z3-BMC with
        a symbolic supply, EXP-DIRECTED at Z3-STEP-BOUND). Another violation is not: the
        exploration may still find a deadlock, which takes precedence (exit 10)."""
        cex = self.counterexample
        deadlock = cex is not None and cex.finding.property_id == NO_DEADLOCK
        return self.decided or (deadlock and cex is not None and cex.finding.shortest)


def supply_answer(report: ProveReport, seconds: float, mailbox_bound: int | None) -> SupplyAnswer:
    """``report`` as a :class:`SupplyAnswer`. A Z3-BMC counterexample for every supply
    that the solver proved shortest is certified so (SCOPE-SHORTEST): BMC deepens one
    step at a time over every supply."""
    bmc = report.bmc
    counterexamples = {}
    for pid, cex in report.counterexamples.items():
        finding = cex.finding
        if report.verdicts[pid].method == "bmc" and bmc is not None and bmc.shortest.get(pid):
            finding.shortest = True
        counterexamples[pid] = ProofCounterexample(
            cex.system.graph, finding, mailbox_bound, cex.system.network.count_consumed
        )
    return SupplyAnswer(
        graph_name=report.graph.name,
        result=report.result,
        verdicts=dict(report.verdicts),
        counterexamples=counterexamples,
        step_bound=report.step_bound,
        seconds=seconds,
    )


def answer_every_supply(
    graph: FlowGraph, options: CheckOptions, seconds: float, search: bool = False
) -> SupplyAnswer | None:
    """SCOPE-ORDER: the proofs and EXP-DIRECTED for ``graph`` under ``options``'
    overrides, for every supply, within ``seconds``; with ``search`` also Z3-BMC for every
    supply (SCOPE-RACE, fault graphs), within as many seconds again; ``None`` above
    :data:`SETTLE_LIMIT` nodes plus edges."""
    if len(graph.nodes) + len(graph.edges) > SETTLE_LIMIT:
        return None
    started = time.perf_counter()
    # SCOPE-RACE: Z3-BMC gets a budget of its own, as in `prove` (it runs beside the
    # exploration, on the other core)
    deadline = time.monotonic() + (2 * seconds if search else seconds)
    proof = check_proof_options(replace(options, publishes=None), seconds, deadline)
    report = prove_graph(graph, replace(proof, every_supply=True, search=search))
    return supply_answer(report, time.perf_counter() - started, options.mailbox_bound)


def answer_summary(answer: SupplyAnswer) -> CheckResult:
    """``check``'s result for an answer decided without exploring (SCOPE-ORDER): no
    state was enumerated."""
    cex = answer.counterexample
    finding = cex.finding if cex is not None else None
    violated = set(answer.counterexamples)
    deadlock = finding if finding is not None and finding.property_id == NO_DEADLOCK else None
    return CheckResult(
        graph=answer.graph_name,
        complete=True,
        stopped_at_deadlock=False,
        deadlock=deadlock is not None,
        deadlock_kind=deadlock_kind(deadlock),
        blocked_forever=tuple(finding.processes) if finding is not None else (),
        blocked_forever_drawn=tuple(finding.final_processes) if finding is not None else (),
        conservation=CONSERVATION not in violated,
        properties={
            pid: False if pid in violated else True if v.status == "proved" else None
            for pid, v in answer.verdicts.items()
            if v.status != "not-checked"
        },
        # SCOPE-NOT-CHECKED: asked about nothing, so neither proved nor undecided
        not_checked={
            pid: v.detail for pid, v in answer.verdicts.items() if v.status == "not-checked"
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
        counterexample_lengths={
            pid: c.finding.length for pid, c in sorted(answer.counterexamples.items())
        },
        exit_code=exit_codes.DEADLOCK
        if deadlock is not None
        else exit_codes.VIOLATION
        if finding is not None
        else exit_codes.OK
        if answer.proved
        else exit_codes.INCOMPLETE,
        decision=SupplyDecision(
            decided_by={pid: v.method for pid, v in answer.verdicts.items()},
            step_bound=answer.step_bound,
        ),
    )


@dataclass(frozen=True)
class CheckDecision:
    """One ``check``: its typed result (with SCOPE-JSON), the system and finding of the
    counterexample to write (``None`` when nothing is violated), and SCOPE-RACE's
    ``answered_by`` (``proof``, ``exploration`` or both, ``proof+exploration``) and
    ``stopped`` (the engine stopped because the other had answered, or ``None``)."""

    report: CheckResult
    system: CheckedNetwork | None
    primary: Finding | None
    answered_by: str = ""
    stopped: str | None = None
    #: SCOPE-RACE: why the proof child gave no answer (it crashed or was killed); the
    #: verdict is then the exploration's, as with ``--no-prove``
    proof_failed: str | None = None


class _ProofAnswered(BaseException):  # noqa: N818 - a stop, not an error
    """SCOPE-RACE: the proof child's answer is certain; the exploration stops."""


def races(graph: FlowGraph, every_supply: bool) -> bool:
    """SCOPE-RACE: whether ``check`` races the proofs (a child process) against the
    exploration: for a bounded question (SCOPE-BOUNDED-PROOF), and for the default
    question on a fault graph (whose proofs then include Z3-BMC for every supply). The
    default question on a graph without faults asks the proofs first, in process
    (SCOPE-ORDER: they are cheap where they decide, and the exploration cannot win)."""
    return not every_supply or graph.has_faults


def final_answer(answer: SupplyAnswer | None, every_supply: bool) -> bool:
    """SCOPE-RACE: whether the proofs' ``answer`` is the verdict whatever the exploration
    would find: "proved for every supply" (either question), or for the default question
    :attr:`SupplyAnswer.certain` (a counterexample of a bounded question may use another
    supply than the one asked, SCOPE-BOUNDED-PROOF)."""
    if answer is None:
        return False
    return answer.proved or (every_supply and answer.certain)


def final_exploration(result: ExplorationResult, every_supply: bool) -> bool:
    """SCOPE-RACE: whether the exploration's ``result`` is the verdict whatever the
    proofs find: for a bounded question a complete search, a certain deadlock or any
    violation (none of which a proof for every supply can contradict); never for the
    default question (a certain answer of the proofs takes precedence)."""
    return not every_supply and (
        result.complete or result.stopped_at_deadlock or bool(result.findings)
    )


def decide_check(
    graph: FlowGraph,
    options: CheckOptions,
    every_supply: bool = True,
    prove: bool = True,
    prove_seconds: float = DEFAULT_SETTLE_SECONDS,
    progress: Progress | None = None,
) -> CheckDecision:
    """``check`` of ``graph``: SCOPE-ORDER for the default question (every supply); for a
    bounded supply (SCOPE-BOUNDED-PROOF) the same proofs, raced against an exploration of
    the supply asked (SCOPE-RACE; EXP-SETTLE when the budget runs out); the verdict
    scoped (SCOPE-JSON, SCOPE-EXIT). A graph with faults is proved for every supply where
    the invariant and k-induction decide it (Z3-FAULTS), refuted where Z3-BMC finds a
    shortest counterexample for every supply (SCOPE-RACE); else its example supply is
    explored and "holds" is then not established for every supply (SCOPE-EXIT: ask with
    --graph-supply)."""
    too_big = len(graph.nodes) + len(graph.edges) > SETTLE_LIMIT
    if prove and not too_big and races(graph, every_supply):
        return _raced(graph, options, every_supply, prove_seconds, progress)
    answer = answer_every_supply(graph, options, prove_seconds) if prove else None
    explored = None
    if answer is None or not answer.decided:
        # SCOPE-ORDER: what the proofs left open is explored on the example supply, also
        # behind a certified deadlock (a property it violates is then shown violated)
        explored = check_graph(graph, options, progress)
    return _combined(graph, options, every_supply, prove, prove_seconds, answer, explored)


def _raced(
    graph: FlowGraph,
    options: CheckOptions,
    every_supply: bool,
    prove_seconds: float,
    progress: Progress | None,
) -> CheckDecision:
    """SCOPE-RACE: the proofs in a child process (SIG-CHILDREN), the exploration here;
    the first final answer wins and the other engine is stopped (the child killed with
    its group and reaped; the exploration at its next progress report)."""
    # deferred: START-LAZY (the race module is only needed here)
    from creditflow.conformance.symbolic.race import ProofFailed, ProofProcess, ProofTask

    task = ProofTask(graph, options, prove_seconds, search=every_supply and graph.has_faults)
    with ProofProcess(task) as proof:

        def watch(found: int, done: int) -> None:
            if progress is not None:
                progress(found, done)
            if proof.done() and final_answer(_answer_or_none(proof), every_supply):
                raise _ProofAnswered

        try:
            explored = check_graph(graph, options, watch)
        except _ProofAnswered:
            answer = proof.answer()
            decision = _combined(graph, options, every_supply, True, prove_seconds, answer, None)
            return replace(decision, answered_by="proof", stopped="exploration")
        if final_exploration(explored[1], every_supply):
            stopped = None if proof.done() else "proof"
            proof.stop()
            decision = _combined(graph, options, every_supply, True, prove_seconds, None, explored)
            return replace(decision, answered_by="exploration", stopped=stopped)
        try:
            answer = proof.answer()
        except ProofFailed as exc:
            # the exploration's answer, as --no-prove gives it (nothing proved)
            decision = _combined(graph, options, every_supply, False, prove_seconds, None, explored)
            return replace(decision, proof_failed=str(exc))
    return _combined(graph, options, every_supply, True, prove_seconds, answer, explored)


def _answer_or_none(proof: ProofProcess) -> SupplyAnswer | None:
    # deferred: START-LAZY (the race module is only needed here)
    from creditflow.conformance.symbolic.race import ProofFailed

    try:
        return proof.answer()
    except ProofFailed:
        return None  # the race goes on; decide_check reports the failure at the end


def _combined(
    graph: FlowGraph,
    options: CheckOptions,
    every_supply: bool,
    prove: bool,
    prove_seconds: float,
    answer: SupplyAnswer | None,
    explored: tuple[CheckedNetwork, ExplorationResult] | None,
) -> CheckDecision:
    """The verdict from the proofs' ``answer`` and the exploration's result (either
    may be missing: not run, or stopped by SCOPE-RACE), the same whichever finished
    first: a final answer of the proofs, else the exploration's finding, else the proofs'
    counterexample (SCOPE-ORDER), else the exploration (with EXP-SETTLE when its budget
    ran out and the proofs did not run)."""
    if answer is not None and not every_supply and not answer.proved:
        # SCOPE-BOUNDED-PROOF: only "proved for every supply" carries over to the supply
        # asked; a counterexample may need another supply, so the asked one is explored
        answer = None
    if final_answer(answer, every_supply) or explored is None:
        assert answer is not None
        cex = answer.counterexample
        report = answer_summary(answer)
        if explored is not None:
            # SCOPE-ORDER: a property the proofs left open and the example supply violates
            example = summary(*explored)
            report = replace(
                report,
                properties={
                    pid: False if held is None and example.properties.get(pid) is False else held
                    for pid, held in report.properties.items()
                },
            )
        system, primary = (cex.system, cex.finding) if cex else (None, None)
        answered_by = "proof"
    else:
        system_explored, result = explored
        report = summary(system_explored, result)
        if prove and answer is None:
            report = settle_open_check(report, graph, options, prove_seconds)
        system, primary = system_explored, result.primary()
        cex = answer.counterexample if answer is not None else None
        answered_by = "exploration" if answer is None else "proof+exploration"
        if primary is None and cex is not None and answer is not None:
            # SCOPE-ORDER: the example supply showed nothing, the proof's run stands
            report = replace(
                answer_summary(answer),
                properties={**report.properties, cex.finding.property_id: False},
            )
            system, primary = cex.system, cex.finding
    report = scoped(report, graph, options, every_supply, answer)
    report = replace(report, graph=report.graph or graph.name)
    return CheckDecision(report, system, primary, answered_by)


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
    decided = answer is not None and answer.certain
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
