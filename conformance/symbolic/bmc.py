"""Bounded model checking of a credit network with Z3 (Z3-BMC) and k-induction
(Z3-K-INDUCTION).

:func:`bounded_check` unrolls the transition relation of a
:class:`~creditflow.conformance.symbolic.encoding.NetworkEncoding` ``depth`` steps (a terminal
state repeats itself, so shorter runs are included) and asks, per property, whether
some state of such a run violates a state property (PROP-*) or is a deadlock witness:
a bad terminal state (Z3-BAD-TERMINAL) or a dead set (Z3-DEAD-SET). Credits and
supplies may be symbolic: Z3 then also chooses their values. A witness found is then
shortened (fewest steps) as far as the time budget allows. When every run is
terminal by ``depth`` steps, the search covered every run and is *complete*.

Example::

    >>> from creditflow.conformance.inputs.graphs import load_preset
    >>> from creditflow.conformance.symbolic.encoding import NetworkEncoding
    >>> result = bounded_check(NetworkEncoding(load_preset("stalled-queue")), BmcOptions(depth=6))
    >>> w = result.witnesses["PROP-NO-DEADLOCK"]
    >>> w.kind, len(w.actions), w.processes
    ('blocked-forever', 4, ('channel',))
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import z3

from creditflow.conformance.explore.counterexamples import DeadlockKind, FindingKind
from creditflow.conformance.explore.explorer import NO_DEADLOCK, RECOVERY
from creditflow.conformance.symbolic.encoding import NetworkEncoding
from creditflow.conformance.symbolic.witness import Witness

#: Default per-call solver timeout (ms).
DEFAULT_TIMEOUT_MS = 60_000


@dataclass(frozen=True)
class BmcOptions:
    """What to search for and how deep.

    ``assume``: extra constraints on the parameters (symbolic credits and supplies).
    ``properties``: the state properties to check (default: all five PROP-* ids).
    ``invariant``: a proved invariant (template formula) added to every unrolled state:
    it removes no reachable state and prunes the search.
    ``shorten_ms``: time for making a witness shortest (default: ``timeout_ms``).
    ``rank``: a proved ranking function (Z3-RANK, template term): every real step lowers
    it, added to the unrolling as a constraint; ``max_steps``: a proved bound on the
    length of every run (then a search to that depth is complete without asking).
    """

    depth: int = 20
    mailbox_bound: int | None = None
    deadlock: bool = True
    properties: tuple[str, ...] | None = None
    assume: z3.BoolRef | None = None
    invariant: z3.BoolRef | None = None
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    shorten_ms: int | None = None
    rank: z3.ArithRef | None = None
    max_steps: int | None = None


@dataclass
class BmcResult:
    """Witnesses found (one per property id) and how far the search got.

    ``searched``: no witness of the properties not in ``witnesses`` exists within this
    many steps (-1: not even that is known). Less than the depth asked for when a solver
    call at that depth gave up: the search then deepens from :data:`DEEPENING` and
    keeps the deepest depth decided.
    ``complete``: every run is terminal within ``searched`` steps, so "no witness" is a
    proof for every depth.
    ``unknown``: a solver call gave up before ``depth`` was decided.
    ``shortest``: per witness, whether no shorter one exists (proved by Z3).
    """

    witnesses: dict[str, Witness] = field(default_factory=dict)
    searched: int = -1
    complete: bool = False
    unknown: bool = False
    shortest: dict[str, bool] = field(default_factory=dict)
    seconds: float = 0.0


class Unrolling:
    """The initial state and ``j`` steps of an encoding, built incrementally. Step ``j``
    is ``act{j}``: an index into the live actions, or ``len(live)`` for *stutter*, only
    allowed in a terminal state (which then repeats)."""

    def __init__(
        self,
        enc: NetworkEncoding,
        solver: z3.Solver,
        invariant: z3.BoolRef | None = None,
        rank: z3.ArithRef | None = None,
    ) -> None:
        self.enc = enc
        self.solver = solver
        self.invariant = invariant
        self.rank = rank
        self.states = [enc.state("s0")]
        self.acts: list[z3.ArithRef] = []
        self.live = [a for a in enc.actions if not z3.is_false(enc.guards[a])]
        solver.add(enc.init_constraint(self.states[0]))
        if invariant is not None:
            solver.add(enc.at(invariant, self.states[0]))

    def extend(self) -> None:
        """Add one more step."""
        enc = self.enc
        j = len(self.acts)
        s, t = self.states[-1], enc.state(f"s{j + 1}")
        act = z3.Int(f"act{j}")
        self.solver.add(step_constraints(enc, s, act, t, self.live, stutter=True))
        if self.invariant is not None:
            self.solver.add(enc.at(self.invariant, t))
        if self.rank is not None:
            self.solver.add(
                z3.Or(act == len(self.live), enc.at(self.rank, t) <= enc.at(self.rank, s) - 1)
            )
        self.states.append(t)
        self.acts.append(act)

    def witness(
        self,
        model: z3.ModelRef,
        depth: int,
        property_id: str,
        kind: FindingKind,
        processes: tuple[str, ...] = (),
        detail: str = "",
    ) -> Witness:
        enc = self.enc
        actions = []
        for a in self.acts[:depth]:
            index = model.eval(a, model_completion=True).as_long()
            if index >= len(self.live):  # pragma: no cover - excluded by the first-bad depth
                raise RuntimeError("internal error: a witness run stutters")
            actions.append(self.live[index])
        return Witness(
            graph=enc.concrete_graph(model),
            property_id=property_id,
            kind=kind,
            actions=tuple(actions),
            states=tuple(enc.values(model, s) for s in self.states[: depth + 1]),
            processes=processes,
            detail=detail,
        )


def step_constraints(
    enc: NetworkEncoding,
    s: Sequence[z3.ExprRef],
    act: z3.ArithRef,
    t: Sequence[z3.ExprRef],
    live: Sequence[int],
    stutter: bool = False,
) -> list[z3.BoolRef]:
    """One step ``s -> t`` by the action ``live[act]``: its guard holds in ``s`` and ``t``
    is its effect (slots it does not change are copied). With ``stutter``, ``act ==
    len(live)`` is also allowed in a terminal state and leaves it unchanged."""
    top = len(live) + 1 if stutter else len(live)
    out: list[z3.BoolRef] = [act >= 0, act < top]
    for ai, a in enumerate(live):
        out.append(z3.Implies(act == ai, enc.at(enc.guards[a], s)))
    if stutter:
        out.append(z3.Implies(act == len(live), enc.at(enc.terminal, s)))
    for i in range(len(s)):
        expr: z3.ExprRef = s[i]
        for ai, a in enumerate(live):
            if i in enc.changed[a]:
                expr = z3.If(act == ai, enc.at(enc.nexts[a][i], s), expr)
        out.append(t[i] == expr)
    return out


def deadlock_processes(
    enc: NetworkEncoding, model: z3.ModelRef, state: Sequence[z3.ExprRef]
) -> tuple[DeadlockKind, bool, tuple[str, ...]]:
    """Classify a deadlock witness state: its kind, whether it is a bad terminal state, and
    the processes blocked forever in it (every blocked process of a terminal state; else
    the largest dead set, a greatest fixpoint of the Z3-DEAD-SET clauses)."""
    names = enc.graph.node_names
    values = [z3.IntVal(v) for v in enc.values(model, state)]

    def holds(formula: z3.BoolRef) -> bool:
        return z3.is_true(model.eval(enc.at(formula, values), model_completion=True))

    blocked = [n for n in range(len(names)) if holds(enc.blocked[n])]
    if holds(enc.terminal):
        kind: DeadlockKind = "terminal" if holds(enc.pending) else "blocked-forever"
        return kind, True, tuple(names[n] for n in blocked)
    members = set(blocked)
    changed = True
    while changed:
        changed = False
        flags = [z3.BoolVal(n in members) for n in range(len(names))]
        clauses = enc.dead_clauses(flags)
        for n in sorted(members):
            if not holds(clauses[n]):
                members.discard(n)
                changed = True
    return "blocked-forever", False, tuple(names[n] for n in sorted(members))


def _bad_states(
    enc: NetworkEncoding, unrolling: Unrolling, pid: str, formulas: dict[str, z3.BoolRef]
) -> list[z3.BoolRef]:
    """Per depth, "this state is a witness for ``pid``"."""
    out = []
    n = enc.net.n_nodes
    for j, s in enumerate(unrolling.states):
        if pid == NO_DEADLOCK:
            members = [z3.Bool(f"dead{j}.{k}") for k in range(n)]
            out.append(z3.Or(enc.at(enc.bad_terminal(), s), enc.at(enc.dead_set(members), s)))
        elif pid == RECOVERY:
            members = [z3.Bool(f"unrecovered{j}.{k}") for k in range(n)]
            out.append(enc.at(enc.unrecovered(members), s))
        else:
            out.append(z3.Not(enc.at(formulas[pid], s)))
    return out


def bounded_check(enc: NetworkEncoding, options: BmcOptions = BmcOptions()) -> BmcResult:
    """Search every run of up to ``options.depth`` steps for violations (Z3-BMC)."""
    started = time.perf_counter()
    solver = z3.Solver()
    solver.set("timeout", options.timeout_ms)
    solver.add(enc.param_constraints)
    if options.assume is not None:
        solver.add(options.assume)
    unrolling = Unrolling(enc, solver, options.invariant, options.rank)
    for _ in range(options.depth):
        unrolling.extend()
    formulas = enc.property_formulas(options.mailbox_bound)
    chosen = tuple(formulas) if options.properties is None else options.properties
    wanted = [pid for pid in chosen if pid in formulas]
    if options.mailbox_bound is None and "PROP-MAILBOX-BOUND" in wanted:
        wanted.remove("PROP-MAILBOX-BOUND")
    if options.deadlock:
        wanted.append(NO_DEADLOCK)
        if enc.net.crashable and (options.properties is None or RECOVERY in options.properties):
            wanted.append(RECOVERY)  # Z3-FAULT-RECOVERY: decided with the deadlocks
    result = BmcResult(searched=options.depth)
    shorten = options.timeout_ms if options.shorten_ms is None else options.shorten_ms
    for pid in wanted:
        bad = _bad_states(enc, unrolling, pid, formulas)
        solver.set("timeout", options.timeout_ms)
        found = _first_witness(solver, bad, len(bad) - 1, shorten / 1000, pid)
        if found is None:  # gave up at full depth: how deep can it decide?
            found, reached = _deepening(solver, bad, shorten / 1000, pid)
            result.searched = min(result.searched, reached)
            if found is None:
                result.unknown = True
                continue
        if isinstance(found, int):  # -1: there is no witness
            continue
        depth, model, proved_shortest = found
        if pid in (NO_DEADLOCK, RECOVERY):
            kind, _, processes = deadlock_processes(enc, model, unrolling.states[depth])
            witness = unrolling.witness(model, depth, pid, kind, processes)
        else:
            witness = unrolling.witness(model, depth, pid, "invariant")
        result.witnesses[pid] = witness
        result.shortest[pid] = proved_shortest
    if options.max_steps is not None and options.depth >= options.max_steps:
        result.complete = not result.unknown  # no run is longer: proved, not searched
    elif not result.unknown and len(result.witnesses) < len(wanted):
        # complete iff no run can still move after `depth` steps
        moving = z3.Bool("still-moving")
        solver.add(z3.Implies(moving, z3.Not(enc.at(enc.terminal, unrolling.states[-1]))))
        result.complete = solver.check(moving) == z3.unsat
    result.seconds = time.perf_counter() - started
    return result


#: Depths tried, in order, when a search at the full depth gives up.
DEEPENING = (4, 8, 12, 16, 20, 24, 32, 48, 64)


def _deepening(
    solver: z3.Solver, bad: list[z3.BoolRef], budget_s: float, tag: str
) -> tuple[tuple[int, z3.ModelRef, bool] | int | None, int]:
    """Search ``bad[0..d]`` for growing ``d`` below the full depth until a witness is
    found or a call gives up; return what was found and the deepest ``d`` decided."""
    reached = -1
    for d in DEEPENING:
        if d >= len(bad) - 1:
            break
        found = _first_witness(solver, bad, d, budget_s, f"{tag}.deepening")
        if found is None:
            break
        if found != -1:
            return found, reached
        reached = d
    return None, reached


def _first_witness(
    solver: z3.Solver, bad: list[z3.BoolRef], top: int, budget_s: float, tag: str
) -> tuple[int, z3.ModelRef, bool] | int | None:
    """The shortest witness among ``bad[0..top]`` that ``budget_s`` seconds of shortening
    allow: ``-1`` if there is none, ``None`` if the solver gave up before finding one;
    else (depth, model, whether no shorter witness exists)."""
    best: tuple[int, z3.ModelRef] | None = None
    deadline = 0.0
    limit = top
    while limit >= 0:
        literal = z3.Bool(f"witness.{tag}<={limit}")
        solver.add(z3.Implies(literal, z3.Or(*bad[: limit + 1])))
        if best is not None:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return best[0], best[1], False
            solver.set("timeout", max(1, int(remaining * 1000)))
        verdict = solver.check(literal)
        if verdict == z3.unknown:
            return None if best is None else (best[0], best[1], False)
        if verdict == z3.unsat:
            return -1 if best is None else (best[0], best[1], True)
        model = solver.model()
        depth = next(
            j for j in range(limit + 1) if z3.is_true(model.eval(bad[j], model_completion=True))
        )
        if best is None:
            deadline = time.perf_counter() + budget_s
        best = (depth, model)
        limit = depth - 1
    assert best is not None
    return best[0], best[1], True


@dataclass
class InductionResult:
    """Z3-K-INDUCTION: ``proved`` at ``k``; else ``failed_base`` if a run from the initial
    state violates the property within ``k - 1`` steps, or not decided within ``max_k``
    (``unknown`` if a solver call gave up)."""

    proved: bool
    k: int
    failed_base: bool = False
    unknown: bool = False
    seconds: float = 0.0


def k_induction(
    enc: NetworkEncoding,
    prop: z3.BoolRef,
    max_k: int,
    lemmas: z3.BoolRef | None = None,
    assume: z3.BoolRef | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> InductionResult:
    """Z3-K-INDUCTION of a state property ``prop`` (template formula), for the smallest
    ``k <= max_k`` such that (base) no run from the initial state violates ``prop``
    within ``k - 1`` steps and (step) every run of ``k`` distinct states satisfying
    ``prop`` and the proved ``lemmas`` is followed only by ``prop`` states."""
    started = time.perf_counter()

    def solver_with_context() -> z3.Solver:
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(enc.param_constraints)
        if assume is not None:
            solver.add(assume)
        return solver

    live = [a for a in enc.actions if not z3.is_false(enc.guards[a])]
    base = solver_with_context()
    base_run = Unrolling(enc, base, lemmas)
    step = solver_with_context()
    states = [enc.state("k0")]
    if lemmas is not None:
        step.add(enc.at(lemmas, states[0]))
    for k in range(1, max_k + 1):
        # base: the state after k - 1 steps satisfies prop
        if k > 1:
            base_run.extend()
        literal = z3.Bool(f"base-violated{k}")
        base.add(z3.Implies(literal, z3.Not(enc.at(prop, base_run.states[-1]))))
        verdict = base.check(literal)
        if verdict == z3.sat:
            return InductionResult(
                False, k, failed_base=True, seconds=time.perf_counter() - started
            )
        if verdict == z3.unknown:
            return InductionResult(False, k, unknown=True, seconds=time.perf_counter() - started)
        # step: k prop states, distinct, then a step
        s = states[-1]
        step.add(enc.at(prop, s))
        t = enc.state(f"k{k}")
        step.add(step_constraints(enc, s, z3.Int(f"kact{k}"), t, live))
        for earlier in states:  # simple paths only: makes k-induction complete
            step.add(z3.Or(*(a != b for a, b in zip(earlier, t, strict=True))))
        states.append(t)
        if lemmas is not None:
            step.add(enc.at(lemmas, t))
        literal = z3.Bool(f"violated{k}")
        step.add(z3.Implies(literal, z3.Not(enc.at(prop, t))))
        verdict = step.check(literal)
        if verdict == z3.unsat:
            return InductionResult(True, k, seconds=time.perf_counter() - started)
        if verdict == z3.unknown:
            return InductionResult(False, k, unknown=True, seconds=time.perf_counter() - started)
    return InductionResult(False, max_k, seconds=time.perf_counter() - started)
