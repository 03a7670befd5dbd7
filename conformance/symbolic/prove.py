"""``creditflow prove``: decide the PROP-* properties of a process graph with Z3 (Z3-PROVE).

:func:`prove_graph` tries, per property, the cheapest method that settles it:

1. an inductive invariant (Z3-INVARIANT) that implies it, for every supply;
2. for PROP-NO-DEADLOCK, a deadlock-freedom rule (Z3-DEADLOCK-FREE), for every supply;
3. bounded model checking with the graph's own supply (Z3-BMC): a counterexample is
   replayed through the Python model and returned as an explorer
   :class:`~creditflow.conformance.explore.counterexamples.Finding`; if every run ends within
   the bound, "none" is a proof;
4. k-induction (Z3-K-INDUCTION) on what BMC did not settle.

With ``symbolic`` every edge gets its own symbolic spec and every source a symbolic
supply (Z3-SYMBOLIC-CREDITS): properties are proved for all of them, deadlock freedom
under the exact credit condition (Z3-CONDITION), with a counterexample just outside
it per edge (Z3-BOUNDARY), and the stalled-queue backlog where the graph has that
shape (Z3-BACKLOG). Nothing here prints: the CLI renders the :class:`ProveReport`.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final, Literal, Protocol, TypeVar

import z3

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.check import CheckOptions, check_graph, prepare_graph
from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.explore.directed import directed_run, replayed_finding
from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.explore.explorer import NO_DEADLOCK, RECOVERY
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import (
    FAULT_PROPERTIES,
    MAILBOX_BOUND,
    STATE_PROPERTIES,
)
from creditflow.conformance.explore.results import NO_MAILBOX_BOUND
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.conformance.symbolic.backlog import BacklogTheorem, prove_stalled_backlog
from creditflow.conformance.symbolic.bmc import BmcOptions, BmcResult, bounded_check, k_induction
from creditflow.conformance.symbolic.encoding import Credits, EdgeTerms, NetworkEncoding
from creditflow.conformance.symbolic.invariants import (
    PROVED,
    DeadlockProof,
    EdgeCondition,
    InvariantProof,
    TerminationProof,
    condition_text,
    derive_condition,
    houdini,
    prove_deadlock_freedom,
    prove_termination,
    safe_condition,
)
from creditflow.conformance.symbolic.step_bound import step_bound
from creditflow.conformance.symbolic.witness import Witness, finding_from_witness, map_witness
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph, GraphError

#: BMC depth when none is given and the graph has cycles (or its runs are longer).
DEFAULT_DEPTH = 24
#: BMC depth when every supply is asked (SCOPE-SUPPLY): Z3 also chooses the supply, which
#: costs more per step (cycle2 with a mailbox bound: 3 s at 12, 15 s at 16, over 60 at 24).
DEFAULT_EVERY_SUPPLY_DEPTH = 12
#: BMC depth for the counterexamples outside the credit condition (Z3-BOUNDARY).
DEFAULT_BOUNDARY_DEPTH = 12
#: Ranges for the symbolic credits and supplies of boundary counterexamples (small
#: values make short, readable traces).
BOUNDARY_MAX_CREDIT = 4
BOUNDARY_MAX_SUPPLY = 8
#: Time for shortening a boundary counterexample (it need not be the shortest).
BOUNDARY_SHORTEN_MS = 3_000

PROPERTY_IDS = (*STATE_PROPERTIES, NO_DEADLOCK)
#: Z3-FAULTS: on a graph with faults also PROP-FAULT-FORGET and PROP-RECOVERY
FAULT_PROPERTY_IDS = (*STATE_PROPERTIES, NO_DEADLOCK, *FAULT_PROPERTIES[len(STATE_PROPERTIES) :])


def property_ids(graph: FlowGraph) -> tuple[str, ...]:
    """The properties ``prove`` decides for ``graph`` (Z3-FAULTS), in report order."""
    return FAULT_PROPERTY_IDS if graph.has_faults else PROPERTY_IDS


#: Z3-PROVE: a property's verdict: proved, violated, no violation up to the BMC depth, a
#: solver gave up, or not asked (SCOPE-NOT-CHECKED: PROP-MAILBOX-BOUND without a bound)
VerdictStatus = Literal["proved", "violated", "none-up-to-depth", "unknown", "not-checked"]
VIOLATED: Final = "violated"
NOT_CHECKED: Final = "not-checked"
NONE_FOUND: Final = "none-up-to-depth"
UNKNOWN: Final = "unknown"
#: Z3-PROVE: every property proved for the question asked, a violation, or neither
ProveOutcome = Literal["proved", "counterexample", "unknown"]


class _WithFinding(Protocol):
    @property
    def finding(self) -> Finding: ...


_C = TypeVar("_C", bound=_WithFinding)


def primary_counterexample(found: Mapping[str, _C]) -> _C | None:
    """The counterexample that decides the exit code: a deadlock if there is one, else
    the shortest other violation (as the explorer's ``primary``)."""
    if NO_DEADLOCK in found:
        return found[NO_DEADLOCK]
    if not found:
        return None
    return min(found.values(), key=lambda c: (c.finding.length, c.finding.property_id))


@dataclass(frozen=True)
class ProveOptions:
    """What to prove: graph overrides as in ``check`` (``credit``, ``publishes``,
    NET-ALL-CHECK, PROP-MAILBOX-BOUND), ``symbolic`` credits, the BMC ``depth``
    (default: enough to be complete for acyclic graphs when that is small, else
    :data:`DEFAULT_DEPTH`), the per-query ``timeout_s``, the largest ``k`` tried and the
    time ``shorten_s`` for making a counterexample shortest."""

    credit: CreditSpec | None = None
    symbolic: bool = False
    publishes: int | None = None
    all_check_blocked: bool = False
    mailbox_bound: int | None = None
    #: NET-FAULT-BOUND: at most this many crashes per run (default: every may_crash node)
    max_crashes: int | None = None
    depth: int | None = None
    timeout_s: float = 60.0
    max_k: int = 3
    shorten_s: float | None = None
    #: IN-WORK: ``time.monotonic()`` after which no solver call may run (the command's
    #: whole budget); each call gets at most the time left
    deadline: float | None = None
    #: SCOPE-SUPPLY: the question is "for every supply" (the CLI's default); a proof that
    #: covers only the graph's own supply (a complete BMC, k-induction) then settles nothing
    every_supply: bool = False
    #: whether bounded model checking may run (EXP-SETTLE and SCOPE-ORDER ask first
    #: what the proofs and EXP-DIRECTED decide for every supply, without it)
    search: bool = True

    @property
    def timeout_ms(self) -> int:
        per_call = max(1, int(self.timeout_s * 1000))
        if self.deadline is None:
            return per_call
        return max(1, min(per_call, int((self.deadline - time.monotonic()) * 1000)))

    @property
    def shorten_ms(self) -> int:
        """Time for making a counterexample shortest (default: the solver timeout)."""
        return self.timeout_ms if self.shorten_s is None else int(self.shorten_s * 1000)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome for one property: ``proved``, ``violated``, ``none-up-to-depth`` (a
    bounded search found nothing) or ``unknown`` (a solver gave up); ``method`` says how."""

    property_id: str
    status: VerdictStatus
    method: str
    detail: str = ""
    #: SCOPE-SUPPLY: whether the verdict holds for every supply (a proof by invariant or
    #: rule, a violation) or only for the graph's own supply (a complete BMC, k-induction)
    every_supply: bool = True


@dataclass
class Counterexample:
    """A replayed Z3 witness: the concrete system it ran on and the explorer finding."""

    system: CheckedNetwork
    finding: Finding
    edge: str = ""  # for boundary counterexamples: the edge outside the condition

    @property
    def credits(self) -> dict[str, list[int]]:
        return {
            f"{e.sender}->{e.receiver}": [e.credit.initial, e.credit.more_after]
            for e in self.system.graph.edges
        }

    @property
    def publishes(self) -> dict[str, int]:
        return {n.name: n.publishes for n in self.system.graph.nodes if n.source}


@dataclass
class ProveRun:
    """A proof as it goes: :func:`prove_graph` fills it in, step by step, and returns
    its frozen :class:`ProveReport` (OUT-TYPED-RESULT)."""

    graph: FlowGraph
    symbolic: bool
    verdicts: dict[str, Verdict]
    invariant: InvariantProof
    termination: TerminationProof | None = None
    deadlock: DeadlockProof | None = None
    conditions: list[EdgeCondition] = field(default_factory=list)
    condition: str | None = None
    condition_exact: bool = False
    counterexamples: dict[str, Counterexample] = field(default_factory=dict)
    boundary: list[Counterexample] = field(default_factory=list)
    backlog: BacklogTheorem | None = None
    bmc: BmcResult | None = None
    depth: int | None = None
    seconds: float = 0.0
    every_supply: bool = False
    own_outside: dict[str, CreditSpec] = field(default_factory=dict)
    own_credits: Verdict | None = None
    step_bound: int | None = None
    timed_out: bool = False

    def report(self) -> ProveReport:
        """What the proof established, frozen (OUT-TYPED-RESULT)."""
        return ProveReport(
            graph=self.graph,
            symbolic=self.symbolic,
            verdicts=dict(self.verdicts),
            invariant=self.invariant,
            termination=self.termination,
            deadlock=self.deadlock,
            conditions=tuple(self.conditions),
            condition=self.condition,
            condition_exact=self.condition_exact,
            counterexamples=dict(self.counterexamples),
            boundary=tuple(self.boundary),
            backlog=self.backlog,
            bmc=self.bmc,
            depth=self.depth,
            seconds=self.seconds,
            every_supply=self.every_supply,
            own_outside=dict(self.own_outside),
            own_credits=self.own_credits,
            step_bound=self.step_bound,
            timed_out=self.timed_out,
        )


@dataclass(frozen=True, slots=True)
class ProveReport:
    """Everything :func:`prove_graph` established, for the CLI to render (frozen,
    OUT-TYPED-RESULT)."""

    graph: FlowGraph
    symbolic: bool
    verdicts: dict[str, Verdict]
    invariant: InvariantProof
    termination: TerminationProof | None = None
    deadlock: DeadlockProof | None = None
    conditions: tuple[EdgeCondition, ...] = ()
    condition: str | None = None
    condition_exact: bool = False
    counterexamples: dict[str, Counterexample] = field(default_factory=dict)
    boundary: tuple[Counterexample, ...] = ()
    backlog: BacklogTheorem | None = None
    bmc: BmcResult | None = None
    depth: int | None = None
    seconds: float = 0.0

    def primary(self) -> Counterexample | None:
        """The counterexample that decides the exit code: a deadlock if there is one, else
        the shortest other violation (as the explorer's)."""
        return primary_counterexample(self.counterexamples)

    #: SCOPE-SUPPLY: the question asked (every supply, or the graph's own supplies)
    every_supply: bool = False
    #: Z3-OWN-CREDITS (symbolic mode): the edges whose own spec in the graph falls
    #: outside the derived condition, with that spec
    own_outside: dict[str, CreditSpec] = field(default_factory=dict)
    #: Z3-OWN-CREDITS (symbolic mode): PROP-NO-DEADLOCK decided for the graph's own
    #: credits (every supply) when some fall outside the condition (``None``: all inside)
    own_credits: Verdict | None = None
    #: Z3-STEP-BOUND: no run blocks anybody in fewer steps (DAG deadlocks found by
    #: EXP-DIRECTED; ``None`` when not computed)
    step_bound: int | None = None
    #: OUT-JSON-TIMEOUT: the command's budget stopped the proof (never ``proved``)
    timed_out: bool = False

    def established(self, verdict: Verdict) -> bool:
        """SCOPE-EXIT: whether ``verdict`` is a proof for the question asked (a property
        not asked about, SCOPE-NOT-CHECKED, leaves the question open for nothing)."""
        if verdict.status == NOT_CHECKED:
            return True
        return verdict.status == PROVED and (verdict.every_supply or not self.every_supply)

    @property
    def result(self) -> ProveOutcome:
        """``proved`` (every property, for the question asked), ``counterexample`` or
        ``unknown`` (nothing violated, not every property proved)."""
        if self.counterexamples:
            return "counterexample"
        own = self.own_credits  # Z3-OWN-CREDITS: a proof must cover the graph's own credits
        if (
            not self.timed_out
            and all(self.established(v) for v in self.verdicts.values())
            and (own is None or self.established(own))
        ):
            return "proved"
        return "unknown"


def exit_code(report: ProveReport) -> int:
    """SCOPE-EXIT, as ``check``: 10 deadlock, 12 another violation, 0 only when every
    property is proved for the question asked, else 4 (a bounded search that found
    nothing, a proof for the graph's own supply when every supply was asked, a solver
    that gave up) (Z3-PROVE)."""
    if NO_DEADLOCK in report.counterexamples:
        return exit_codes.DEADLOCK
    if report.counterexamples:
        return exit_codes.VIOLATION
    if report.result != "proved":
        return exit_codes.INCOMPLETE
    return exit_codes.OK


def refuse_faults(graph: FlowGraph, command: str, why: str) -> None:
    """Z3-FAULTS-REFUSED: ``command`` does not take a graph on which a crash is possible
    (``why`` says what is argued without faults); one line (:class:`GraphError`, exit 2)."""
    if graph.has_faults:
        raise GraphError(
            f"{command}: graph {graph.name!r} has faults (may_crash on "
            f"{graph.crashable[0].name!r}); {why} (Z3-FAULTS-REFUSED)"
        )


def prove_graph(
    graph: FlowGraph,
    options: ProveOptions = ProveOptions(),
    progress: dict[str, Verdict] | None = None,
) -> ProveReport:
    """Prove or refute every PROP-* property of ``graph`` (after the overrides); on a
    graph with faults also PROP-FAULT-FORGET and PROP-RECOVERY (Z3-FAULTS), with
    concrete credits only (Z3-FAULTS-REFUSED). Each verdict is also put in
    ``progress`` as soon as it is reached, so that a command stopped by its budget can
    still report what was proved (:func:`timed_out_report`, OUT-JSON-TIMEOUT)."""
    started = time.perf_counter()
    verdicts = {} if progress is None else progress
    graph = prepared_graph(graph, options)
    if options.symbolic:
        refuse_faults(
            graph,
            "prove --symbolic",
            "the credit condition is derived without faults; prove its credits "
            "without --symbolic, or give --max-crashes 0",
        )
        report = _prove_symbolic(graph, options, verdicts)
    else:
        report = _prove_concrete(graph, options, verdicts)
    report.seconds = time.perf_counter() - started
    return report.report()


def prepared_graph(graph: FlowGraph, options: ProveOptions) -> FlowGraph:
    """``graph`` under ``options``' credit, supply and fault overrides, as ``check``
    prepares it (the proof, its timed-out report and the synthesis read the same
    graph; the mailbox bound is no override of the graph)."""
    return prepare_graph(
        graph,
        CheckOptions(
            credit=options.credit,
            publishes=options.publishes,
            all_check_blocked=options.all_check_blocked,
            max_crashes=options.max_crashes,
        ),
    )


#: The options of ``check`` that a proof of the same graph takes over as they are.
def check_proof_options(options: CheckOptions, seconds: float, deadline: float) -> ProveOptions:
    """``check``'s overrides in ``options`` as the options of a proof of the same graph
    (EXP-SETTLE, SCOPE-ORDER): ``seconds`` for each solver call, none after the
    ``time.monotonic()`` ``deadline`` (IN-WORK); Z3-FAULTS: fault graphs are proved too."""
    return ProveOptions(
        credit=options.credit,
        publishes=options.publishes,
        all_check_blocked=options.all_check_blocked,
        mailbox_bound=options.mailbox_bound,
        max_crashes=options.max_crashes,
        timeout_s=seconds,
        deadline=deadline,
    )


def timed_out_report(
    graph: FlowGraph, options: ProveOptions, progress: dict[str, Verdict], seconds: float
) -> ProveReport:
    """OUT-JSON-TIMEOUT: what :func:`prove_graph` had proved when the command's budget
    (``--timeout``, IN-WORK) stopped it: the properties proved so far keep their proof,
    every other one is ``unknown`` (a violation without its replayed counterexample is
    not reported), so the result is ``unknown`` and the exit code 4 (SCOPE-EXIT)."""
    graph = prepared_graph(graph, options)
    why = f"--timeout {options.timeout_s:g} s ran out before it was settled (IN-WORK)"
    verdicts = {
        pid: (
            progress[pid]
            if pid in progress and progress[pid].status == PROVED
            else Verdict(pid, UNKNOWN, "timeout", why)
        )
        for pid in (PROPERTY_IDS if options.symbolic else property_ids(graph))
    }
    run = ProveRun(graph, options.symbolic, verdicts, InvariantProof({}))
    run.every_supply = options.every_supply or options.symbolic
    run.seconds = seconds
    run.timed_out = True  # what the stopped stages would have added is missing
    return run.report()


def never_blocked_candidates(enc: NetworkEncoding) -> dict[str, z3.BoolRef]:
    """Candidate lemmas "the sender of this edge is never blocked on it"."""
    return {
        f"never-blocked[{name}]": z3.Not(enc.blocks_on[e]) for e, name in enumerate(enc.edge_names)
    }


def _state_properties_by_invariant(
    enc: NetworkEncoding, inv: InvariantProof, options: ProveOptions, scope: str
) -> dict[str, Verdict]:
    verdicts = {}
    for pid, formula in enc.property_formulas(options.mailbox_bound).items():
        if pid == MAILBOX_BOUND and options.mailbox_bound is None:
            # SCOPE-NOT-CHECKED: no bound given, nothing to prove; not shown as proved
            verdicts[pid] = Verdict(pid, NOT_CHECKED, "not checked", NO_MAILBOX_BOUND)
            continue
        if inv.implies(enc, formula, options.timeout_ms) == PROVED:
            verdicts[pid] = Verdict(pid, PROVED, "invariant", scope)
    return verdicts


def _prove_concrete(
    graph: FlowGraph, options: ProveOptions, verdicts: dict[str, Verdict]
) -> ProveRun:
    enc_all = NetworkEncoding(graph, Credits.CONCRETE, symbolic_supply=True)
    inv = houdini(
        enc_all,
        enc_all.lemmas() | never_blocked_candidates(enc_all),
        timeout_ms=options.timeout_ms,
    )
    verdicts.update(_state_properties_by_invariant(enc_all, inv, options, "for every supply"))
    termination = prove_termination(enc_all, inv, options.timeout_ms)
    faults = graph.has_faults
    deadlock = None
    if not faults:  # Z3-FAULTS: the deadlock rules and EXP-DIRECTED are argued fault-free
        deadlock = prove_deadlock_freedom(
            enc_all,
            inv,
            termination if termination.proved else None,
            timeout_ms=options.timeout_ms,
        )
        if deadlock.proved:
            verdicts[NO_DEADLOCK] = Verdict(NO_DEADLOCK, PROVED, deadlock.rule, "for every supply")
    report = ProveRun(graph, False, verdicts, inv, termination, deadlock)
    report.every_supply = options.every_supply
    if NO_DEADLOCK not in verdicts and termination.proved and options.every_supply and not faults:
        # SCOPE-DAG: a directed run reads what it needs, so it answers "every supply"
        # only; a bounded question is left to the search of that supply (SCOPE-SUPPLY)
        _directed_deadlock(report, options)
    wanted = property_ids(graph)
    if faults and termination.proved:
        _fault_deadlock_by_induction(report, enc_all, inv, options)
    open_ids = [pid for pid in wanted if pid not in report.verdicts]
    if open_ids and options.search:
        _settle_by_search(report, enc_all, inv, open_ids, options)
    for pid in wanted:
        if pid not in report.verdicts:
            report.verdicts[pid] = Verdict(
                pid, UNKNOWN, "none", "not proved for every supply (no search asked)"
            )
    report.verdicts = {pid: report.verdicts[pid] for pid in wanted}
    return report


def _fault_deadlock_by_induction(
    report: ProveRun, enc_all: NetworkEncoding, inv: InvariantProof, options: ProveOptions
) -> None:
    """Z3-FAULTS: on a fault graph whose runs end (Z3-FAULT-RANK), PROP-NO-DEADLOCK (and
    PROP-RECOVERY, which it implies) is proved for every supply when k-induction shows
    that no reachable state is a bad terminal state (Z3-BAD-TERMINAL)."""
    ki = k_induction(
        enc_all,
        z3.Not(enc_all.bad_terminal()),
        options.max_k,
        lemmas=inv.formula,
        timeout_ms=options.timeout_ms,
    )
    if ki.proved:
        for pid in (NO_DEADLOCK, RECOVERY):
            report.verdicts[pid] = Verdict(
                pid, PROVED, f"{ki.k}-induction", "no bad terminal state, for every supply"
            )


#: EXP-DIRECTED: steps a directed run may take beyond twice its Z3-STEP-BOUND.
DIRECTED_SLACK = 10_000


def _directed_deadlock(report: ProveRun, options: ProveOptions) -> None:
    """SCOPE-DAG: on a graph whose runs all end (Z3-RANK) and whose deadlock freedom no
    rule proved, EXP-DIRECTED drives each sender that can block toward a certified
    deadlock (nearest Z3-STEP-BOUND first) and keeps the shortest replayed run; it is
    proved shortest when its length meets the bound. Nothing found leaves the verdict
    open for bounded model checking."""
    graph = report.graph
    bound = step_bound(graph, options.timeout_ms)
    report.step_bound = bound.steps
    if bound.steps is None:
        return
    best: tuple[CheckedNetwork, Finding] | None = None
    tried: set[str] = set()
    # the sender by the graph's own edge names (a process name may contain "->": a live
    # graph from `observe snapshot --graph-out` names a reader "reader A -> B")
    senders = {f"{e.sender}->{e.receiver}": e.sender for e in graph.edges}
    for edge, least in sorted(bound.per_edge.items(), key=lambda item: item[1]):
        sender = senders[edge]
        if sender in tried or (best is not None and least >= best[1].length):
            continue
        tried.add(sender)
        run = directed_run(graph, sender, 2 * least + DIRECTED_SLACK)
        if run is None:  # EXP-DIRECTED-STARVE: the supply that leaves the sender blocked
            run = directed_run(graph, sender, 2 * least + DIRECTED_SLACK, starve=True)
        if run is None:
            continue
        system, finding = replayed_finding(graph, run, options.mailbox_bound)
        if best is None or finding.length < best[1].length:
            best = (system, finding)
        if finding.length == bound.steps:
            break
    if best is None:
        return
    shortest = best[1].length == bound.steps
    how = "Z3-STEP-BOUND"
    if not shortest:
        decided, shorter = _shorter_by_exhaustion(graph, best[1].length, options.mailbox_bound)
        if decided:
            shortest, how = True, "every smaller supply explored"
            best = shorter or best
    system, finding = best
    finding.shortest = shortest  # SCOPE-SHORTEST, said as EXP-SHORTEST is
    reads = ", ".join(f"{v:,} publishes at {k}" for k, v in run_reads(system).items())
    finding.detail = (
        f"found by EXP-DIRECTED with {reads}; "
        + (
            f"shortest for every supply ({how})"
            if shortest
            else f"not proven shortest: no run blocks anybody in fewer than {bound.steps} steps"
        )
    ).strip()
    report.counterexamples[NO_DEADLOCK] = Counterexample(system, finding)
    report.verdicts[NO_DEADLOCK] = Verdict(
        NO_DEADLOCK,
        VIOLATED,
        "directed",
        f"{finding.kind} after {finding.length} steps"
        + (" (shortest)" if shortest else f" (at least {bound.steps})"),
    )


#: SCOPE-SHORTEST by exhaustion: the longest witness, the most supply vectors and the
#: states per exploration it is tried with.
EXHAUST_LENGTH, EXHAUST_SUPPLIES, EXHAUST_STATES = 40, 64, 200_000


def _shorter_by_exhaustion(
    graph: FlowGraph, length: int, mailbox_bound: int | None
) -> tuple[bool, tuple[CheckedNetwork, Finding] | None]:
    """SCOPE-SHORTEST: a deadlock shorter than ``length`` reads fewer than ``length``
    publishes per source, and a state is only likelier to be doomed with less supply
    left; so the least over every exact supply vector below ``length`` of the explorer's
    shortest deadlock is the shortest of every supply, if it is below ``length``.
    Returns whether that was decided and the shorter deadlock if there is one."""
    sources = [n.name for n in graph.nodes if n.source]
    if length > EXHAUST_LENGTH or length ** len(sources) > EXHAUST_SUPPLIES:
        return False, None
    best: tuple[CheckedNetwork, Finding] | None = None
    for supply in itertools.product(range(length), repeat=len(sources)):
        exact = graph.with_supplies(dict(zip(sources, supply, strict=True)))
        system, result = check_graph(
            exact,
            CheckOptions(
                mailbox_bound=mailbox_bound, max_states=EXHAUST_STATES, stop_at_deadlock=True
            ),
        )
        found = result.findings.get(NO_DEADLOCK)
        if found is None and not result.complete:
            return False, None
        if found is not None and found.length < (best[1].length if best else length):
            best = (system, found)
    return True, best


def within_condition(spec: CreditSpec, debits: int) -> bool:
    """Z3-CONDITION for one concrete spec: ``I <= 0`` or ``M >= 1`` and
    ``M − gcd(k, M) < I`` (Z3-OWN-CREDITS)."""
    i, m = spec
    return i <= 0 or (m >= 1 and m - math.gcd(debits, m) < i)


def run_reads(system: CheckedNetwork) -> dict[str, int]:
    """The supply per source of a replayed run's graph (what the run read)."""
    return {n.name: n.publishes for n in system.graph.nodes if n.source}


def _supply_within(enc: NetworkEncoding, depth: int) -> z3.BoolRef:
    """SCOPE-SUPPLY for BMC: a run of at most ``depth`` steps reads at most ``depth``
    publishes per source, and a witness state (a state property, a dead set, a bad
    terminal state) stays one with a single publish left instead of more (a read is
    enabled either way), so supplies up to ``depth + 1`` cover every supply."""
    bounds = [v <= depth + 1 for name, v in enc.params.items() if name.startswith("P[")]
    return z3.And(*bounds) if bounds else z3.BoolVal(True)


def _supply_substitution(enc_all: NetworkEncoding, graph: FlowGraph) -> list[tuple]:
    return [
        (enc_all.params[f"P[{n.name}]"], z3.IntVal(n.publishes))
        for n in graph.nodes
        if f"P[{n.name}]" in enc_all.params
    ]


def _settle_by_search(
    report: ProveRun,
    enc_all: NetworkEncoding,
    inv: InvariantProof,
    open_ids: list[str],
    options: ProveOptions,
) -> None:
    """BMC, then k-induction, for the open properties: with the graph's own supply, or
    with a symbolic supply when every supply is asked (SCOPE-SUPPLY; Z3 chooses it and
    Z3-WITNESS replays the run with its choice)."""
    graph = report.graph
    every = options.every_supply
    enc = NetworkEncoding(graph, symbolic_supply=every)
    supply = [] if every else _supply_substitution(enc_all, graph)
    lemmas = z3.substitute(inv.formula, *supply) if supply else inv.formula
    termination = report.termination
    terminates = termination is not None and termination.proved
    max_steps = None
    if termination is not None and termination.proved and not every:
        bound = z3.simplify(z3.substitute(termination.initial_rank, *supply))
        max_steps = bound.as_long() if z3.is_int_value(bound) else None
    depth = options.depth
    if depth is None:
        depth = DEFAULT_EVERY_SUPPLY_DEPTH if every else DEFAULT_DEPTH
        if max_steps is not None and max_steps <= 2 * DEFAULT_DEPTH:
            depth = max_steps  # complete: no run is longer
    report.depth = depth
    bmc = bounded_check(
        enc,
        BmcOptions(
            depth=depth,
            mailbox_bound=options.mailbox_bound,
            deadlock=NO_DEADLOCK in open_ids or RECOVERY in open_ids,
            properties=tuple(pid for pid in open_ids if pid != NO_DEADLOCK),
            invariant=lemmas,
            timeout_ms=options.timeout_ms,
            shorten_ms=options.shorten_ms,
            rank=enc.rank() if terminates else None,
            max_steps=max_steps,
            assume=_supply_within(enc, depth) if every else None,
        ),
    )
    report.bmc = bmc
    for pid, witness in bmc.witnesses.items():
        system, finding = finding_from_witness(witness, options.mailbox_bound)
        if not bmc.shortest.get(pid, False):
            finding.detail = (finding.detail + " (not proven shortest: time budget)").strip()
        report.counterexamples[pid] = Counterexample(system, finding)
        report.verdicts[pid] = Verdict(
            pid, VIOLATED, "bmc", f"{finding.kind} after {finding.length} steps"
        )
    formulas = enc.property_formulas(options.mailbox_bound)
    for pid in open_ids:
        if pid in report.verdicts:
            continue
        if bmc.complete:
            report.verdicts[pid] = Verdict(
                pid,
                PROVED,
                "bmc-complete",
                f"every run of this graph ends within {bmc.searched} steps",
                every_supply=False,
            )
            continue
        if pid in (NO_DEADLOCK, RECOVERY):
            # PROP-RECOVERY is implied by PROP-NO-DEADLOCK (spec/properties.md)
            target = z3.Not(enc.bad_terminal())
            if termination is None or not termination.proved:
                target = z3.And(target, *(z3.Not(b) for b in enc.blocked))
        else:
            target = formulas[pid]
        ki = k_induction(enc, target, options.max_k, lemmas=lemmas, timeout_ms=options.timeout_ms)
        if ki.proved and every:
            report.verdicts[pid] = Verdict(pid, PROVED, f"{ki.k}-induction")
        elif ki.proved:
            report.verdicts[pid] = Verdict(pid, PROVED, f"{ki.k}-induction", every_supply=False)
        elif bmc.unknown:
            reached = f"{_bmc_searched(pid, bmc.searched)}; " if bmc.searched >= 0 else ""
            report.verdicts[pid] = Verdict(
                pid, UNKNOWN, "bmc", f"{reached}a solver call timed out before depth {depth}"
            )
        else:
            report.verdicts[pid] = Verdict(
                pid,
                NONE_FOUND,
                "bmc",
                _bmc_searched(pid, bmc.searched)
                + (" for any supply" if every else " with the graph's supply"),
                every_supply=every,
            )


def _bmc_searched(pid: str, steps: int) -> str:
    """What a BMC search of ``steps`` steps found nothing of, in the words of what its
    depth counts (Z3-BMC-STEPS): for a deadlock, the states that certify it (a dead set,
    a bad terminal state), not the earlier step from which ``check`` counts, where a
    process is already blocked forever; so it never reads as "no deadlock within k steps"
    where ``check`` shows a k-step one."""
    if pid != NO_DEADLOCK:
        return f"no counterexample within {steps} steps"
    return (
        f"no dead set or bad terminal state within {steps} steps (a process may be blocked "
        "forever sooner: check counts from there, BMC from the certificate; Z3-BMC-STEPS)"
    )


def _prove_symbolic(
    graph: FlowGraph, options: ProveOptions, verdicts: dict[str, Verdict]
) -> ProveRun:
    enc = NetworkEncoding(graph, Credits.PER_EDGE, symbolic_supply=True)
    inv = houdini(enc, enc.lemmas(), timeout_ms=options.timeout_ms)
    verdicts.update(
        _state_properties_by_invariant(enc, inv, options, "for all credit specs and all supplies")
    )
    termination = prove_termination(enc, inv, options.timeout_ms)
    report = ProveRun(graph, True, verdicts, inv, termination)
    report.every_supply = True  # Z3-SYMBOLIC-CREDITS: supplies are symbolic
    terms = enc.edge_terms
    if termination.proved and not any(enc.net.stalled):
        report.conditions = [derive_condition(enc, inv, e) for e in range(enc.net.n_edges)]
        per_edge = [safe_condition(t.initial, t.more_after, t.debits) for t in terms]
        condition = z3.And(*per_edge) if per_edge else z3.BoolVal(True)
        deadlock = prove_deadlock_freedom(enc, inv, termination, condition, options.timeout_ms)
        texts = sorted({condition_text(t.debits) for t in terms})
        report.condition = (
            "every edge: "
            + "; ".join(
                texts
                if len(texts) == 1
                else [f"(k={t.debits}) " + condition_text(t.debits) for t in terms]
            )
            if terms
            else "none"
        )
        outside = [
            (enc.edge_names[e], _just_outside(enc, graph, per_edge, e))
            for e in range(len(per_edge))
        ]
        report.own_outside = {
            name: e.credit
            for name, e in zip(enc.edge_names, graph.edges, strict=True)
            if not within_condition(e.credit, e.sends_per_message)
        }
    else:
        condition = z3.And(*(t.initial <= 0 for t in terms)) if terms else z3.BoolVal(True)
        small = z3.And(*(_small(t) for t in terms)) if terms else z3.BoolVal(True)
        inv_c = houdini(
            enc,
            enc.lemmas() | never_blocked_candidates(enc),
            assume=condition,
            timeout_ms=options.timeout_ms,
        )
        deadlock = prove_deadlock_freedom(enc, inv_c, None, condition, options.timeout_ms)
        report.condition = "every edge: I <= 0 (no edge ever blocks)"
        outside = [("", z3.And(z3.Not(condition), small))]
        report.own_outside = {
            name: e.credit
            for name, e in zip(enc.edge_names, graph.edges, strict=True)
            if e.credit.initial > 0
        }
    report.deadlock = deadlock
    if deadlock.proved:
        report.verdicts[NO_DEADLOCK] = Verdict(
            NO_DEADLOCK,
            PROVED,
            deadlock.rule,
            f"for all credit specs satisfying: {report.condition}; all supplies",
        )
    else:
        report.verdicts[NO_DEADLOCK] = Verdict(
            NO_DEADLOCK, UNKNOWN, deadlock.rule or "none", deadlock.reason
        )
    report.boundary = _boundary(
        enc, inv, outside, options, enc.rank() if termination.proved else None
    )
    report.condition_exact = bool(report.conditions) and len(report.boundary) == len(outside)
    open_ids = [pid for pid in STATE_PROPERTIES if pid not in report.verdicts]
    if open_ids:
        _symbolic_violations(report, enc, inv, open_ids, options)
    report.backlog = prove_stalled_backlog(graph, options.timeout_ms)
    if not report.backlog.applicable:
        report.backlog = None
    report.verdicts = {pid: report.verdicts[pid] for pid in PROPERTY_IDS}
    if report.own_outside:
        _decide_own_credits(report, options)
    return report


def _decide_own_credits(report: ProveRun, options: ProveOptions) -> None:
    """Z3-OWN-CREDITS: the condition does not cover the graph's own credits:
    PROP-NO-DEADLOCK is decided for them, for every supply, by the
    concrete route (rules, EXP-DIRECTED, BMC, k-induction); a deadlock found becomes the
    report's counterexample (exit 10), anything short of a proof keeps the result from
    being "proved" (exit 4)."""
    own = _prove_concrete(
        report.graph,
        replace(options, symbolic=False, credit=None, every_supply=True),
        {},  # its verdicts are the own credits', not the report's (OUT-JSON-TIMEOUT)
    )
    report.own_credits = own.verdicts[NO_DEADLOCK]
    if NO_DEADLOCK in own.counterexamples:
        report.counterexamples[NO_DEADLOCK] = own.counterexamples[NO_DEADLOCK]


def _just_outside(
    enc: NetworkEncoding, graph: FlowGraph, per_edge: list[z3.BoolRef], edge: int
) -> z3.BoolRef:
    """Z3-BOUNDARY region of one edge: its spec violates the condition with grants on
    (``M >= 1``, the ``I < M`` side), every other edge keeps the graph's own spec when
    that satisfies the condition (else any spec that does)."""
    own_terms = enc.edge_terms[edge]
    parts = [
        z3.Not(per_edge[edge]),
        own_terms.more_after >= 1,
        own_terms.initial <= BOUNDARY_MAX_CREDIT,
        own_terms.more_after <= own_terms.initial + own_terms.debits,  # nearest first
    ]
    for f, term in enumerate(enc.edge_terms):
        if f == edge:
            continue
        own = graph.edges[f].credit
        keep = z3.And(term.initial == own.initial, term.more_after == own.more_after)
        satisfied = z3.is_true(
            z3.simplify(
                z3.substitute(
                    per_edge[f],
                    (term.initial, z3.IntVal(own.initial)),
                    (term.more_after, z3.IntVal(own.more_after)),
                )
            )
        )
        parts.append(keep if satisfied else z3.And(per_edge[f], _small(term)))
    return z3.And(*parts)


def _small(term: EdgeTerms) -> z3.BoolRef:
    return z3.And(
        term.initial >= -1,
        term.initial <= BOUNDARY_MAX_CREDIT,
        term.more_after >= -1,
        term.more_after <= BOUNDARY_MAX_CREDIT,
    )


def _small_supplies(enc: NetworkEncoding) -> z3.BoolRef:
    return z3.And(
        [z3.BoolVal(True)]
        + [v <= BOUNDARY_MAX_SUPPLY for name, v in enc.params.items() if name.startswith("P[")]
    )


def _small_parameters(enc: NetworkEncoding) -> z3.BoolRef:
    return z3.And(_small_supplies(enc), *(_small(t) for t in enc.edge_terms))


def _boundary(
    enc: NetworkEncoding,
    inv: InvariantProof,
    outside: list[tuple[str, z3.BoolRef]],
    options: ProveOptions,
    rank: z3.ArithRef | None = None,
) -> list[Counterexample]:
    """Z3-BOUNDARY: per region just outside the condition, a deadlock found by BMC with
    symbolic credits and supplies. An edge that a structural automorphism of the graph
    maps onto an edge already done gets the mapped witness (replayed like any other)."""
    found = []
    done: dict[str, Witness] = {}
    orbits = _edge_images(enc.graph)
    for edge, region in outside:
        image = next(((phi, done[src]) for src, phi in orbits.get(edge, []) if src in done), None)
        witness: Witness | None
        if image is not None:
            witness = map_witness(image[1], image[0])
        else:
            bmc = bounded_check(
                enc,
                BmcOptions(
                    depth=options.depth or DEFAULT_BOUNDARY_DEPTH,
                    properties=(),
                    assume=z3.And(region, _small_supplies(enc)),
                    invariant=inv.formula,
                    timeout_ms=options.timeout_ms,
                    shorten_ms=min(options.shorten_ms, BOUNDARY_SHORTEN_MS),
                    rank=rank,
                ),
            )
            witness = bmc.witnesses.get(NO_DEADLOCK)
        if witness is None:
            continue
        done[edge] = witness
        system, finding = finding_from_witness(witness)
        found.append(Counterexample(system, finding, edge))
    return found


def _edge_images(graph: FlowGraph) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """Per edge, the edges an automorphism of the labelled graph maps onto it, with that
    automorphism as a node renaming."""
    symmetry = network_automorphisms(graph)
    out: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for phi in symmetry:
        for e in graph.edges:
            src = f"{e.sender}->{e.receiver}"
            dst = f"{phi[e.sender]}->{phi[e.receiver]}"
            if src != dst:
                out.setdefault(dst, []).append((src, phi))
    return out


def network_automorphisms(graph: FlowGraph) -> list[dict[str, str]]:
    """The automorphisms of ``graph`` preserving node attributes, sends per message and
    each edge's own spec (EXP-SYMMETRY's labelling), as node renamings."""
    network = CreditNetwork(graph)
    symmetry = network_symmetry(network)
    if symmetry is None:
        return []
    names = graph.node_names
    return [
        {names[frame[j]]: names[j] for j in range(len(names))} for frame in symmetry.node_frames[1:]
    ]


def _symbolic_violations(
    report: ProveRun,
    enc: NetworkEncoding,
    inv: InvariantProof,
    open_ids: list[str],
    options: ProveOptions,
) -> None:
    """State properties the invariant does not imply for all specs (a mailbox bound):
    BMC over symbolic credits and supplies."""
    depth = options.depth or DEFAULT_DEPTH
    bmc = bounded_check(
        enc,
        BmcOptions(
            depth=depth,
            mailbox_bound=options.mailbox_bound,
            deadlock=False,
            properties=tuple(open_ids),
            assume=_small_parameters(enc),
            invariant=inv.formula,
            timeout_ms=options.timeout_ms,
        ),
    )
    for pid, witness in bmc.witnesses.items():
        system, finding = finding_from_witness(witness, options.mailbox_bound)
        report.counterexamples[pid] = Counterexample(system, finding)
        report.verdicts[pid] = Verdict(pid, VIOLATED, "bmc", "for some credit spec")
    for pid in open_ids:
        if pid not in report.verdicts:
            status: VerdictStatus = UNKNOWN if bmc.unknown else NONE_FOUND
            report.verdicts[pid] = Verdict(
                pid,
                status,
                "bmc",
                f"not implied by the invariant; no counterexample within {depth} steps "
                f"with credits in [-1, {BOUNDARY_MAX_CREDIT}]",
            )


def supply_value(supplies: dict[str, int]) -> int | dict[str, int]:
    """One number when every source has the same supply, else the supply per source."""
    values = set(supplies.values())
    return values.pop() if len(values) == 1 else dict(supplies)
