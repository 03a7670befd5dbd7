"""Credit synthesis with Z3 Optimize (Z3-SYNTH).

Two questions, each answered with a witness:

* **deadlock-free**: the smallest ``I >= 1`` (one for all edges, or per edge, each edge
  keeping its ``M``) for which the graph is deadlock-free. For acyclic graphs without
  stalled processes the exact condition of Z3-CONDITION is optimised directly, so the
  answer holds for every supply; the synthesised credits are then proved by
  ``prove`` and one step smaller is refuted by a replayed deadlock. Otherwise a
  counterexample-guided loop asks Optimize for the smallest candidate not yet
  refuted and lets ``prove`` (with the graph's supply) refute or prove it.
* **mailbox bound**: the largest ``I`` (one for all edges) with no mailbox ever above
  ``B``. For the stalled-queue shape the proved closed form ``I + M*floor(I/M)``
  (Z3-BACKLOG) is optimised directly; otherwise the same loop, from the top.

Example::

    >>> from creditflow.conformance.inputs.graphs import load_preset
    >>> result = synthesize(load_preset("rabbitmq-publish"), SynthesisOptions(per_edge=True))
    >>> result.status, result.method, [str(s) for s in result.credits.values()]
    ('found', 'condition', ['{200,200}', '{200,200}', '{800,800}'])
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

import z3

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.counterexamples import DeadlockKind, Finding, Run
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import FORGOTTEN, MAILBOX_BOUND
from creditflow.conformance.inputs.credit_sources import CreditsInEffect
from creditflow.conformance.inputs.rabbitmq_config import (
    DEFAULT_CREDIT_KEY,
    MSG_STORE_CREDIT_KEY,
    is_msg_store,
)
from creditflow.conformance.symbolic.backlog import prove_stalled_backlog, stalled_chain
from creditflow.conformance.symbolic.bmc import BmcOptions, bounded_check
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import derive_condition, houdini, safe_condition
from creditflow.conformance.symbolic.prove import (
    BOUNDARY_MAX_SUPPLY,
    DEFAULT_BOUNDARY_DEPTH,
    Counterexample,
    ProveOptions,
    ProveReport,
    prepared_graph,
    prove_graph,
    within_condition,
)
from creditflow.conformance.symbolic.prove_result import WrittenTrace
from creditflow.conformance.symbolic.witness import finding_from_witness
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import EdgeSpec, FlowGraph, GraphError

#: Z3-SYNTH: the goal asked: no deadlock, or every mailbox within a bound
SynthesisGoal = Literal["deadlock-free", "mailbox"]
DEADLOCK_FREE: Final = "deadlock-free"
MAILBOX: Final = "mailbox"
#: The largest I the counterexample-guided loop considers by default.
LOOP_MAX_CREDIT = 16
#: Steps a model run may take to exceed a mailbox bound (Z3-SYNTH's witness beyond).
MAX_WITNESS_STEPS = 100_000
#: Z3-SYNTH: credits found, none exist, or the solver could not tell
SynthesisStatus = Literal["found", "none", "unknown"]
FOUND: Final = "found"
NONE: Final = "none"
UNKNOWN: Final = "unknown"


@dataclass(frozen=True)
class SynthesisOptions:
    """``goal``: ``deadlock-free`` or ``mailbox`` (needs ``bound``); ``per_edge``: one ``I``
    per edge (deadlock-free only); ``max_credit``: the largest ``I`` considered (default:
    unbounded where a proved condition or closed form is optimised, else
    :data:`LOOP_MAX_CREDIT`); ``prove``: how candidates are checked (timeouts, depth,
    graph overrides)."""

    goal: SynthesisGoal = DEADLOCK_FREE
    bound: int | None = None
    per_edge: bool = False
    #: Z3-SYNTH-SETTINGS: one I for every edge, the msg_store edges included (default:
    #: the edges that use credit_flow_default_credit; the others keep their own spec)
    every_edge: bool = False
    max_credit: int | None = None
    max_rounds: int = 12
    prove: ProveOptions = ProveOptions()


@dataclass(frozen=True, slots=True)
class Minimised:
    """Z3-SYNTH-SETTINGS: the setting whose ``I`` is synthesised (``one I``, ``one I per
    edge`` or a RabbitMQ key), the edges it applies to, and the edges that keep their own
    spec."""

    setting: str
    edges: tuple[str, ...]
    kept: dict[str, CreditSpec] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "edges": list(self.edges),
            "kept": {k: [v.initial, v.more_after] for k, v in self.kept.items()},
        }

    def words(self) -> str:
        """What was synthesised, over which edges, in words."""
        kept = "; ".join(f"{k} keeps {MSG_STORE_CREDIT_KEY} {v}" for k, v in self.kept.items())
        return f"{self.setting} on {', '.join(self.edges)}" + (f"; {kept}" if kept else "")


def minimised_edges(graph: FlowGraph, options: SynthesisOptions) -> Minimised:
    """Z3-SYNTH-SETTINGS: the edges whose ``I`` is synthesised. By default those that
    follow ``credit_flow_default_credit`` (IN-CREDIT-ROLES: every edge not into a message
    store); the msg_store edges keep their own spec (``msg_store_credit_disc_bound``).
    Every edge with ``per_edge``, ``every_edge``, a ``--credit`` given for every edge, or
    when no edge follows the default credit."""
    names = [_edge_name(e) for e in graph.edges]
    if options.per_edge:
        return Minimised("one I per edge", tuple(names))
    if options.every_edge or options.prove.credit is not None:
        return Minimised("one I", tuple(names))
    store = {_edge_name(e) for e in graph.edges if is_msg_store(graph.node(e.receiver))}
    default = tuple(n for n in names if n not in store)
    if not store or not default:
        return Minimised("one I", tuple(names))
    return Minimised(
        DEFAULT_CREDIT_KEY,
        default,
        {_edge_name(e): e.credit for e in graph.edges if _edge_name(e) in store},
    )


@dataclass(frozen=True, slots=True)
class SynthesisResult:
    """The answer (``credits`` per edge), how it was found, the proof of it and the
    counterexample one step beyond it (OUT-TYPED-RESULT); ``status`` is ``found``,
    ``none`` or ``unknown``."""

    goal: SynthesisGoal
    status: SynthesisStatus
    method: str
    credits: dict[str, CreditSpec] = field(default_factory=dict)
    explanation: str = ""
    proof: ProveReport | None = None
    beyond: Counterexample | None = None
    beyond_credits: dict[str, CreditSpec] = field(default_factory=dict)
    rounds: int = 0
    seconds: float = 0.0
    #: the graph and the mailbox bound asked about
    graph: str = ""
    bound: int | None = None
    #: Z3-SYNTH-SETTINGS: what was minimised (or maximised), over which edges
    minimised: Minimised | None = None
    #: added by the CLI: the graph as named, and the trace one step beyond as written
    source: str | None = None
    beyond_written: WrittenTrace | None = None
    #: IN-CREDIT-SOURCES: every edge's credit and where it came from, as read, before
    #: synthesis (added by the CLI)
    credits_in_effect: CreditsInEffect | None = None

    @property
    def exit_code(self) -> int:
        """Z3-SYNTH: 0 an answer found and proved, 10 (deadlock-free) / 12 (mailbox) no
        I in range works, 4 undecided."""
        if self.status == FOUND:
            return exit_codes.OK
        if self.status == UNKNOWN:
            return exit_codes.INCOMPLETE
        return exit_codes.DEADLOCK if self.goal == DEADLOCK_FREE else exit_codes.VIOLATION

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: ``synth --json``'s document, keys in their printed order."""
        out: dict[str, Any] = {"graph": self.graph}
        if self.source is not None:
            out["source"] = self.source
        if self.credits_in_effect is not None:
            out["credits_in_effect"] = self.credits_in_effect.to_json()
        out |= {
            "goal": self.goal,
            "bound": self.bound,
            "status": self.status,
            "method": self.method,
            "credits": {k: [v.initial, v.more_after] for k, v in self.credits.items()},
            "explanation": self.explanation,
            "minimised": self.minimised.to_json() if self.minimised else None,
            "proof": self.proof.result if self.proof else None,
            "beyond": {k: [v.initial, v.more_after] for k, v in self.beyond_credits.items()},
            "rounds": self.rounds,
            "seconds": round(self.seconds, 3),
        }
        if self.beyond is not None and self.beyond_written is not None:
            out["beyond_trace"] = self.beyond_written.trace
            out["beyond_kind"] = self.beyond.finding.kind
            out["beyond_length"] = self.beyond.finding.length
        out["exit_code"] = self.exit_code
        return out


def _edge_name(e: EdgeSpec) -> str:
    return f"{e.sender}->{e.receiver}"


def _with_initials(graph: FlowGraph, initials: dict[str, int]) -> FlowGraph:
    return replace(
        graph,
        edges=tuple(
            replace(e, credit=CreditSpec(initials[_edge_name(e)], e.credit.more_after))
            for e in graph.edges
        ),
    )


def synthesize(graph: FlowGraph, options: SynthesisOptions = SynthesisOptions()) -> SynthesisResult:
    """Z3-SYNTH: answer ``options.goal`` for ``graph`` (after the ``prove`` overrides); a
    graph with faults is answered by the counterexample-guided loop (Z3-FAULTS-SYNTH); a
    graph without edges has no credit to choose (:class:`GraphError`, Z3-SYNTH-EDGES)."""
    name = graph.name
    if not graph.edges:
        raise GraphError(f"{graph.name}: no edges, so no credit to synthesise (Z3-SYNTH-EDGES)")
    started = time.perf_counter()
    p = options.prove
    graph = prepared_graph(graph, p)
    if graph.has_faults:
        # Z3-FAULTS-SYNTH: the credit condition and the backlog closed form are
        # fault-free; each candidate is proved or refuted by prove with the faults
        result = _loop(graph, options, lowest=options.goal != MAILBOX)
    elif options.goal == MAILBOX:
        if options.bound is None:
            raise ValueError("the mailbox goal needs a bound")
        result = _mailbox(graph, options)
    else:
        result = _deadlock_free(graph, options)
    return replace(result, seconds=time.perf_counter() - started, graph=name, bound=options.bound)


def _deadlock_free(graph: FlowGraph, options: SynthesisOptions) -> SynthesisResult:
    enc = NetworkEncoding(graph, Credits.PER_EDGE, symbolic_supply=True)
    acyclic = enc.rank_weights is not None
    if not acyclic or any(enc.net.stalled):
        return _loop(graph, options, lowest=True)
    inv = houdini(enc, enc.lemmas(), timeout_ms=options.prove.timeout_ms)
    conditions = [derive_condition(enc, inv, e) for e in range(enc.net.n_edges)]
    if not all(c.readable_equivalent for c in conditions):  # pragma: no cover - guard
        return _loop(graph, options, lowest=True)
    opt = z3.Optimize()
    opt.set("timeout", options.prove.timeout_ms)
    names = enc.edge_names
    shared = z3.Int("I")
    which = minimised_edges(graph, options)
    for e, t in enumerate(enc.edge_terms):
        opt.add(t.more_after == graph.edges[e].credit.more_after)
        opt.add(safe_condition(t.initial, t.more_after, t.debits))
        if names[e] not in which.edges:  # Z3-SYNTH-SETTINGS: keeps its own spec
            opt.add(t.initial == graph.edges[e].credit.initial)
            continue
        opt.add(t.initial >= 1)
        if options.max_credit is not None:
            opt.add(t.initial <= options.max_credit)
        if not options.per_edge:
            opt.add(t.initial == shared)
    opt.minimize(
        z3.Sum([t.initial for e, t in enumerate(enc.edge_terms) if names[e] in which.edges])
    )
    verdict = opt.check()
    if verdict == z3.unknown:
        return SynthesisResult(DEADLOCK_FREE, UNKNOWN, "condition", explanation="Z3 gave up")
    if verdict == z3.unsat:
        bad = [n for n, e in zip(names, graph.edges, strict=True) if e.credit.more_after <= 0]
        outside = [
            _edge_name(e)
            for e in graph.edges
            if _edge_name(e) in which.kept and not within_condition(e.credit, e.sends_per_message)
        ]
        return SynthesisResult(
            DEADLOCK_FREE,
            NONE,
            "condition",
            explanation=(
                f"no I in [1, {options.max_credit or 'oo'}] for {which.words()} satisfies "
                f"the condition {conditions[0].text}"
                + (f"; {', '.join(bad)} never grant (M <= 0)" if bad else "")
                + (f"; {', '.join(outside)} outside it with its own spec" if outside else "")
            ),
            minimised=which,
        )
    model = opt.model()
    initials = {
        n: model.eval(t.initial).as_long() for n, t in zip(names, enc.edge_terms, strict=True)
    }
    chosen = _with_initials(graph, initials)
    result = SynthesisResult(
        DEADLOCK_FREE,
        FOUND,
        "condition",
        credits={_edge_name(e): e.credit for e in chosen.edges},
        explanation=f"smallest I satisfying {conditions[0].text}, minimised: {which.words()}",
        proof=prove_graph(chosen, replace(options.prove, credit=None, symbolic=False)),
        minimised=which,
    )
    lower = (
        {n: v - 1 if n in which.edges else v for n, v in initials.items()}
        if not options.per_edge
        else None
    )
    if options.per_edge:
        for n, v in initials.items():
            if v > 1:
                lower = dict(initials)
                lower[n] = v - 1
                break
    if lower is not None and all(v >= 1 for n, v in lower.items() if n in which.edges):
        below = _with_initials(graph, lower)
        result = replace(
            result,
            beyond_credits={_edge_name(e): e.credit for e in below.edges},
            beyond=_deadlock_witness(below, options),
        )
    return result


def _deadlock_witness(graph: FlowGraph, options: SynthesisOptions) -> Counterexample | None:
    """A deadlock of ``graph`` for some supply up to :data:`BOUNDARY_MAX_SUPPLY`."""
    enc = NetworkEncoding(graph, Credits.CONCRETE, symbolic_supply=True)
    inv = houdini(enc, enc.lemmas(), timeout_ms=options.prove.timeout_ms)
    small = z3.And([z3.BoolVal(True)] + [v <= BOUNDARY_MAX_SUPPLY for v in enc.params.values()])
    bmc = bounded_check(
        enc,
        BmcOptions(
            depth=options.prove.depth or DEFAULT_BOUNDARY_DEPTH,
            properties=(),
            assume=small,
            invariant=inv.formula,
            timeout_ms=options.prove.timeout_ms,
            shorten_ms=3_000,
        ),
    )
    witness = bmc.witnesses.get(NO_DEADLOCK)
    if witness is None:
        # credits too large for a short run: every run terminates (Z3-RANK), so a
        # maximal run of the model with the right supply ends in the deadlock: enough
        # messages that the acks on the edge outside the condition leave a remainder
        # (k*n mod M) >= I, so its last grant never comes
        for e in graph.edges:
            i, m, k = e.credit.initial, e.credit.more_after, e.sends_per_message
            if i >= 1 and m >= 1 and not (m - math.gcd(k, m) < i):
                n = next(n for n in range(1, m + 1) if (k * n) % m >= i)
                return _model_run_deadlock(graph.with_publishes(n))
        return None
    system, finding = finding_from_witness(witness)
    return Counterexample(system, finding)


def _model_run_deadlock(graph: FlowGraph) -> Counterexample | None:
    """A maximal run of the Python model (first enabled action each time) that ends in a
    terminal state with a process blocked (blocked forever there) or work pending."""
    system = CheckedNetwork(graph)
    state = system.initial()
    run: Run = [(None, state)]
    for _ in range(MAX_WITNESS_STEPS):
        nexts = system.successors(state)
        if not nexts:
            break
        action, state = nexts[0]
        run.append((action, state))
    else:
        return None
    blocked = tuple(
        name for n, name in enumerate(system.process_names) if system.network.is_blocked(state, n)
    )
    pending = system.pending_work(state)
    if not blocked and not pending:
        return None
    kind: DeadlockKind = "terminal" if pending else "blocked-forever"
    return Counterexample(system, Finding(NO_DEADLOCK, kind, run, processes=blocked))


def _loop(graph: FlowGraph, options: SynthesisOptions, lowest: bool) -> SynthesisResult:
    """Counterexample-guided: Optimize proposes the best ``I`` not yet refuted (one for all
    edges), ``prove`` (the graph's supply) proves or refutes it."""
    goal: SynthesisGoal = DEADLOCK_FREE if lowest else MAILBOX
    names = [_edge_name(e) for e in graph.edges]
    which = (  # Z3-SYNTH-SETTINGS (one I in this loop, also with per_edge)
        minimised_edges(graph, replace(options, per_edge=False))
        if lowest
        else Minimised("one I", tuple(names))
    )
    own = {_edge_name(e): e.credit.initial for e in graph.edges}
    i = z3.Int("I")
    top = options.max_credit or LOOP_MAX_CREDIT
    opt = z3.Optimize()
    opt.add(i >= 1, i <= top)
    if lowest:
        opt.minimize(i)
    else:
        opt.maximize(i)
    beyond: Counterexample | None = None
    beyond_credits: dict[str, CreditSpec] = {}
    prove_options = replace(
        options.prove,
        credit=None,
        symbolic=False,
        mailbox_bound=options.bound if not lowest else None,
    )
    for rounds in range(1, options.max_rounds + 1):
        if opt.check() != z3.sat:
            return SynthesisResult(
                goal,
                NONE,
                "cegis",
                minimised=which,
                rounds=rounds,
                beyond=beyond,
                beyond_credits=beyond_credits,
                explanation=f"every I in [1, {top}] was refuted",
            )
        candidate = opt.model()[i].as_long()
        chosen = _with_initials(
            graph, {n: candidate if n in which.edges else own[n] for n in names}
        )
        report = prove_graph(chosen, prove_options)
        wanted = NO_DEADLOCK if lowest else MAILBOX_BOUND
        verdict = report.verdicts[wanted].status
        if verdict == "proved" and not report.counterexamples:
            return SynthesisResult(
                goal,
                FOUND,
                "cegis",
                minimised=which,
                credits={_edge_name(e): e.credit for e in chosen.edges},
                explanation=("smallest" if lowest else "largest") + " I not refuted, proved "
                "for the graph's supply",
                proof=report,
                beyond=beyond,
                beyond_credits=beyond_credits,
                rounds=rounds,
            )
        if FORGOTTEN in report.counterexamples:
            # Z3-FAULTS-SYNTH: a DOWN handler that keeps the dead peer's credit does so
            # whatever the credit: no I can be the answer
            return SynthesisResult(
                goal,
                NONE,
                "cegis",
                minimised=which,
                rounds=rounds,
                beyond=report.counterexamples[FORGOTTEN],
                beyond_credits={_edge_name(e): e.credit for e in chosen.edges},
                explanation=f"{FORGOTTEN} is violated with I = {candidate}: a DOWN "
                "handler keeps the dead peer's credit, which no credit changes",
            )
        if report.counterexamples:
            beyond = report.primary()
            beyond_credits = {_edge_name(e): e.credit for e in chosen.edges}
            opt.add(i != candidate)
            continue
        return SynthesisResult(
            goal,
            UNKNOWN,
            "cegis",
            minimised=which,
            rounds=rounds,
            beyond=beyond,
            beyond_credits=beyond_credits,
            explanation=f"I = {candidate}: neither proved nor refuted ({verdict})",
        )
    return SynthesisResult(
        goal,
        UNKNOWN,
        "cegis",
        minimised=which,
        rounds=options.max_rounds,
        beyond=beyond,
        beyond_credits=beyond_credits,
        explanation=f"no answer within {options.max_rounds} rounds",
    )


def _mailbox(graph: FlowGraph, options: SynthesisOptions) -> SynthesisResult:
    names = stalled_chain(graph)
    if names is None or len({e.credit for e in graph.edges}) != 1:
        return _loop(graph, options, lowest=False)
    theorem = prove_stalled_backlog(graph, options.prove.timeout_ms)
    if not theorem.proved:  # pragma: no cover - the theorem is proved in the tests
        return _loop(graph, options, lowest=False)
    m = graph.edges[0].credit.more_after
    bound = options.bound
    assert bound is not None
    i, q = z3.Ints("I q")
    opt = z3.Optimize()
    opt.add(i >= 1)
    if options.max_credit is not None:
        opt.add(i <= options.max_credit)
    if m >= 1:
        opt.add(q >= 0, m * q <= i, i < m * (q + 1), i + m * q <= bound)
        form = f"I + {m}*floor(I/{m})"
    else:
        opt.add(i <= bound)
        form = "I"
    opt.maximize(i)
    if opt.check() != z3.sat:
        return SynthesisResult(
            MAILBOX,
            NONE,
            "closed-form",
            explanation=f"even I = 1 gives a backlog {form} above {bound}",
        )
    best = opt.model()[i].as_long()
    chosen = _with_initials(graph, dict.fromkeys((_edge_name(e) for e in graph.edges), best))
    result = SynthesisResult(
        MAILBOX,
        FOUND,
        "closed-form",
        credits={_edge_name(e): e.credit for e in chosen.edges},
        explanation=f"largest I with the proved stalled-queue backlog {form} <= {bound} "
        "(Z3-BACKLOG, every supply)",
    )
    if options.max_credit is None or best < options.max_credit:
        above = _with_initials(graph, dict.fromkeys((_edge_name(e) for e in graph.edges), best + 1))
        backlog = (best + 1) + (m * ((best + 1) // m) if m >= 1 else 0)
        result = replace(
            result,
            beyond=_model_run_over(above.with_publishes(backlog), bound),
            beyond_credits={_edge_name(e): e.credit for e in above.edges},
        )
    return result


def _model_run_over(graph: FlowGraph, bound: int) -> Counterexample | None:
    """A run of the Python model that queues more than ``bound`` messages: by Z3-BACKLOG
    every maximal run reaches the backlog, so the first enabled action each time will
    do; it is an explorer finding like any other."""
    system = CheckedNetwork(graph, mailbox_bound=bound)
    state = system.initial()
    run: Run = [(None, state)]
    for _ in range(MAX_WITNESS_STEPS):
        if MAILBOX_BOUND in system.violations(state):
            finding = Finding(
                MAILBOX_BOUND, "invariant", run, detail=system.explain(state, MAILBOX_BOUND)
            )
            return Counterexample(system, finding)
        nexts = system.successors(state)
        if not nexts:
            return None
        action, state = nexts[0]
        run.append((action, state))
    return None
