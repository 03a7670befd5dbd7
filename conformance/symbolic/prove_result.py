"""OUT-TYPED-RESULT: the typed result of one ``creditflow prove``.

:func:`prove_result` reads Z3-PROVE's :class:`~creditflow.conformance.symbolic.prove.ProveReport`
into a :class:`ProveResult`; the CLI adds what it wrote (``source``, the invariant's
legend, the counterexample's files, the boundary traces) by :func:`dataclasses.replace`
and prints :meth:`ProveResult.to_json` (schema ``spec/schemas/prove.json``,
OUT-JSON-SCHEMA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from creditflow.conformance.explore.counterexamples import FindingKind
from creditflow.conformance.explore.results import Supply, WrittenTrace
from creditflow.conformance.inputs.credit_sources import CreditsInEffect
from creditflow.conformance.symbolic.prove import (
    Counterexample,
    ProveOutcome,
    ProveReport,
    VerdictStatus,
    exit_code,
    supply_value,
)


@dataclass(frozen=True, slots=True)
class ProveScope:
    """SCOPE-JSON of a ``prove`` run: the supply the question is about (``"every"``, or
    the graph's supply per source: an int when they are equal) and the BMC depth when a
    bounded search limits the answer."""

    supply: Supply
    depth: int | None

    def to_json(self) -> dict[str, Any]:
        return {"supply": self.supply, "depth": self.depth}


@dataclass(frozen=True, slots=True)
class PropertyVerdict:
    """Z3-PROVE's verdict on one property: ``status`` (``proved``, ``violated``,
    ``none-up-to-depth``, ``unknown``), how, and whether it holds for every supply
    (SCOPE-SUPPLY)."""

    status: VerdictStatus
    method: str
    detail: str
    every_supply: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "method": self.method,
            "detail": self.detail,
            "every_supply": self.every_supply,
        }


@dataclass(frozen=True, slots=True)
class BmcFigures:
    """Z3-BMC: the depth asked, the depth decided, whether that is every run, seconds."""

    depth: int | None
    searched: int
    complete: bool
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "searched": self.searched,
            "complete": self.complete,
            "seconds": self.seconds,
        }


@dataclass(frozen=True, slots=True)
class CounterexampleFigures:
    """A replayed Z3 counterexample: the property, the finding's kind, length and who
    is blocked forever, the credits per edge and the supply per source it ran with; for a
    Z3-BOUNDARY case also the edge outside the condition (``None`` for the primary)."""

    property_id: str
    kind: FindingKind
    length: int
    processes: tuple[str, ...]
    credits: dict[str, list[int]]
    publishes: dict[str, int]
    edge: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "property": self.property_id,
            "kind": self.kind,
            "length": self.length,
            "processes": list(self.processes),
            "credits": self.credits,
            "publishes": self.publishes,
        }

    def boundary_json(self) -> dict[str, Any]:
        """Z3-BOUNDARY: one entry of ``boundary``."""
        return {
            "edge": self.edge,
            "credits": self.credits,
            "publishes": self.publishes,
            "kind": self.kind,
            "length": self.length,
            "processes": list(self.processes),
        }


@dataclass(frozen=True, slots=True)
class BacklogFigures:
    """Z3-BACKLOG: whether the stalled-queue backlog theorem was proved, and its
    statements."""

    proved: bool
    statements: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"proved": self.proved, "statements": list(self.statements)}


@dataclass(frozen=True, slots=True)
class ProveResult:
    """The verdicts, proofs and figures of one ``prove`` run (Z3-PROVE, SCOPE-*)."""

    graph: str
    mode: Literal["symbolic", "concrete"]
    result: ProveOutcome
    exit_code: int
    seconds: float
    scope: ProveScope
    properties: dict[str, PropertyVerdict]
    #: Z3-STEP-BOUND (``None``: not computed)
    step_bound: int | None
    deadlock_rule: str | None
    condition: str | None
    condition_exact: bool
    #: Z3-OWN-CREDITS: the graph's own specs outside the derived condition
    own_credits_outside: dict[str, list[int]]
    #: Z3-OWN-CREDITS: PROP-NO-DEADLOCK for the graph's own credits when some fall outside
    own_credits: PropertyVerdict | None
    invariant: tuple[str, ...]
    invariant_dropped: dict[str, str]
    #: Z3-RANK: the ranking function and the most steps of any run, when proved
    ranking: str | None
    max_steps: str | None
    bmc: BmcFigures | None
    counterexample: CounterexampleFigures | None
    boundary: tuple[CounterexampleFigures, ...]
    backlog: BacklogFigures | None
    #: added by the CLI: the graph as named, the invariant's lemma forms, the files
    source: str | None = None
    invariant_legend: dict[str, str] | None = None
    files: WrittenTrace | None = None
    #: the trace written for each boundary case, in order (``None``: none written yet)
    boundary_traces: tuple[str | None, ...] | None = None
    #: IN-CREDIT-SOURCES: every edge's credit and where it came from (added by the CLI)
    credits_in_effect: CreditsInEffect | None = None

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``prove --json``'s document, keys in their printed order."""
        boundary = [c.boundary_json() for c in self.boundary]
        if self.boundary_traces is not None:
            for entry, trace in zip(boundary, self.boundary_traces, strict=True):
                entry["trace"] = trace
        out: dict[str, Any] = {
            "graph": self.graph,
            "mode": self.mode,
            "result": self.result,
            "exit_code": self.exit_code,
            "seconds": self.seconds,
            "scope": self.scope.to_json(),
            "properties": {pid: v.to_json() for pid, v in self.properties.items()},
            "step_bound": self.step_bound,
            "deadlock_rule": self.deadlock_rule,
            "condition": self.condition,
            "condition_exact": self.condition_exact,
            "own_credits_outside": self.own_credits_outside,
            "own_credits": self.own_credits.to_json() if self.own_credits is not None else None,
            "invariant": list(self.invariant),
            "invariant_dropped": self.invariant_dropped,
            "ranking": self.ranking,
            "max_steps": self.max_steps,
            "bmc": self.bmc.to_json() if self.bmc is not None else None,
            "counterexample": self.counterexample.to_json()
            if self.counterexample is not None
            else None,
            "boundary": boundary,
            "backlog": self.backlog.to_json() if self.backlog is not None else None,
        }
        if self.source is not None:
            out["source"] = self.source
        if self.credits_in_effect is not None:
            out["credits_in_effect"] = self.credits_in_effect.to_json()
        if self.invariant_legend is not None:
            out["invariant_legend"] = self.invariant_legend
        if self.files is not None:
            out.update(self.files.to_json())
        return out


def prove_scope(report: ProveReport) -> ProveScope:
    """SCOPE-JSON of a ``prove`` run (see :class:`ProveScope`)."""
    supplies = {n.name: n.publishes for n in report.graph.nodes if n.source}
    supply: Supply = "every" if report.every_supply else supply_value(supplies)
    bmc = report.bmc
    return ProveScope(supply=supply, depth=bmc.searched if bmc and not bmc.complete else None)


def counterexample_figures(cex: Counterexample) -> CounterexampleFigures:
    """The figures of one replayed Z3 counterexample (``edge`` for Z3-BOUNDARY's)."""
    return CounterexampleFigures(
        property_id=cex.finding.property_id,
        kind=cex.finding.kind,
        length=cex.finding.length,
        processes=tuple(cex.finding.processes),
        credits=cex.credits,
        publishes=cex.publishes,
        edge=cex.edge or None,
    )


def prove_result(report: ProveReport) -> ProveResult:
    """The verdicts and figures of one ``prove`` run (OUT-TYPED-RESULT)."""
    primary = report.primary()
    termination = report.termination if report.termination and report.termination.proved else None
    return ProveResult(
        graph=report.graph.name,
        mode="symbolic" if report.symbolic else "concrete",
        result=report.result,
        exit_code=exit_code(report),
        seconds=round(report.seconds, 3),
        scope=prove_scope(report),
        properties={
            pid: PropertyVerdict(v.status, v.method, v.detail, v.every_supply)
            for pid, v in report.verdicts.items()
        },
        step_bound=report.step_bound,
        deadlock_rule=report.deadlock.rule if report.deadlock else None,
        condition=report.condition,
        condition_exact=report.condition_exact,
        own_credits_outside={k: list(v) for k, v in report.own_outside.items()},
        own_credits=None
        if report.own_credits is None
        else PropertyVerdict(
            report.own_credits.status,
            report.own_credits.method,
            report.own_credits.detail,
            report.own_credits.every_supply,
        ),
        invariant=tuple(sorted(report.invariant.lemmas)),
        invariant_dropped=dict(sorted(report.invariant.dropped.items())),
        ranking=termination.rank if termination else None,
        max_steps=str(termination.initial_rank) if termination else None,
        bmc=None
        if report.bmc is None
        else BmcFigures(
            depth=report.depth,
            searched=report.bmc.searched,
            complete=report.bmc.complete,
            seconds=round(report.bmc.seconds, 3),
        ),
        counterexample=counterexample_figures(primary) if primary is not None else None,
        boundary=tuple(counterexample_figures(c) for c in report.boundary),
        backlog=None
        if report.backlog is None
        else BacklogFigures(report.backlog.proved, tuple(report.backlog.statements)),
    )
