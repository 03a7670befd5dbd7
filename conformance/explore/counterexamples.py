"""Shortest counterexamples for the violations an exploration found (EXP-SHORTEST),
with the lasso continuation of blocked-forever deadlocks (EXP-LASSO).

Without the safe-action reduction, breadth-first numbering already gives the
shortest run to the first violating state. With it, the reduced graph's depths
are not distances of the full model, so the full model is searched breadth-first
again, stopping as soon as every violated property has its first (shortest)
witness. Deadlocks there are recognised with the reduced graph's verdicts: a
process blocked in ``u`` is blocked forever iff it is blocked forever in the state
reached from ``u`` by running safe actions until none is enabled (EXP-SAFE).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from creditflow.conformance.explore.deadlock import mask_names
from creditflow.model.system import TransitionSystem

if TYPE_CHECKING:
    from creditflow.conformance.explore.explorer import StateGraph

NO_DEADLOCK = "PROP-NO-DEADLOCK"
#: How far a lasso continuation of a blocked-forever deadlock is followed.
MAX_CONTINUATION = 400

Run = list[tuple[int | None, Hashable]]


class Symmetry(Protocol):
    """What the search uses of a state symmetry (:class:`.symmetry.Symmetry`, EXP-SYMMETRY)."""

    def canonicalize(self, state: Any) -> tuple[Any, int]: ...

    def to_original_frame(self, mask: int, perm_id: int) -> int: ...


#: PROP-NO-DEADLOCK: a deadlock is ``terminal`` (nothing can move while work is pending)
#: or ``blocked-forever`` (some processes can never move again)
DeadlockKind = Literal["terminal", "blocked-forever"]
#: A finding violates a state property (``invariant``), a step property (``step``) or
#: is a deadlock of a :data:`DeadlockKind`
FindingKind = Literal["invariant", "step", DeadlockKind]


def deadlock_kind(finding: Finding | None) -> DeadlockKind | None:
    """The kind of a deadlock ``finding`` (``None``: no deadlock found)."""
    if finding is None:
        return None
    if finding.kind == "terminal" or finding.kind == "blocked-forever":
        return finding.kind
    raise ValueError(f"internal error: a {finding.kind} finding is not a deadlock")


class Certifying(Protocol):
    """A system with a sound certificate of who is blocked forever (EXP-CERTIFICATE)."""

    def stuck_certificate(self, state: Any) -> int: ...


class StepSystem(Protocol):
    """A system that checks step properties on each step (looked up by the search)."""

    def step_violations(self, state: Any, action: int, nxt: Any) -> tuple[str, ...]: ...


@dataclass
class Finding:
    """A shortest counterexample for ``property_id``.

    ``path``: the run from the initial state, as (action taken, state), the first
    action being ``None``. ``kind``: ``invariant``, ``terminal`` (nothing can move while
    work is pending) or ``blocked-forever``. ``processes``: who is blocked forever.
    ``continuation``/``loop_start``: for a blocked-forever deadlock, a run onward from
    the end of ``path`` that keeps those processes blocked, ending in a loop back to
    position ``loop_start`` of ``path + continuation`` (``None``: it ends in a state
    without successors, or was cut after :data:`MAX_CONTINUATION` steps).
    """

    property_id: str
    kind: FindingKind
    path: Run
    processes: tuple[str, ...] = ()
    detail: str = ""
    continuation: Run = field(default_factory=list)
    loop_start: int | None = None
    #: Who is blocked forever in the last state of ``path + continuation`` (the state
    #: a picture draws, EXP-PICTURE): ``processes`` and any process that became
    #: blocked forever along the continuation.
    final_processes: tuple[str, ...] = ()
    #: EXP-SHORTEST is certified for :attr:`path`: the explorer found it breadth-first,
    #: so no run to a violating state is shorter (false for a run found otherwise, or
    #: reported "not proven shortest" after a budget ran out)
    shortest: bool = False

    @property
    def length(self) -> int:
        """Steps from the initial state to the violating state."""
        return len(self.path) - 1


def _concrete_run(
    system: TransitionSystem, chain: Sequence[tuple[int, Hashable]], symmetry: Symmetry | None
) -> Run:
    """Replay a chain of (action, canonical state) from the initial state."""
    current = system.initial()
    run: Run = [(None, current)]
    for action, canonical in chain:
        for a, nxt in system.successors(current):
            if symmetry is None:
                if a == action:
                    break
            elif symmetry.canonicalize(nxt)[0] == canonical:
                break
        else:
            raise RuntimeError("internal error: a counterexample step could not be replayed")
        current = nxt
        run.append((a, current))
    return run


def _frame(symmetry: Symmetry | None, mask: int, state: Hashable) -> int:
    """Translate ``mask`` of the canonical form of ``state`` into ``state``'s frame."""
    if symmetry is None:
        return mask
    return symmetry.to_original_frame(mask, symmetry.canonicalize(state)[1])


def lasso_continuation(
    system: TransitionSystem, end: Hashable, offset: int
) -> tuple[Run, int | None]:
    """EXP-LASSO: a run onward from ``end`` that keeps the blocked-forever processes
    blocked, and the position (counting from ``offset``) its loop returns to."""
    seen = {end: 0}
    run: Run = []
    current = end
    for _ in range(MAX_CONTINUATION):
        nexts = system.successors(current)
        if not nexts:
            return run, None
        fresh = [(a, nxt) for a, nxt in nexts if nxt not in seen]
        if not fresh:
            run.append(nexts[0])
            return run, offset + seen[nexts[0][1]]
        current = fresh[0][1]
        seen[current] = len(run) + 1
        run.append(fresh[0])
    return run, None


def _explain(system: TransitionSystem, state: Hashable, property_id: str) -> str:
    explain = getattr(system, "explain", None)
    return explain(state, property_id) if explain is not None else ""


def _finding(
    system: TransitionSystem,
    property_id: str,
    kind: FindingKind,
    run: Run,
    stuck_mask: int = 0,
    stuck_at: Callable[[Hashable], int] | None = None,
) -> Finding:
    end = run[-1][1]
    finding = Finding(property_id=property_id, kind=kind, path=run)
    if property_id == NO_DEADLOCK:
        mask = stuck_mask or system.blocked_mask(end)
        finding.processes = mask_names(mask, system.process_names)
        finding.final_processes = finding.processes
        if kind == "blocked-forever":
            finding.continuation, finding.loop_start = lasso_continuation(system, end, len(run) - 1)
            if finding.continuation and stuck_at is not None:
                # EXP-PICTURE: blocked forever stays blocked forever, so the drawn
                # state's set holds ``processes`` and whoever joined them later.
                final = stuck_at(finding.continuation[-1][1]) | mask
                finding.final_processes = mask_names(final, system.process_names)
    else:
        finding.detail = _explain(system, end, property_id)
    return finding


def _stuck_at_function(
    system: TransitionSystem, graph: StateGraph, symmetry: Symmetry | None, safe: frozenset[int]
) -> Callable[[Hashable], int]:
    """Who is blocked forever in any reachable concrete state (EXP-PICTURE), read off
    the explored graph's verdicts at the state's safe closure (EXP-SAFE)."""
    canon = symmetry.canonicalize if symmetry is not None else None

    def stuck_at(state: Hashable) -> int:
        blocked = system.blocked_mask(state)
        if not blocked or not graph.stuck:
            return 0
        closed = _safe_closure(system, state, safe) if safe else state
        key = canon(closed)[0] if canon is not None else closed
        j = graph.index.get(key)
        if j is None:
            return 0
        return blocked & _frame(symmetry, graph.stuck[j], closed)

    return stuck_at


def find_counterexamples(
    system: TransitionSystem,
    graph: StateGraph,
    wanted: set[str],
    *,
    symmetry: Symmetry | None,
    safe: frozenset[int],
    exact_depths: bool,
    max_states: int,
) -> dict[str, Finding]:
    """A shortest counterexample for each property id in ``wanted``."""
    if not wanted:
        return {}
    if exact_depths:
        found = _from_graph(system, graph, wanted, symmetry)
        for finding in found.values():
            finding.shortest = True  # EXP-SHORTEST: breadth-first depths are distances
        return found
    return _search_full(system, graph, wanted, symmetry, safe, max_states)


def deadlock_finding(
    system: TransitionSystem,
    graph: StateGraph,
    index: int,
    kind: DeadlockKind,
    mask: int,
    symmetry: Symmetry | None,
) -> Finding:
    """The PROP-NO-DEADLOCK finding of state ``index`` of ``graph`` (breadth-first, so
    shortest): ``kind`` is ``terminal`` or ``blocked-forever`` with ``mask`` the
    processes blocked forever in the state's own (canonical) frame."""
    run = _run(system, graph, index, symmetry)
    stuck_mask = _frame(symmetry, mask, run[-1][1])
    finding = _finding(system, NO_DEADLOCK, kind, run, stuck_mask)
    certify = getattr(system, "stuck_certificate", None)
    if kind == "blocked-forever" and certify is not None:
        # EXP-PICTURE without the whole state graph: the certificate (EXP-CERTIFICATE,
        # sound) names who else is blocked forever in the drawn state.
        drawn = (finding.continuation or run)[-1][1]
        final = certify(drawn) | stuck_mask
        finding.final_processes = mask_names(final, system.process_names)
    return finding


def _step_finding(system: TransitionSystem, property_id: str, run: Run) -> Finding:
    """Extend ``run`` by the first step out of its last state that violates the step
    property ``property_id``; such a step exists (the explorer saw one from this state
    or, under symmetry, from its canonical form, and automorphisms map steps to steps)."""
    end = run[-1][1]
    for a, nxt in system.successors(end):
        if property_id in cast(StepSystem, system).step_violations(end, a, nxt):
            return Finding(
                property_id=property_id,
                kind="step",
                path=[*run, (a, nxt)],
                detail="a step that does not move its messages as NET-READ/NET-TAKE say",
            )
    raise RuntimeError("internal error: a violating step could not be replayed")


def _chain(graph: StateGraph, i: int) -> list[tuple[int, Hashable]]:
    chain = []
    while graph.parent[i] >= 0:
        chain.append((graph.action[i], graph.states[i]))
        i = graph.parent[i]
    chain.reverse()
    return chain


def _from_graph(
    system: TransitionSystem,
    graph: StateGraph,
    wanted: set[str],
    symmetry: Symmetry | None,
    safe: frozenset[int] = frozenset(),
) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for pid, (i, _) in graph.step_witness.items():
        if pid in wanted:
            found[pid] = _step_finding(system, pid, _run(system, graph, i, symmetry))
    stuck_at = _stuck_at_function(system, graph, symmetry, safe)
    for i, state in enumerate(graph.states):
        if len(found) == len(wanted):
            break
        expanded = i + 1 < len(graph.offsets)
        _record(
            system,
            state,
            wanted if expanded else wanted - {NO_DEADLOCK},
            found,
            partial(_run, system, graph, i, symmetry),
            expanded and graph.is_terminal(i) and system.pending_work(state),
            partial(_stuck_of, graph, i),
            symmetry,
            stuck_at,
        )
    return found


def _record(
    system: TransitionSystem,
    state: Hashable,
    wanted: set[str],
    found: dict[str, Finding],
    make_run: Callable[[], Run],
    terminal: bool,
    stuck_of: Callable[[], int],
    symmetry: Symmetry | None,
    stuck_at: Callable[[Hashable], int] | None = None,
) -> None:
    """Record the first witness of each wanted property that ``state`` violates."""
    if len(wanted - found.keys() - {NO_DEADLOCK}) > 0:
        for pid in system.violations(state):
            if pid in wanted and pid not in found:
                found[pid] = _finding(system, pid, "invariant", make_run())
    if NO_DEADLOCK in wanted and NO_DEADLOCK not in found:
        stuck = 0 if terminal else stuck_of()
        if terminal or stuck:
            run = make_run()
            found[NO_DEADLOCK] = _finding(
                system,
                NO_DEADLOCK,
                "terminal" if terminal else "blocked-forever",
                run,
                _frame(symmetry, stuck, run[-1][1]),
                stuck_at,
            )


def _run(system: TransitionSystem, graph: StateGraph, i: int, symmetry: Symmetry | None) -> Run:
    return _concrete_run(system, _chain(graph, i), symmetry)


def _safe_closure(system: TransitionSystem, state: Hashable, safe: frozenset[int]) -> Hashable:
    first_safe = getattr(system, "first_safe", None)
    if first_safe is not None:
        while (picked := first_safe(state)) is not None:
            state = picked[1]
        return state
    while True:
        for a, nxt in system.successors(state):
            if a in safe:
                state = nxt
                break
        else:
            return state


def _stuck_of(graph: StateGraph, i: int) -> int:
    """The blocked-forever mask of state ``i``, if the search computed them."""
    return graph.stuck[i] if graph.stuck else 0


def _search_full(
    system: TransitionSystem,
    reduced: StateGraph,
    wanted: set[str],
    symmetry: Symmetry | None,
    safe: frozenset[int],
    max_states: int,
) -> dict[str, Finding]:
    canon = symmetry.canonicalize if symmetry is not None else None
    first = system.initial()
    if canon is not None:
        first = canon(first)[0]
    states = [first]
    index = {first: 0}
    parent = [-1]
    action = [-1]
    found: dict[str, Finding] = {}

    def chain(i: int) -> list[tuple[int, Hashable]]:
        out = []
        while parent[i] >= 0:
            out.append((action[i], states[i]))
            i = parent[i]
        out.reverse()
        return out

    def stuck_in(state: Hashable) -> int:
        blocked = system.blocked_mask(state)
        if not blocked or not reduced.stuck:
            return 0
        closed = _safe_closure(system, state, safe)
        key = canon(closed)[0] if canon is not None else closed
        j = reduced.index.get(key)
        if j is None:
            raise RuntimeError("internal error: a safe closure is missing from the reduced graph")
        return blocked & _frame(symmetry, reduced.stuck[j], closed)

    step_violations = getattr(system, "step_violations", None)
    stuck_at = _stuck_at_function(system, reduced, symmetry, safe)

    def run_to(j: int) -> Run:
        return _concrete_run(system, chain(j), symmetry)

    i = 0
    while i < len(states) and len(found) < len(wanted) and len(states) <= max_states:
        state = states[i]
        nexts = system.successors(state)
        if step_violations is not None:
            for a, nxt in nexts:
                for pid in step_violations(state, a, nxt):
                    if pid in wanted and pid not in found:
                        found[pid] = _step_finding(
                            system, pid, _concrete_run(system, chain(i), symmetry)
                        )
        _record(
            system,
            state,
            wanted,
            found,
            partial(run_to, i),
            not nexts and system.pending_work(state),
            partial(stuck_in, state),
            symmetry,
            stuck_at,
        )
        for a, nxt in nexts:
            if canon is not None:
                nxt = canon(nxt)[0]
            if nxt not in index:
                index[nxt] = len(states)
                states.append(nxt)
                parent.append(i)
                action.append(a)
        i += 1
    for finding in found.values():
        finding.shortest = True  # EXP-SHORTEST: found breadth-first in the full model
    missing = wanted - found.keys()
    if missing:
        # The full search ran out of budget: fall back to the reduced graph's runs,
        # which are counterexamples but perhaps not the shortest.
        for pid, finding in _from_graph(system, reduced, missing, symmetry, safe).items():
            finding.detail = (finding.detail + " (not proven shortest: budget)").strip()
            found[pid] = finding
    return found
