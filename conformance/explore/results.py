"""OUT-TYPED-RESULT: the typed results of the explorer's commands, ``check`` and
``accounts check``, and the files written for a counterexample.

:class:`CheckResult` is built by the exploration's summary (``explore.check.summary``)
or by the proof for every supply (``symbolic.every_supply``), grows by
:func:`dataclasses.replace` through EXP-SETTLE (``settled``), SCOPE-JSON (``scope``,
``claim``) and the CLI (``source``, ``files``), and is turned into the ``--json``
document by its one renderer, :meth:`CheckResult.to_json` (schema
``spec/schemas/check.json``, OUT-JSON-SCHEMA). Parts still to come are ``None`` and
absent from the document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.counterexamples import DeadlockKind
from creditflow.conformance.inputs.credit_sources import CreditsInEffect

#: SCOPE-SUPPLY: the supply a claim is about: ``"every"``, publishes per source, or
#: publishes per source name
Supply = Literal["every"] | int | dict[str, int]


@dataclass(frozen=True, slots=True)
class Settlement:
    """The outcome of one EXP-SETTLE attempt: ``proved`` when every property was proved;
    ``result`` is Z3-PROVE's (``proved``, ``counterexample`` or ``unknown``) or
    ``too-big``."""

    proved: bool
    result: str
    #: per property id, how it was proved (e.g. ``invariant``, ``edge-lemma``)
    methods: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``settled`` object of check's JSON (EXP-SETTLE)."""
        return {
            "rule": "EXP-SETTLE",
            "by": "Z3-PROVE",
            "result": self.result,
            "proved": self.proved,
            "methods": self.methods,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True, slots=True)
class SupplyDecision:
    """SCOPE-ORDER: how a check decided without exploring, for every supply: the proof
    method per property and Z3-STEP-BOUND's bound (``None``: not computed)."""

    decided_by: dict[str, str]
    step_bound: int | None


@dataclass(frozen=True, slots=True)
class CheckScope:
    """SCOPE-JSON: the supply asked about, the supply explored (when an exploration
    limits the answer) and the exploration's state budget (when it ran out)."""

    supply: Supply
    explored_supply: int | dict[str, int] | None = None
    max_states: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"supply": self.supply}
        if self.explored_supply is not None:
            out["explored_supply"] = self.explored_supply
        if self.max_states is not None:
            out["max_states"] = self.max_states
        return out


@dataclass(frozen=True, slots=True)
class CheckFiles:
    """The files ``check`` wrote for a counterexample (``None``: not written) and, for a
    trace over TRACE-LIMIT, why it was not written."""

    trace: str | None
    dot: str | None
    svg: str | None
    trace_not_written: str | None = None


@dataclass(frozen=True, slots=True)
class WrittenTrace:
    """The files written for one counterexample (OUT-FAILURE: ``None`` when a write
    failed): its ITF trace, or why it was not written (TRACE-LIMIT), and its picture
    when one was asked for."""

    trace: str | None
    dot: str | None = None
    svg: str | None = None
    trace_not_written: str | None = None
    pictured: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trace": self.trace}
        if self.trace_not_written is not None:
            out["trace_not_written"] = self.trace_not_written
        elif self.pictured:
            out["dot"] = self.dot
            out["svg"] = self.svg
        return out


#: SCOPE-NOT-CHECKED: why PROP-MAILBOX-BOUND is not checked
NO_MAILBOX_BOUND = "no bound given"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdicts and figures of one check (PROP-*, EXP-*, SCOPE-*); ``properties``
    maps each property id to ``True`` (holds), ``False`` (violated) or ``None``
    (undecided)."""

    graph: str
    complete: bool
    stopped_at_deadlock: bool
    deadlock: bool | None
    deadlock_kind: DeadlockKind | None
    blocked_forever: tuple[str, ...]
    blocked_forever_drawn: tuple[str, ...]
    conservation: bool | None
    properties: dict[str, bool | None]
    states: int
    transitions: int
    seconds: float
    states_per_second: int | None
    reduced: bool
    #: EXP-POR: whether the reduced search ran; cut by the budget, it left the answer to
    #: the full search (EXP-POR-BUDGET)
    partial_order: bool
    symmetry_order: int
    shortest_counterexample_length: int | None
    #: EXP-SHORTEST, SCOPE-SHORTEST: whether that length is certified as the least one
    shortest_certified: bool | None
    counterexample_lengths: dict[str, int]
    exit_code: int
    #: SCOPE-ORDER: decided for every supply without exploring
    decision: SupplyDecision | None = None
    #: EXP-SETTLE: the proof tried after the exploration's budget ran out
    settled: Settlement | None = None
    #: SCOPE-JSON: what was asked and what limits the answer, and the claim in words
    scope: CheckScope | None = None
    claim: str | None = None
    #: the graph as the user named it (a file or a preset)
    source: str | None = None
    files: CheckFiles | None = None
    #: IN-CREDIT-SOURCES: every edge's credit and where it came from (added by the CLI)
    credits_in_effect: CreditsInEffect | None = None
    #: SCOPE-NOT-CHECKED: the properties not asked about (not in ``properties``), and why
    not_checked: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``check --json``'s document, keys in their printed order."""
        out: dict[str, Any] = {
            "graph": self.graph,
            "complete": self.complete,
            "stopped_at_deadlock": self.stopped_at_deadlock,
            "deadlock": self.deadlock,
            "deadlock_kind": self.deadlock_kind,
            "blocked_forever": list(self.blocked_forever),
            "blocked_forever_drawn": list(self.blocked_forever_drawn),
            "conservation": self.conservation,
            "properties": dict(self.properties),
            **({"not_checked": dict(self.not_checked)} if self.not_checked else {}),
            "states": self.states,
            "transitions": self.transitions,
            "seconds": self.seconds,
            "states_per_second": self.states_per_second,
            "reduced": self.reduced,
            "partial_order": self.partial_order,
            "symmetry_order": self.symmetry_order,
            "shortest_counterexample_length": self.shortest_counterexample_length,
            "shortest_certified": self.shortest_certified,
            "counterexample_lengths": dict(self.counterexample_lengths),
            "exit_code": self.exit_code,
        }
        if self.decision is not None:
            out["decided_by"] = dict(self.decision.decided_by)
            out["step_bound"] = self.decision.step_bound
        if self.settled is not None:
            out["settled"] = self.settled.to_json()
        if self.scope is not None:
            out["scope"] = self.scope.to_json()
        if self.claim is not None:
            out["claim"] = self.claim
        if self.source is not None:
            out["source"] = self.source
        if self.credits_in_effect is not None:
            out["credits_in_effect"] = self.credits_in_effect.to_json()
        if self.files is not None:
            if self.files.trace_not_written is not None:
                out["trace_not_written"] = self.files.trace_not_written
            out["trace"] = self.files.trace
            out["dot"] = self.files.dot
            out["svg"] = self.files.svg
        return out


@dataclass(frozen=True, slots=True)
class AccountBound:
    """AC-OVERSHOOT for one account: the largest debt reached, the proved bound,
    whether it was reached (``None``: undecided) and the naive bound."""

    max_debt: int
    bound: int
    tight: bool | None
    naive_bound: int

    def to_json(self) -> dict[str, Any]:
        return {
            "max_debt": self.max_debt,
            "bound": self.bound,
            "tight": self.tight,
            "naive_bound": self.naive_bound,
        }


@dataclass(frozen=True, slots=True)
class AccountsCheckResult:
    """The verdicts and figures of one ``accounts check`` (AC-*, PROP-NO-DEADLOCK), each
    account's debt against its bounds; the CLI adds ``source`` and the trace it wrote."""

    graph: str
    limit: int
    complete: bool
    properties: dict[str, bool | None]
    accounts: dict[str, AccountBound]
    deadlock_kind: DeadlockKind | None
    blocked_forever: tuple[str, ...]
    states: int
    seconds: float
    symmetry_order: int
    shortest_counterexample_length: int | None
    counterexample_lengths: dict[str, int]
    exit_code: int
    source: str | None = None
    files: WrittenTrace | None = None

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``accounts check --json``'s document, keys in printed order."""
        out: dict[str, Any] = {
            "graph": self.graph,
            "limit": self.limit,
            "complete": self.complete,
            "properties": dict(self.properties),
            "accounts": {name: a.to_json() for name, a in self.accounts.items()},
            "deadlock_kind": self.deadlock_kind,
            "blocked_forever": list(self.blocked_forever),
            "states": self.states,
            "seconds": self.seconds,
            "symmetry_order": self.symmetry_order,
            "shortest_counterexample_length": self.shortest_counterexample_length,
            "counterexample_lengths": dict(self.counterexample_lengths),
            "exit_code": self.exit_code,
        }
        if self.source is not None:
            out["source"] = self.source
        if self.files is not None:
            out.update(self.files.to_json())
        return out


@dataclass(frozen=True, slots=True)
class AlarmsCheckResult:
    """The verdicts and figures of one ``alarms check`` (AL-*) under a ``profile``; the
    CLI adds the trace it wrote."""

    profile: str
    complete: bool
    states: int
    seconds: float
    properties: dict[str, bool | None]
    exit_code: int
    files: WrittenTrace | None = None

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``alarms check --json``'s document, keys in printed order."""
        out: dict[str, Any] = {
            "profile": self.profile,
            "complete": self.complete,
            "states": self.states,
            "seconds": self.seconds,
            "properties": dict(self.properties),
            "exit_code": self.exit_code,
        }
        if self.files is not None:
            out.update(self.files.to_json())
        return out


@dataclass(frozen=True)
class RunViolation:
    """EXP-FIRST: a property violated at the end of ``steps`` (action names) from the
    initial state; ``states`` are the readable states along the run, ``props`` every
    property the last state violates, ``prop`` the first of them in the family's order."""

    prop: str
    steps: tuple[str, ...]
    states: tuple[Any, ...]
    props: tuple[str, ...] = ()


@dataclass(frozen=True)
class SupplySearch:
    """EXP-FIRST's outcome for one instance and supply: ``violation`` (the first found
    breadth first, with a shortest run) or none; ``complete`` when the whole reachable
    space was visited within the budget; ``states`` stored."""

    topology: str
    states: int
    complete: bool
    violation: RunViolation | None
    seconds: float = 0.0
    #: a full search (``--full-search``): every property seen violated anywhere
    violated: tuple[str, ...] = ()


@dataclass(frozen=True)
class SupplyCheck:
    """What ``creditflow check`` decided for one supply of an instance whose deadlock
    is the terminal one, under the family's id ``deadlock_id`` (SCOPE-EXIT).

    ``every_supply`` says whether the question was every supply (no ``--publishes`` or
    ``--graph-supply``): explicit search decides one supply only, so then nothing found
    is "not established" (exit 4), never 0."""

    search: SupplySearch
    supply: int
    every_supply: bool
    deadlock_id: str
    directed_steps: int = 0
    """Steps taken by directed runs (AMQ-DIRECTED-RUN); 0 when none ran."""
    shortest: bool = True
    """The violation's run is a shortest one (breadth first); ``False`` when it came
    from a directed run."""

    @property
    def claim(self) -> str:
        """The sentence the verdict stands for."""
        v = self.search.violation
        if v is not None:
            if not self.shortest:
                return (
                    f"{v.prop} violated after {len(v.steps)} steps with supply {self.supply} "
                    f"(a directed run's witness; shortest not established: the breadth-first "
                    f"search stopped at {self.search.states:,} states)"
                )
            return (
                f"{v.prop} violated after {len(v.steps)} steps (shortest) with supply {self.supply}"
            )
        if not self.search.complete:
            runs = (
                f" and {self.directed_steps:,} steps of directed runs"
                if self.directed_steps
                else ""
            )
            return (
                f"nothing found within {self.search.states:,} states{runs} with supply "
                f"{self.supply}; not established"
            )
        held = (
            f"holds for supply {self.supply} ({self.search.states:,} states, every state explored)"
        )
        return held + ("; for every supply: not established" if self.every_supply else "")

    @property
    def exit_code(self) -> int:
        """SCOPE-EXIT: 10 for the deadlock, 12 for another property, 0 only for a
        complete search of the supply asked, 4 otherwise."""
        v = self.search.violation
        if v is not None:
            return exit_codes.DEADLOCK if v.prop == self.deadlock_id else exit_codes.VIOLATION
        if self.search.complete and not self.every_supply:
            return exit_codes.OK
        return exit_codes.INCOMPLETE
