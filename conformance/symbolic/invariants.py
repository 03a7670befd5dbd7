"""Unbounded proofs about a credit network with Z3: inductive invariants (Z3-INVARIANT),
termination (Z3-RANK), deadlock freedom (Z3-DEADLOCK-FREE) and the exact credit
condition for it (Z3-CONDITION).

Every proof obligation is *local*: one action against the lemmas that mention what
it reads or writes, or one edge against its own lemmas, so the work grows with the
size of the graph, not with the number of its states or the size of its credits.

Example::

    >>> from creditflow.conformance.inputs.graphs import load_preset
    >>> from creditflow.conformance.symbolic.encoding import NetworkEncoding
    >>> enc = NetworkEncoding(load_preset("rabbitmq-publish"), symbolic_supply=True)
    >>> inv = houdini(enc, enc.lemmas())
    >>> sorted(inv.dropped), "conservation[reader->channel]" in inv.lemmas
    ([], True)
    >>> prove_termination(enc, inv).proved
    True
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

import networkx as nx
import z3

from creditflow.conformance.explore.encoding import BUMPS, DATA, DEFERRED, EDGE_FIELDS
from creditflow.conformance.symbolic.encoding import NetworkEncoding, free_vars
from creditflow.conformance.symbolic.symbolic import symbol

DEFAULT_TIMEOUT_MS = 30_000

#: An obligation's outcome (``Final``: each constant is its own Literal type).
PROVED: Final = "proved"
FAILED: Final = "failed"
UNKNOWN: Final = "unknown"


def _conj(parts: Iterable[z3.BoolRef]) -> z3.BoolRef:
    parts = list(parts)
    if not parts:
        return z3.BoolVal(True)
    return parts[0] if len(parts) == 1 else z3.And(*parts)


def check_valid(
    hypotheses: z3.BoolRef, goal: z3.BoolRef, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> tuple[str, z3.ModelRef | None]:
    """Whether ``hypotheses => goal`` is valid: ``proved``, ``failed`` (with a model of
    the hypotheses and not the goal) or ``unknown``."""
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(hypotheses, z3.Not(goal))
    verdict = solver.check()
    if verdict == z3.unsat:
        return PROVED, None
    if verdict == z3.sat:
        return FAILED, solver.model()
    return UNKNOWN, None


@dataclass
class InvariantProof:
    """Z3-INVARIANT: the lemmas that survived (together inductive) and why the others
    were dropped."""

    lemmas: dict[str, z3.BoolRef]
    dropped: dict[str, str] = field(default_factory=dict)
    queries: int = 0
    seconds: float = 0.0

    @property
    def formula(self) -> z3.BoolRef:
        return _conj(self.lemmas.values())

    def implies(
        self, enc: NetworkEncoding, goal: z3.BoolRef, timeout_ms: int = DEFAULT_TIMEOUT_MS
    ) -> str:
        """Whether the invariant implies ``goal`` (a template formula)."""
        return check_valid(z3.And(enc.param_constraints, self.formula), goal, timeout_ms)[0]


def houdini(
    enc: NetworkEncoding,
    candidates: Mapping[str, z3.BoolRef],
    assume: z3.BoolRef | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> InvariantProof:
    """The largest inductive subset of ``candidates`` (Houdini): drop every lemma that
    the initial state violates, then, until nothing changes, every lemma that some
    action can break in a state satisfying all remaining lemmas (Z3-INVARIANT).

    One query per action: the action's guard and effect against the lemmas that
    mention a slot it reads or writes; only if that fails are all lemmas assumed."""
    started = time.perf_counter()
    context = z3.And(enc.param_constraints, assume if assume is not None else True)
    lemmas = dict(candidates)
    proof = InvariantProof(lemmas={})
    init = enc.initial()
    for name, lemma in list(lemmas.items()):
        proof.queries += 1
        verdict, _ = check_valid(context, enc.at(lemma, init), timeout_ms)
        if verdict != PROVED:
            proof.dropped[name] = f"initial state ({verdict})"
            del lemmas[name]
    live = [a for a in enc.actions if not z3.is_false(enc.guards[a])]
    assumed: dict[int, set[str]] = {}  # per action: the lemmas its last passing check used
    lemma_vars = {name: {v.get_id() for v in free_vars(f)} for name, f in lemmas.items()}
    # a lemma over many slots (nothing-lost) is checked on its own, so that the queries
    # about the local lemmas stay as small as the action
    wide = {n for n, ids in lemma_vars.items() if len(ids) > 2 * EDGE_FIELDS + 2}

    def mentioning(ids: set[int], narrow: bool = True) -> dict[str, z3.BoolRef]:
        return {
            n: f for n, f in lemmas.items() if lemma_vars[n] & ids and not (narrow and n in wide)
        }

    changed = True
    while changed:
        changed = False
        for a in live:
            if a in assumed and assumed[a] <= lemmas.keys():
                continue  # nothing it relied on was dropped since it passed
            writes = {enc.x[i].get_id() for i in enc.changed[a]}
            affected = mentioning(writes, narrow=False)
            if not affected:
                continue
            reads = set(writes)
            for expr in (enc.guards[a], *(enc.nexts[a][i] for i in enc.changed[a])):
                reads.update(v.get_id() for v in free_vars(expr))
            local = mentioning(reads)
            groups = [{n: f for n, f in affected.items() if n not in wide}]
            groups += [{n: affected[n]} for n in affected if n in wide]
            broken: dict[str, str] = {}
            used = set(local)
            for goals in groups:
                if not goals:
                    continue
                assumptions = {**local, **{n: lemmas[n] for n in goals if n in wide}}
                used |= assumptions.keys()
                found = _broken_by(enc, a, context, assumptions, goals, timeout_ms, proof)
                if found:  # perhaps only for want of a lemma about something else
                    suspects = {n: goals[n] for n in found}
                    found = _broken_by(enc, a, context, lemmas, suspects, timeout_ms, proof)
                    used = set(lemmas)
                broken.update(found)
            for name, why in broken.items():
                proof.dropped[name] = f"{enc.describe(a)} ({why})"
                del lemmas[name]
                changed = True
            if broken:
                assumed.pop(a, None)  # re-check with what is left
            else:
                assumed[a] = used
    proof.lemmas = lemmas
    proof.seconds = time.perf_counter() - started
    return proof


def _broken_by(
    enc: NetworkEncoding,
    action: int,
    context: z3.BoolRef,
    assumed: Mapping[str, z3.BoolRef],
    affected: Mapping[str, z3.BoolRef],
    timeout_ms: int,
    proof: InvariantProof,
) -> dict[str, str]:
    """The affected lemmas that ``action`` can break from a state satisfying ``assumed``."""
    nxt = enc.nexts[action]
    pre = z3.And(context, enc.guards[action], *assumed.values())
    moved = [(enc.x[i], nxt[i]) for i in enc.changed[action]]
    post = {name: z3.substitute(f, *moved) for name, f in affected.items()}
    proof.queries += 1
    verdict, model = check_valid(pre, _conj(post.values()), timeout_ms)
    if verdict == PROVED:
        return {}
    if verdict == FAILED and model is not None:
        return {
            name: "broken"
            for name, f in post.items()
            if z3.is_false(model.eval(f, model_completion=True))
        }
    broken = {}
    for name, f in post.items():  # the joint query gave up: one lemma at a time
        proof.queries += 1
        verdict, _ = check_valid(pre, f, timeout_ms)
        if verdict != PROVED:
            broken[name] = verdict
    return broken


@dataclass
class Obligation:
    """One proof obligation and its outcome."""

    name: str
    status: str
    seconds: float = 0.0
    counterexample: dict[str, int] | None = None


@dataclass
class TerminationProof:
    """Z3-RANK: every step decreases the ranking function by at least one."""

    proved: bool
    rank: str = ""
    initial_rank: z3.ArithRef | None = None
    obligations: list[Obligation] = field(default_factory=list)
    seconds: float = 0.0


def prove_termination(
    enc: NetworkEncoding, inv: InvariantProof, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> TerminationProof:
    """Z3-RANK for an acyclic graph: the rank is >= 0 in every invariant state and every
    action lowers it by >= 1, so every run has at most ``rank(initial)`` steps."""
    started = time.perf_counter()
    if enc.rank_weights is None:
        return TerminationProof(False, seconds=time.perf_counter() - started)
    rank = enc.rank()
    context = z3.And(enc.param_constraints, inv.formula)
    obligations = []
    t = time.perf_counter()
    verdict, _ = check_valid(context, rank >= 0, timeout_ms)
    obligations.append(Obligation("rank >= 0", verdict, time.perf_counter() - t))
    lemma_vars = {n: {v.get_id() for v in free_vars(f)} for n, f in inv.lemmas.items()}
    for a in enc.actions:
        if z3.is_false(enc.guards[a]):
            continue
        t = time.perf_counter()
        moved = [(enc.x[i], enc.nexts[a][i]) for i in enc.changed[a]]
        lowered = z3.substitute(rank, *moved) <= rank - 1
        touched = {enc.x[i].get_id() for i in enc.changed[a]}
        local = [f for n, f in inv.lemmas.items() if lemma_vars[n] & touched]
        hyp = z3.And(enc.param_constraints, enc.guards[a], *local)
        verdict, _ = check_valid(hyp, lowered, timeout_ms)
        if verdict != PROVED:  # perhaps for want of a lemma about something else
            verdict, _ = check_valid(z3.And(context, enc.guards[a]), lowered, timeout_ms)
        obligations.append(
            Obligation(f"{enc.describe(a)} lowers the rank", verdict, time.perf_counter() - t)
        )
    proved = all(o.status == PROVED for o in obligations)
    return TerminationProof(
        proved,
        rank=enc.rank_text(),
        initial_rank=z3.simplify(enc.at(rank, enc.initial())),
        obligations=obligations,
        seconds=time.perf_counter() - started,
    )


# -- the credit condition (Z3-CONDITION) -------------------------------------------------


def gcd_term(m: z3.ArithRef, k: int) -> z3.ArithRef:
    """``gcd(k, m)`` for a concrete ``k >= 1`` and ``m >= 1``: the largest divisor of ``k``
    that divides ``m``."""
    g: z3.ArithRef = z3.IntVal(1)
    for d in range(2, k + 1):
        if k % d == 0:
            g = z3.If(m % d == 0, z3.IntVal(d), g)
    return g


def safe_condition(i: z3.ArithRef, m: z3.ArithRef, k: int) -> z3.BoolRef:
    """Z3-CONDITION of one edge with ``k`` sends per message: ``I <= 0`` (it never blocks)
    or ``M >= 1`` and ``M - gcd(k, M) < I`` (for ``k = 1``: ``1 <= M <= I``)."""
    return z3.Or(i <= 0, z3.And(m >= 1, m - gcd_term(m, k) < i))


def condition_text(k: int) -> str:
    if k == 1:
        return "I <= 0 or 1 <= M <= I"
    return f"I <= 0 or (M >= 1 and M - gcd({k}, M) < I)"


@dataclass
class EdgeCondition:
    """Z3-CONDITION of one edge: derived by quantifier elimination, its readable form
    and whether Z3 proved the two equivalent."""

    edge: str
    debits: int
    derived: z3.BoolRef
    text: str
    readable_equivalent: bool
    seconds: float


def quiescent_substitution(enc: NetworkEncoding, edge: int) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
    """The values the edge lemma's hypotheses force: nothing in flight, nothing deferred."""
    base = EDGE_FIELDS * edge
    return [(enc.x[base + f], z3.IntVal(0)) for f in (DATA, BUMPS, DEFERRED)]


def derive_condition(enc: NetworkEncoding, inv: InvariantProof, edge: int) -> EdgeCondition:
    """Z3-CONDITION: eliminate the state from the edge lemma (Z3-EDGE-LEMMA) restricted to
    a quiescent edge whose receiver is not blocked. What remains is a formula over the
    edge's ``I`` and ``M``: exactly the specs for which such an edge never leaves its
    sender blocked."""
    started = time.perf_counter()
    name = enc.edge_names[edge]
    t = enc.edge_terms[edge]
    own = {
        n: f
        for n, f in inv.lemmas.items()
        if n.endswith(f"[{name}]") and not n.startswith(("deferred-blocked", "in-flight"))
    }
    zeros = quiescent_substitution(enc, edge)
    hyp = z3.substitute(_conj(own.values()), *zeros)
    goal = z3.Not(z3.substitute(enc.blocks_on[edge], *zeros))
    state = [v for v in free_vars(hyp) + free_vars(goal) if v.decl().name().startswith("x.")]
    unique = {v.get_id(): v for v in state}
    formula = z3.ForAll(list(unique.values()), z3.Implies(hyp, goal))
    derived = z3.Tactic("qe")(formula).as_expr()
    readable = safe_condition(t.initial, t.more_after, t.debits)
    same, _ = check_valid(z3.BoolVal(True), derived == readable)
    return EdgeCondition(
        edge=name,
        debits=t.debits,
        derived=derived,
        text=condition_text(t.debits),
        readable_equivalent=same == PROVED,
        seconds=time.perf_counter() - started,
    )


# -- deadlock freedom (Z3-DEADLOCK-FREE) ---------------------------------------------------


@dataclass
class DeadlockProof:
    """Z3-DEADLOCK-FREE: which rule applied, its obligations, and the credit condition
    it needed (``None``: none, it holds for the credits of the encoding)."""

    proved: bool
    rule: str
    obligations: list[Obligation] = field(default_factory=list)
    condition: z3.BoolRef | None = None
    reason: str = ""
    seconds: float = 0.0


def _obligation(
    name: str, hyp: z3.BoolRef, goal: z3.BoolRef, enc: NetworkEncoding, timeout_ms: int
) -> Obligation:
    """``hyp => goal``, where ``hyp`` must be satisfiable (else the obligation is
    ``vacuous``: it would prove anything)."""
    t = time.perf_counter()
    verdict, model = check_valid(hyp, goal, timeout_ms)
    if verdict == PROVED:
        empty, _ = check_valid(hyp, z3.BoolVal(False), timeout_ms)
        if empty != FAILED:
            verdict = "vacuous" if empty == PROVED else empty
    cex = None
    if model is not None:
        cex = {
            str(d): model[d].as_long()
            for d in model.decls()
            if z3.is_int_value(model[d]) and not str(d).startswith("dead")
        }
    return Obligation(name, verdict, time.perf_counter() - t, cex)


def prove_deadlock_freedom(
    enc: NetworkEncoding,
    inv: InvariantProof,
    termination: TerminationProof | None,
    condition: z3.BoolRef | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> DeadlockProof:
    """Z3-DEADLOCK-FREE by the first rule that applies:

    * ``never-blocked``: the invariant implies no edge ever blocks its sender, and a
      terminal invariant state has no pending work (any graph);
    * ``edge-lemma``: acyclic, no stalled process, the graph terminates (Z3-RANK) and
      every edge satisfies Z3-EDGE-LEMMA, so by induction from the sinks nobody is
      blocked and nothing is pending in a terminal state;
    * ``terminal``: acyclic, terminates, and the invariant implies every terminal
      state is good (one query over the whole graph; stalled processes allowed).
    """
    started = time.perf_counter()
    net = enc.net
    cond = condition if condition is not None else z3.BoolVal(True)
    context = z3.And(enc.param_constraints, inv.formula, cond)
    never = [f"never-blocked[{name}]" for name in enc.edge_names]
    if all(n in inv.lemmas for n in never):
        ob = _obligation(
            "terminal => no pending work",
            z3.And(context, enc.terminal),
            z3.Not(enc.pending),
            enc,
            timeout_ms,
        )
        return DeadlockProof(
            ob.status == PROVED,
            "never-blocked",
            [ob],
            condition,
            seconds=time.perf_counter() - started,
        )
    if termination is None or not termination.proved:
        return DeadlockProof(
            False,
            "",
            reason="no rule applies: the graph has cycles and may block",
            seconds=time.perf_counter() - started,
        )
    if not any(net.stalled):
        obligations = edge_lemma_obligations(enc, inv, cond, timeout_ms)
        obligations.append(
            _obligation(
                "terminal, nobody blocked => no pending work",
                z3.And(context, enc.terminal, *(z3.Not(b) for b in enc.blocked)),
                z3.Not(enc.pending),
                enc,
                timeout_ms,
            )
        )
        if all(o.status == PROVED for o in obligations):
            return DeadlockProof(
                True, "edge-lemma", obligations, condition, seconds=time.perf_counter() - started
            )
    ob = _obligation(
        "terminal => nobody blocked, nothing pending",
        z3.And(context, enc.terminal),
        z3.And(z3.Not(enc.pending), *(z3.Not(b) for b in enc.blocked)),
        enc,
        timeout_ms,
    )
    return DeadlockProof(
        ob.status == PROVED,
        "terminal",
        [ob],
        condition,
        reason="" if ob.status == PROVED else "a terminal invariant state is bad",
        seconds=time.perf_counter() - started,
    )


def edge_lemma_obligations(
    enc: NetworkEncoding, inv: InvariantProof, condition: z3.BoolRef, timeout_ms: int
) -> list[Obligation]:
    """Z3-EDGE-LEMMA for every edge ``e = S -> R``, assuming only ``e``'s own lemmas: if no
    grant is in flight on ``e``, ``R`` is not blocked and ``R`` would take any waiting
    message, then ``S`` is not blocked on ``e``."""
    net = enc.net
    out = []
    for e, name in enumerate(enc.edge_names):
        receiver = net.edge_ends[e][1]
        base = EDGE_FIELDS * e
        own = [f for n, f in inv.lemmas.items() if n.endswith(f"[{name}]")]
        data, bumps = enc.x[base + DATA], enc.x[base + BUMPS]
        would_take = z3.Or(
            data == 0, z3.And(z3.BoolVal(bool(net.checks[receiver])), enc.blocked[receiver])
        )
        hyp = z3.And(
            enc.param_constraints,
            condition,
            *own,
            bumps == 0,
            would_take,
            z3.Not(enc.blocked[receiver]),
        )
        out.append(
            _obligation(f"edge lemma {name}", hyp, z3.Not(enc.blocks_on[e]), enc, timeout_ms)
        )
    return out


def topological_order(enc: NetworkEncoding) -> list[str] | None:
    """The order of the induction from the sinks (``None`` with cycles)."""
    g = nx.DiGraph()
    g.add_nodes_from(enc.graph.node_names)
    g.add_edges_from((e.sender, e.receiver) for e in enc.graph.edges)
    if not nx.is_directed_acyclic_graph(g):
        return None
    return list(reversed(list(nx.topological_sort(g))))


def prove_dead_set_sound(
    enc: NetworkEncoding,
    inv: InvariantProof,
    members: list[z3.BoolRef] | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> list[Obligation]:
    """Z3-DEAD-SET is sound for this graph: in every invariant state where ``members``
    (symbolic by default: every set at once) form a dead set, every action leads to a
    state where the same set is still a dead set, so its processes stay blocked in every
    continuation (blocked forever, PROP-NO-DEADLOCK)."""
    if members is None:
        members = [z3.Bool(symbol(f"member.{n}")) for n in enc.graph.node_names]
    dead = enc.dead_set(members)
    context = z3.And(enc.param_constraints, inv.formula, dead)
    out = []
    for a in enc.actions:
        if z3.is_false(enc.guards[a]):
            continue
        t = time.perf_counter()
        verdict, _ = check_valid(
            z3.And(context, enc.guards[a]), enc.at(dead, enc.nexts[a]), timeout_ms
        )
        out.append(
            Obligation(f"{enc.describe(a)} keeps the dead set", verdict, time.perf_counter() - t)
        )
    t = time.perf_counter()
    verdict, _ = check_valid(
        context,
        z3.And(*(z3.Implies(m, b) for m, b in zip(members, enc.blocked, strict=True))),
        timeout_ms,
    )
    out.append(Obligation("members are blocked", verdict, time.perf_counter() - t))
    return out
