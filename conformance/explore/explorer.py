"""Exhaustive breadth-first exploration of a model's reachable states.

Works on any :class:`~creditflow.model.system.TransitionSystem`. It decides every
state property on every state and PROP-NO-DEADLOCK over the whole state graph
(terminal states with pending work, and processes blocked forever, see
:mod:`creditflow.conformance.explore.deadlock`), then rebuilds a *shortest*
counterexample per violated property (:mod:`creditflow.conformance.explore.counterexamples`).

Two reductions keep the state graph small, both sound for every property checked:

* **symmetry** (:mod:`creditflow.conformance.explore.symmetry`): one state per orbit of the
  graph's automorphisms;
* **safe actions** (EXP-SAFE in ``spec/explorer.md``): when the model names some
  enabled action as *safe* (it commutes with every action, is never disabled, never
  blocks anybody and leaves every checked property's truth unchanged), only that
  action is expanded. Breadth-first depth is then no longer the shortest distance,
  so counterexamples are searched again in the full graph, guided by the verdicts
  of the reduced one.

Example::

    >>> from creditflow.conformance.inputs.graphs import load_preset
    >>> from creditflow.conformance.explore.network_system import CheckedNetwork
    >>> result = explore(CheckedNetwork(load_preset("cycle2").with_all_checking()))
    >>> result.findings["PROP-NO-DEADLOCK"].kind
    'terminal'
"""

from __future__ import annotations

import time
from array import array
from collections.abc import (
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MutableSequence,
    Sequence,
)
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from creditflow.conformance.explore.counterexamples import (
    Certifying,
    DeadlockKind,
    Finding,
    Symmetry,
    deadlock_finding,
    find_counterexamples,
)
from creditflow.conformance.explore.deadlock import blocked_forever
from creditflow.conformance.explore.store import (
    PackedRows,
    index_typecode,
    mask_typecode,
    offset_typecode,
)
from creditflow.conformance.explore.vectorized import FIELD, VectorNetwork
from creditflow.model.system import TransitionSystem

if TYPE_CHECKING:
    from creditflow.conformance.explore.partial_order import StubbornSets
    from creditflow.conformance.explore.symmetry import Symmetry as NetworkSymmetry

#: PROP-NO-DEADLOCK's id (decided by the explorer rather than by a state predicate).
NO_DEADLOCK = "PROP-NO-DEADLOCK"
#: PROP-RECOVERY's id: decided with PROP-NO-DEADLOCK for a model that lists it in its
#: ``property_ids`` and says which states are ``quiet`` (no further fault possible)
RECOVERY = "PROP-RECOVERY"
#: Default state budget of one exploration, sized by EXP-STORE's packed store: the
#: issue-21 broker topology (11 processes, 20 edges, 107 fields a state, symmetry order
#: 12) peaked at 393-403 MB for 1,000,001 states (benchmarks/memory_bench.py), at most
#: 310 bytes a state beyond the interpreter's 93 MB, so 6,000,000 states stay under 2 GB;
#: the fanout's 21 fields take about 105 bytes a state (0.6 GB).
DEFAULT_MAX_STATES = 6_000_000

#: EXP-ONLINE: the least state budget of the full search after a reduced one saw a deadlock
FULL_SEARCH_FLOOR = 100_000

#: FAM-DEADLINE: the search calls ``progress`` each time the number of states expanded is
#: a multiple of 64, so a deadline is met within one such stretch (1,000 expansions of
#: HTTP/2's wide states take a second or two; the call costs little beside 64 expansions)
PROGRESS_MASK = 0x3F
#: FAM-DEADLINE: ... or after an expansion that took the states stored this far past the
#: last call (a state with thousands of successors: HTTP/2's last frame of any size)
PROGRESS_STATES = 4_096
#: ``progress(states_found, states_expanded)``
Progress = Callable[[int, int], None]


@dataclass
class StateGraph:
    """The explored (possibly reduced) state graph, in breadth-first numbering."""

    states: Sequence[Hashable]
    index: Mapping[Hashable, int]
    parent: array
    action: array
    depth: array
    offsets: array
    targets: array
    perm_ids: array | None
    #: Per state, the processes blocked forever in it (bit masks, own frame).
    stuck: Sequence[int] = field(default_factory=list)
    #: Per step property, its first violating explored step ``(state index, action)``.
    step_witness: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Per state, the processes blocked in it, when the search already computed them
    #: (EXP-VECTOR); else they are computed from the states when needed.
    blocked: array | None = None

    def successors_of(self, i: int) -> list[int]:
        return list(self.targets[self.offsets[i] : self.offsets[i + 1]])

    def is_terminal(self, i: int) -> bool:
        return self.offsets[i + 1] == self.offsets[i]


@dataclass
class ExplorationResult:
    """Verdicts, figures and shortest counterexamples of one exploration."""

    property_ids: tuple[str, ...]
    graph: StateGraph
    seconds: float
    complete: bool
    reduced: bool
    symmetry_order: int
    #: A shortest counterexample per violated property id.
    findings: dict[str, Finding]
    #: The search stopped at a deadlock that was certain (EXP-ONLINE) before exploring
    #: every state; properties not seen violated by then are undecided.
    stopped_at_deadlock: bool = False
    #: EXP-POR's reduced search ran (the figures are the reduced graph's when it was
    #: complete with nothing violated, else the full search's, EXP-POR-BUDGET)
    partial_order: bool = False

    @property
    def n_states(self) -> int:
        return len(self.graph.states)

    @property
    def transitions(self) -> int:
        return len(self.graph.targets)

    @property
    def holds(self) -> dict[str, bool]:
        """Each property id and whether it held (meaningful only if ``complete``)."""
        return {pid: pid not in self.findings for pid in self.property_ids}

    @property
    def deadlock(self) -> Finding | None:
        return self.findings.get(NO_DEADLOCK)

    def primary(self) -> Finding | None:
        """The counterexample that decides the exit code: the deadlock if there is one,
        else the shortest state-property violation."""
        if self.deadlock is not None:
            return self.deadlock
        if not self.findings:
            return None
        return min(self.findings.values(), key=lambda f: (f.length, f.property_id))


def explore(
    system: TransitionSystem,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    symmetry: Symmetry | None = None,
    reduce: bool = True,
    check_deadlock: bool = True,
    stop_at_deadlock: bool = False,
    progress: Progress | None = None,
    partial_order: bool = False,
) -> ExplorationResult:
    """Explore every state reachable from ``system.initial()`` breadth-first (EXP-BFS).

    ``symmetry``: a :class:`~creditflow.conformance.explore.symmetry.Symmetry` or ``None``.
    ``reduce``: use the model's safe actions (``system.safe_actions``) if it has any.
    ``partial_order``: decide with a stubborn-set reduced graph first where EXP-POR
    applies (a credit network without faults); a violation it shows is searched again
    without it, for the full search's shortest counterexamples.
    ``stop_at_deadlock``: stop as soon as a deadlock and its shortest counterexample are
    certain (EXP-ONLINE), leaving other properties not yet seen violated undecided.
    Stops after ``max_states`` states (``complete=False``, EXP-BUDGET); deadlock freedom
    is then not decided and only the violations seen so far are reported.
    """
    started = time.perf_counter()
    if partial_order and reduce and check_deadlock:
        por = stubborn_sets(system)
        if por is not None:
            return _explore_partial_order(
                system, por, max_states, symmetry, stop_at_deadlock, progress, started
            )
    safe: frozenset[int] = getattr(system, "safe_actions", frozenset()) if reduce else frozenset()
    online = stop_at_deadlock and check_deadlock
    property_ids = (
        (*system.property_ids, NO_DEADLOCK) if check_deadlock else tuple(system.property_ids)
    )

    def result(
        graph: StateGraph,
        complete: bool,
        reduced: bool,
        findings: dict[str, Finding],
        stopped: bool = False,
    ) -> ExplorationResult:
        if progress is not None:
            progress(len(graph.states), len(graph.states))
        return ExplorationResult(
            property_ids=property_ids,
            graph=graph,
            seconds=time.perf_counter() - started,
            complete=complete,
            reduced=reduced,
            symmetry_order=getattr(symmetry, "order", 1),
            findings=findings,
            stopped_at_deadlock=stopped,
        )

    search = _search(system, max_states, symmetry, safe, progress, online)
    seen: _Search | None = None
    if online and search.deadlock_seen and safe:
        # EXP-ONLINE with EXP-SAFE: the reduced graph proved a deadlock; its depths are
        # not distances, so the shortest one is searched in the full model, on the fly,
        # within a budget proportional to the reduced search so far.
        seen = search
        budget = min(max_states, max(FULL_SEARCH_FLOOR, 8 * len(search.graph.states)))
        full = _search(system, budget, symmetry, frozenset(), progress, True)
        if full.resolved is not None or full.complete:
            search, safe = full, frozenset()
        else:
            # the full model is too big: the whole reduced graph, as without EXP-ONLINE
            search = _search(system, max_states, symmetry, safe, progress, False)
    graph = search.graph
    if search.resolved is not None:
        index, kind, mask = search.resolved
        findings = find_counterexamples(
            system,
            graph,
            search.violated - {NO_DEADLOCK},
            symmetry=symmetry,
            safe=frozenset(),
            exact_depths=True,
            max_states=max_states,
        )
        finding = deadlock_finding(system, graph, index, kind, mask, symmetry)
        finding.shortest = True  # EXP-ONLINE: the first violating state in BFS order
        findings[NO_DEADLOCK] = finding
        return result(graph, False, False, findings, stopped=True)
    stuck_found = False
    if check_deadlock and search.complete:
        graph.stuck = _stuck(system, graph, symmetry)
        stuck_found = any(graph.stuck)
    wanted = set(search.violated)
    if stuck_found or search.terminal_with_work is not None:
        wanted.add(NO_DEADLOCK)
    findings = find_counterexamples(
        system,
        graph,
        wanted,
        symmetry=symmetry,
        safe=safe,
        exact_depths=not safe,
        max_states=max_states,
    )
    if stuck_found and RECOVERY in property_ids:
        recovery = _recovery_finding(system, graph, symmetry)
        if recovery is not None:
            findings[RECOVERY] = recovery
    if NO_DEADLOCK not in findings and seen is not None and seen.candidate is not None:
        # budget exhausted, but the reduced search had proved a deadlock (EXP-CERTIFICATE
        # or a terminal state): report it, without the shortest guarantee
        index, kind = seen.candidate
        state = seen.graph.states[index]
        mask = 0 if kind == "terminal" else cast(Certifying, system).stuck_certificate(state)
        finding = deadlock_finding(system, seen.graph, index, kind, mask, symmetry)
        finding.detail = (finding.detail + " (not proven shortest: budget)").strip()
        findings[NO_DEADLOCK] = finding
    return result(graph, search.complete, bool(safe), findings)


@dataclass(frozen=True)
class FirstViolation:
    """EXP-FIRST: the outcome of :func:`explore_first`. ``index`` is the first state in
    breadth-first order that violates a state property or is terminal with pending work
    (``None``: none seen), ``property_ids`` what it violates (:data:`NO_DEADLOCK` for a
    terminal state with work); ``complete`` when every reachable state was stored and
    expanded within the budget."""

    graph: StateGraph
    complete: bool
    index: int | None
    property_ids: tuple[str, ...]
    seconds: float

    @property
    def n_states(self) -> int:
        return len(self.graph.states)

    def path(self) -> tuple[tuple[int, ...], tuple[Hashable, ...]]:
        """The actions and states from the initial state to :attr:`index` (shortest:
        breadth first, EXP-SHORTEST)."""
        assert self.index is not None
        g = self.graph
        actions: list[int] = []
        states = [g.states[self.index]]
        k = self.index
        while g.parent[k] >= 0:
            actions.append(g.action[k])
            k = g.parent[k]
            states.append(g.states[k])
        return tuple(reversed(actions)), tuple(reversed(states))


class DeadlinePassed(TimeoutError):
    """FAM-DEADLINE: a search passed the deadline it was given; it decides nothing."""


def with_deadline(progress: Progress | None, deadline: float | None) -> Progress | None:
    """FAM-DEADLINE: ``progress`` that also raises :class:`DeadlinePassed` once
    ``time.monotonic()`` passes ``deadline`` (the search reports progress every
    64 expansions, :data:`PROGRESS_MASK`, so it stops within one such stretch of the
    deadline)."""
    if deadline is None:
        return progress

    def update(found: int, done: int) -> None:
        if progress is not None:
            progress(found, done)
        if time.monotonic() >= deadline:
            raise DeadlinePassed(f"the deadline passed after {found:,} states")

    return update


def explore_first(
    system: TransitionSystem,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    progress: Progress | None = None,
    deadline: float | None = None,
) -> FirstViolation:
    """EXP-FIRST: breadth-first search (EXP-BFS, the packed numbering of EXP-STORE) that
    stops at the first state, in breadth-first order, that violates a state property or
    is terminal with pending work (a deadlock, EXP-DEADLOCK's terminal kind); its run is
    a shortest one. At most ``max_states`` states are stored (EXP-BUDGET: a search cut
    there decides nothing). No reduction: every property is about this state graph.
    ``deadline`` (``time.monotonic()``): FAM-DEADLINE, :class:`DeadlinePassed` past it."""
    started = time.perf_counter()
    progress = with_deadline(progress, deadline)
    graph, complete, index = _first_search(system, max_states, progress)
    if progress is not None:
        progress(len(graph.states), len(graph.states))
    ids: tuple[str, ...] = ()
    if index is not None:
        ids = tuple(system.violations(graph.states[index])) or (NO_DEADLOCK,)
    return FirstViolation(graph, complete, index, ids, time.perf_counter() - started)


def _first_search(
    system: TransitionSystem, max_states: int, progress: Progress | None
) -> tuple[StateGraph, bool, int | None]:
    """EXP-FIRST's breadth-first loop. EXP-STORE: what a first violation needs is kept
    and nothing more — a set of the states, the states in order, their parents and
    actions (no state numbers in a table, no successor lists, no depths: a run is
    rebuilt from the parents). Properties are checked on states found until the first
    violating one (the search stops there before expanding any later state)."""
    successors = system.successors
    violations_of = system.violations
    pending_work = system.pending_work
    start = system.initial()
    states: list[Hashable] = [start]
    seen = {start}
    number = index_typecode(max_states)
    parent = array(number, [-1])
    action = array(_action_typecode(_actions_known(system)), [-1])
    first_bad: int | None = 0 if violations_of(start) else None
    add_seen, add_state, add_parent, add_action = (
        seen.add,
        states.append,
        parent.append,
        action.append,
    )
    graph = StateGraph(states, {}, parent, action, array(number), array("q"), array(number), None)
    n, i = 1, 0
    while i < n:
        if i == first_bad:
            return graph, False, i
        state = states[i]
        nexts = successors(state)
        if not nexts and pending_work(state):
            return graph, False, i
        for a, nxt in nexts:
            if nxt in seen:
                continue
            if n >= max_states:
                return graph, False, None  # EXP-BUDGET: at most max_states stored
            add_seen(nxt)
            add_state(nxt)
            add_parent(i)
            add_action(a)
            if first_bad is None and violations_of(nxt):
                first_bad = n
            n += 1
        i += 1
        if progress is not None and not i & PROGRESS_MASK:
            progress(n, i)
    return graph, True, None


def stubborn_sets(system: TransitionSystem) -> StubbornSets | None:
    """EXP-POR's reduction for ``system``, or ``None`` where it is not argued: a model
    other than a credit network, or a network with faults (EXP-FAULTS)."""
    from creditflow.conformance.explore.network_system import (  # deferred: only POR needs it
        CheckedNetwork,
    )
    from creditflow.conformance.explore.partial_order import (  # deferred: only POR needs it
        StubbornSets,
    )

    if not isinstance(system, CheckedNetwork) or system.network.crashable:
        return None
    return StubbornSets(system)


def _explore_partial_order(
    system: TransitionSystem,
    por: StubbornSets,
    max_states: int,
    symmetry: Symmetry | None,
    stop_at_deadlock: bool,
    progress: Progress | None,
    started: float,
) -> ExplorationResult:
    """EXP-POR: search the stubborn-set reduced graph; if it is complete and shows no
    violation, its verdicts are the full model's; if it shows one, or stops at the
    budget having decided nothing (EXP-POR-BUDGET), the full model is searched as
    without EXP-POR (same options) and its result is reported, with the reduced graph's
    runs standing in, "not proven shortest", for violations that budget leaves out."""
    property_ids = (*system.property_ids, NO_DEADLOCK)
    search = _search(system, max_states, symmetry, frozenset(), progress, stop_at_deadlock, por)
    graph = search.graph
    stuck_found = False
    if search.complete:
        graph.stuck = _stuck(system, graph, symmetry)
        stuck_found = any(graph.stuck)
    seen = set(search.violated)
    if stuck_found or search.terminal_with_work is not None or search.deadlock_seen:
        seen.add(NO_DEADLOCK)
    if not seen and search.complete:
        if progress is not None:
            progress(len(graph.states), len(graph.states))
        return ExplorationResult(
            property_ids=property_ids,
            graph=graph,
            seconds=time.perf_counter() - started,
            complete=True,
            reduced=True,
            symmetry_order=getattr(symmetry, "order", 1),
            findings={},
            partial_order=True,
        )
    full = explore(
        system,
        max_states=max_states,
        symmetry=symmetry,
        stop_at_deadlock=stop_at_deadlock,
        progress=progress,
    )
    missing = seen - full.findings.keys()
    if missing and full.complete:
        # EXP-POR's soundness: every violation of the reduced graph is the full model's
        raise RuntimeError(f"internal error: EXP-POR saw {sorted(missing)}, the full search not")
    if missing and not full.stopped_at_deadlock:
        full.findings.update(_reduced_findings(system, search, missing, symmetry, max_states))
    full.seconds = time.perf_counter() - started
    full.partial_order = True
    return full


def _reduced_findings(
    system: TransitionSystem,
    search: _Search,
    wanted: set[str],
    symmetry: Symmetry | None,
    max_states: int,
) -> dict[str, Finding]:
    """EXP-POR: the reduced graph's runs to the violations in ``wanted`` (runs of the
    model, but perhaps not the shortest), marked so."""
    graph = search.graph
    found = find_counterexamples(
        system,
        graph,
        wanted if search.complete else wanted - {NO_DEADLOCK},
        symmetry=symmetry,
        safe=frozenset(),
        exact_depths=True,
        max_states=max_states,
    )
    if NO_DEADLOCK in wanted and NO_DEADLOCK not in found and search.candidate is not None:
        index, kind = search.candidate
        state = graph.states[index]
        mask = 0 if kind == "terminal" else cast(Certifying, system).stuck_certificate(state)
        found[NO_DEADLOCK] = deadlock_finding(system, graph, index, kind, mask, symmetry)
    for finding in found.values():
        finding.shortest = False
        finding.detail = (finding.detail + " (not proven shortest: budget)").strip()
    return found


def _recovery_finding(
    system: TransitionSystem, graph: StateGraph, symmetry: Symmetry | None
) -> Finding | None:
    """PROP-RECOVERY: the first quiet state (breadth-first, so shortest) in which some
    process is blocked forever, as a finding; ``None`` if there is none."""
    quiet = cast(Any, system).quiet  # only a fault graph's CheckedNetwork has quiet()
    for i, mask in enumerate(graph.stuck):
        if mask and quiet(graph.states[i]):
            finding = deadlock_finding(system, graph, i, "blocked-forever", mask, symmetry)
            finding.property_id = RECOVERY
            return finding
    return None


def _stuck(
    system: TransitionSystem,
    graph: StateGraph,
    symmetry: Symmetry | None,
    blocked: MutableSequence[int] | None = None,
) -> Sequence[int]:
    """EXP-DEADLOCK over ``graph``; states not expanded count as having no successors,
    so on a partial graph the result over-approximates who is blocked forever.
    ``blocked``: the states' blocked masks, if already known (a prefix is enough)."""
    n = len(graph.states)
    if blocked is None and graph.blocked is not None:
        blocked = graph.blocked
    masks: MutableSequence[int] = blocked if blocked is not None else []
    masks.extend(system.blocked_mask(s) for s in graph.states[len(masks) :])
    offsets = graph.offsets
    if len(offsets) < n + 1:
        offsets = array("q", offsets)
        offsets.extend([len(graph.targets)] * (n + 1 - len(offsets)))
    return blocked_forever(
        masks,
        offsets,
        graph.targets,
        graph.depth,
        len(system.process_names),
        perm_ids=graph.perm_ids,
        frames=getattr(symmetry, "node_frames", None),
    )


@dataclass
class _Search:
    graph: StateGraph
    complete: bool
    terminal_with_work: int | None
    violated: set[str]
    #: a deadlock was seen (a terminal state with work, or a certificate)
    deadlock_seen: bool = False
    #: EXP-ONLINE: (state index, kind, blocked-forever mask) of the first deadlock
    resolved: tuple[int, DeadlockKind, int] | None = None
    #: the first state where a deadlock was certain, and its kind
    candidate: tuple[int, DeadlockKind] | None = None
    #: EXP-VECTOR: the search handed over after this many expanded states, with its
    #: EXP-ONLINE bookkeeping ``(candidate, candidate kind, next resolution)``
    handed_over: tuple[int, tuple[int | None, DeadlockKind, int]] | None = None


#: EXP-ONLINE: states one resolution attempt may visit in its local searches, per
#: explored state
LOCAL_SEARCH_FACTOR = 1
#: ... and at most this many
LOCAL_SEARCH_CAP = 50_000
#: EXP-ONLINE: after a failed resolution, the next one waits until this many times as
#: many states are expanded
RETRY_GROWTH = 4


#: EXP-UNBLOCK: states one guided search for an unblocking run may visit
UNBLOCK_SEARCH_CAP = 20_000


class Unblocking(Protocol):
    """A system that guides EXP-UNBLOCK (credit networks: ``CheckedNetwork``)."""

    def unblock_helpers(self, state: Any, needed: int) -> int: ...

    def actor(self, action: int) -> int | None: ...

    def credit_deficit(self, state: Any, needed: int) -> int: ...


def _unblocking_search(system: TransitionSystem, start: Hashable, needed: int) -> int:
    """EXP-UNBLOCK: the processes of ``needed`` (blocked in ``start``) that no run found
    from ``start`` unblocks. The search follows only the steps of the processes the
    needed ones wait for (:meth:`unblock_helpers`), no new publish, best first by the
    credit they still miss; every run it follows is a run of the model, so a process it
    unblocks is not blocked forever in ``start``."""
    guide = cast(Unblocking, system)
    helpers_of, actor, deficit = guide.unblock_helpers, guide.actor, guide.credit_deficit
    seen = {start}
    heap = [(deficit(start, needed), 0, start)]
    order = visited = 0
    while heap and needed and visited < UNBLOCK_SEARCH_CAP:
        u = heappop(heap)[2]
        visited += 1
        needed &= system.blocked_mask(u)
        if not needed:
            break
        helpers = helpers_of(u, needed)
        for a, v in system.successors(u):
            who = actor(a)
            if who is None or not helpers >> who & 1 or v in seen:
                continue
            seen.add(v)
            order -= 1  # ties: the newest first, so the search goes deep
            heappush(heap, (deficit(v, needed), order, v))
    return needed


def _resolve(
    system: TransitionSystem,
    graph: StateGraph,
    expanded: int,
    symmetry: Symmetry | None,
    certify: Callable[[Hashable], int],
    blocked: MutableSequence[int] | None = None,
) -> tuple[int, DeadlockKind, int] | None:
    """EXP-ONLINE: the first state (in breadth-first order) that violates
    PROP-NO-DEADLOCK, if it is certain from the explored prefix; ``None`` if not yet.

    A state is resolved when it is expanded and terminal with work (a terminal
    deadlock); when each process the over-approximation of :func:`_stuck` calls blocked
    forever in it is shown free, by the prefix, by a guided search for a run that
    unblocks it (EXP-UNBLOCK) or by a bounded local search for a reachable state where it
    is unblocked; or when the certificate (EXP-CERTIFICATE)
    names exactly the processes that remain."""
    stuck = _stuck(system, graph, symmetry, blocked)
    offsets = graph.offsets
    canon = symmetry.canonicalize if symmetry is not None else None
    index = graph.index
    budget = [min(LOCAL_SEARCH_CAP, LOCAL_SEARCH_FACTOR * len(graph.states))]
    guided = hasattr(system, "unblock_helpers")

    def frame(mask: int, state: Hashable) -> int:
        if canon is None or symmetry is None:
            return mask
        return symmetry.to_original_frame(mask, canon(state)[1])

    def still_stuck(start: Hashable, needed: int) -> int:
        """Processes of ``needed`` no state reachable from ``start`` (found within the
        budget) unblocks or the prefix shows free."""
        seen = {start}
        queue = [start]
        while queue and needed and budget[0] > 0:
            u = queue.pop()
            budget[0] -= 1
            j = index.get(canon(u)[0] if canon is not None else u)
            if j is not None:
                needed &= frame(stuck[j], u)
            else:
                needed &= system.blocked_mask(u)
            for _, v in system.successors(u):
                if v not in seen:
                    seen.add(v)
                    queue.append(v)
        return needed

    def proven_stuck(start: Hashable, needed: int) -> bool:
        """Whether every state reachable from ``start`` keeps ``needed`` blocked: the
        states reachable before EXP-CERTIFICATE certifies them all, within the budget,
        block them, and certified ones stay blocked by the certificate's soundness."""
        seen = {start}
        stack = [start]
        while stack:
            if budget[0] <= 0:
                return False
            u = stack.pop()
            budget[0] -= 1
            if needed & ~system.blocked_mask(u):
                return False
            if not needed & ~certify(u):
                continue
            for _, v in system.successors(u):
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return True

    for k in range(len(graph.states)):
        if k >= expanded:
            return None
        state = graph.states[k]
        if offsets[k + 1] == offsets[k] and system.pending_work(state):
            return (k, "terminal", 0)
        if stuck[k]:
            cert = certify(state)
            rest = stuck[k] & ~cert
            if rest and guided:
                rest = _unblocking_search(system, state, rest)
            if rest:
                rest = still_stuck(state, rest)
            if rest and proven_stuck(state, rest):
                cert, rest = cert | rest, 0
            if rest:
                return None
            if cert:
                return (k, "blocked-forever", cert)
    return None


#: EXP-VECTOR: a search that outgrows this many states is handed over to the vectorized
#: engine (below it, numpy's per-call cost outweighs what it saves; measured)
VECTOR_AFTER = 2_000
#: EXP-VECTOR: ... and once that many states are queued (a narrow search stays with
#: one state at a time: a block of a few states costs numpy more than it saves)
VECTOR_FRONTIER = 500
#: EXP-VECTOR: states expanded per block (EXP-STORE: a block's temporary arrays, which
#: the allocator keeps once freed, count in the peak memory; 2^14 rather than 2^16 keeps
#: them near 40 MB on the fanout)
VECTOR_BLOCK = 1 << 14


def _search(
    system: TransitionSystem,
    max_states: int,
    symmetry: Symmetry | None,
    safe: frozenset[int],
    progress: Progress | None,
    online: bool,
    por: StubbornSets | None = None,
) -> _Search:
    """EXP-BFS with one of two engines that give the same states, numbered the same, and
    the same verdicts: one state at a time, or, for a network that outgrows
    :data:`VECTOR_AFTER` states, blocks of states at once (EXP-VECTOR). With
    partial-order reduction (EXP-POR) one state at a time only."""
    vector = getattr(system, "vectorized", None)
    if por is not None or vector is None or not vector.supported or max_states <= VECTOR_AFTER:
        return _breadth_first(system, max_states, symmetry, safe, progress, online, por=por)
    first = _breadth_first(system, max_states, symmetry, safe, progress, online, VECTOR_AFTER)
    if first.handed_over is None:
        return first  # ended before the hand-over: what the whole search gives
    try:
        return _breadth_first_vectorized(
            system, vector, max_states, symmetry, safe, progress, online, first
        )
    except HashCollision:
        return _breadth_first(system, max_states, symmetry, safe, progress, online)


def _proviso(
    steps: Iterable[tuple[int, Hashable]],
    canon: Callable[[Hashable], tuple[Hashable, int]] | None,
    index: Mapping[Hashable, int],
    depth: Sequence[int],
    level: int,
) -> bool:
    """EXP-POR's cycle proviso: every step of a reduced expansion at BFS level ``level``
    leads to a state not stored yet or stored one level down; else the state is expanded
    fully. Every cycle of the reduced graph then holds a fully expanded state."""
    for _, nxt in steps:
        j = index.get(canon(nxt)[0] if canon is not None else nxt)
        if j is not None and depth[j] <= level:
            return False
    return True


def _actions_known(system: TransitionSystem) -> tuple[int, ...] | None:
    """A model's actions, when it lists them (each gives at most one successor): a
    network's vectorized engine's, or ``action_codes`` of a family's system (EXP-STORE)."""
    vector = getattr(system, "vectorized", None)
    actions = getattr(vector, "actions", None) or getattr(system, "action_codes", None)
    return tuple(actions) if actions else None


def _action_typecode(actions: tuple[int, ...] | None) -> str:
    """EXP-STORE: 32-bit actions where the network lists its actions and they fit."""
    if actions and all(-(2**31) <= a < 2**31 for a in actions):
        return "i"
    return "q"


def _breadth_first(
    system: TransitionSystem,
    max_states: int,
    symmetry: Symmetry | None,
    safe: frozenset[int],
    progress: Progress | None,
    online: bool,
    hand_over: int | None = None,
    por: StubbornSets | None = None,
) -> _Search:
    """EXP-BFS one state at a time. ``hand_over``: return, once more than this many
    states are stored and :data:`VECTOR_FRONTIER` of them are queued, after the
    expansion that stored them (EXP-VECTOR continues). ``por``: expand a stubborn set
    of invisible steps where one exists and the cycle proviso allows (EXP-POR)."""
    successors = system.successors
    violations_of = system.violations
    # a step property is checked either by `step_violations(s, a, t)` or, in compiled
    # models, by the successor functions themselves, which log the bad actions
    step_log = getattr(system, "step_log", None)
    step_violations = None if step_log is not None else getattr(system, "step_violations", None)
    if step_log:
        step_log.clear()  # left over from replays of earlier runs
    certify = getattr(system, "stuck_certificate", None) if online else None
    canon = symmetry.canonicalize if symmetry is not None else None

    first = system.initial()
    if canon is not None:
        first = canon(first)[0]
    states: list[Hashable] = [first]
    reported = 0  # the states stored when ``progress`` was last called
    index: dict[Hashable, int] = {first: 0}
    number = index_typecode(max_states)  # EXP-STORE
    actions = _actions_known(system)
    graph = StateGraph(
        states=states,
        index=index,
        parent=array(number, [-1]),
        action=array(_action_typecode(actions), [-1]),
        depth=array(number, [0]),
        offsets=array(offset_typecode(max_states, len(actions) if actions else None), [0]),
        targets=array(number),
        perm_ids=array("b") if canon is not None else None,
    )
    targets = graph.targets
    parent, action, depth, offsets = graph.parent, graph.action, graph.depth, graph.offsets
    # a throwaway array without symmetry (nothing is appended to it then)
    perm_ids = graph.perm_ids if graph.perm_ids is not None else array("b")
    step_witness = graph.step_witness
    violated = set(violations_of(first))
    terminal_with_work: int | None = None
    # EXP-ONLINE: the first state where a deadlock is certain (terminal with work or a
    # certificate), and when to try to resolve the shortest one next
    candidate: int | None = None
    candidate_kind: DeadlockKind = "blocked-forever"
    if certify is not None and certify(first):
        candidate = 0
    next_try = 0
    masks: list[int] = []  # blocked masks of the states, kept across resolutions
    # a model may offer `first_safe(state)`: the first enabled safe action, computed
    # without building every successor
    first_safe = getattr(system, "first_safe", None) if safe else None
    # IN-WORK: a model may offer its enabled actions and `apply` separately, so that a
    # wide expansion (a 10,000-leaf star) builds successors one at a time and stops at
    # the budget instead of materialising every successor of a state at once
    # (EXP-POR reads every successor of a state, so it takes them all at once)
    enabled_of = getattr(system, "lazy_enabled", None) if por is None else None
    apply_of = getattr(system, "lazy_apply", None)
    stubborn = por.reduce if por is not None else None
    step_log_property: Any = getattr(system, "step_log_property", None)
    setdefault = index.setdefault
    add_state, add_parent, add_action, add_depth, add_target = (
        states.append,
        parent.append,
        action.append,
        depth.append,
        targets.append,
    )
    n = len(states)
    complete = True
    i = 0
    while i < n:
        state = states[i]
        picked = first_safe(state) if first_safe is not None else None
        nexts: Iterable[tuple[int, Hashable]]
        if picked is not None:
            nexts = (picked,)
        elif enabled_of is not None and apply_of is not None:
            acts = tuple(enabled_of(state))
            if not acts:
                nexts = ()
                if terminal_with_work is None and system.pending_work(state):
                    terminal_with_work = i
            else:
                if safe:
                    first = next((a for a in acts if a in safe), None)
                    if first is not None:
                        acts = (first,)
                nexts = ((a, apply_of(state, a)) for a in acts)
        else:
            nexts = successors(state)
            if not nexts:
                if system.pending_work(state):
                    if terminal_with_work is None:
                        terminal_with_work = i
                    if candidate is None and online:
                        candidate, candidate_kind = i, "terminal"
            elif safe and first_safe is None:
                for a, nxt in nexts:
                    if a in safe:
                        nexts = ((a, nxt),)
                        break
            elif stubborn is not None:
                reduced = stubborn(state, nexts)
                if reduced is not None and _proviso(reduced, canon, index, depth, depth[i]):
                    nexts = reduced
        if step_log:
            pid = step_log_property
            violated.add(pid)
            step_witness.setdefault(pid, (i, step_log[0]))
            step_log.clear()
        d = depth[i] + 1
        for a, nxt in nexts:
            if step_violations is not None:
                bad = step_violations(state, a, nxt)
                if bad:
                    violated.update(bad)
                    for pid in bad:
                        step_witness.setdefault(pid, (i, a))
            if canon is not None:
                nxt, p = canon(nxt)
                perm_ids.append(p)
            j = setdefault(nxt, n)  # one dictionary probe per successor
            if j == n:
                n += 1
                add_state(nxt)
                add_parent(i)
                add_action(a)
                add_depth(d)
                bad = violations_of(nxt)
                if bad:
                    violated.update(bad)
                if certify is not None and candidate is None and certify(nxt):
                    candidate = j
            add_target(j)
            if n > max_states:
                break  # IN-WORK: one wide expansion must not overshoot the budget
        offsets.append(len(targets))
        i += 1
        # every 64 expansions, or after one that stored many states (a wide state)
        if progress is not None and (not i & PROGRESS_MASK or n >= reported + PROGRESS_STATES):
            reported = n
            progress(n, i)
        if candidate is not None and online:
            if safe or por is not None:
                # the reduced graph proves a deadlock exists; the caller searches the
                # full model for the shortest one
                return _Search(
                    graph,
                    False,
                    terminal_with_work,
                    violated,
                    deadlock_seen=True,
                    candidate=(candidate, candidate_kind),
                )
            if i > candidate and i >= next_try:
                resolved = _resolve(system, graph, i, symmetry, certify or (lambda s: 0), masks)
                if resolved:
                    return _Search(
                        graph,
                        False,
                        terminal_with_work,
                        violated,
                        True,
                        resolved,
                    )
                next_try = RETRY_GROWTH * i
        if n > max_states:
            complete = False
            break
        if hand_over is not None and n > hand_over and n - i >= VECTOR_FRONTIER:
            return _Search(
                graph,
                False,
                terminal_with_work,
                violated,
                candidate is not None,
                handed_over=(i, (candidate, candidate_kind, next_try)),
            )
    return _Search(
        graph, complete, terminal_with_work, violated, deadlock_seen=candidate is not None
    )


class HashCollision(Exception):
    """Two different states with the same 64-bit hash (EXP-VECTOR falls back)."""


class RowStates(Sequence):
    """``StateGraph.states`` of a vectorized search: each state as a tuple, on demand."""

    def __init__(self, rows: PackedRows) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return self._rows.n

    def __getitem__(self, k: Any) -> Any:  # an int or a slice, as a list's
        if isinstance(k, slice):
            return [tuple(r) for r in self._rows.array[: self._rows.n][k].tolist()]
        if not -self._rows.n <= k < self._rows.n:
            raise IndexError(k)
        return tuple(self._rows.array[k % self._rows.n].tolist())


class RowIndex(Mapping):
    """``StateGraph.index`` of a vectorized search: a state's number, by hash, checked."""

    def __init__(self, rows: PackedRows) -> None:
        self._rows = rows

    def __getitem__(self, state: Hashable) -> int:
        rows = self._rows
        row = np.asarray(state, dtype=FIELD)
        if row.shape != (rows.width,):
            raise KeyError(state)
        j = int(rows.lookup(row[None], rows.hashes(row[None]))[0])
        if j < 0:
            raise KeyError(state)
        return j

    def __iter__(self) -> Iterator[Hashable]:
        return iter(RowStates(self._rows))

    def __len__(self) -> int:
        return self._rows.n


def _extend(target: array, values: np.ndarray) -> None:
    """Append ``values`` to ``target`` in its own item type."""
    target.frombytes(np.ascontiguousarray(values, dtype=np.dtype(target.typecode)).tobytes())


def _first(mask: np.ndarray) -> int | None:
    where = np.flatnonzero(mask)
    return int(where[0]) if len(where) else None


def _breadth_first_vectorized(
    system: TransitionSystem,
    vector: VectorNetwork,
    max_states: int,
    symmetry: Symmetry | None,
    safe: frozenset[int],
    progress: Progress | None,
    online: bool,
    start: _Search,
) -> _Search:
    """:func:`_breadth_first`, a block of states at a time (EXP-VECTOR), from where the
    one-state search ``start`` handed over.

    numpy computes a block's successors in the order :func:`_breadth_first` lists them
    (by parent, then action), their hashes, and which are new: the first occurrence of a
    hash not stored yet, numbered in order of occurrence. The block is then cut where
    :func:`_breadth_first` would have stopped (the budget; an EXP-ONLINE event: a
    certified new state or a terminal state with work, then a due resolution), so the
    stored states, their numbers and the verdicts are the same. Equal hashes are checked
    to be equal states: :class:`HashCollision` otherwise."""
    certify = getattr(system, "stuck_certificate", None) if online else None
    lost_property: Any = getattr(system, "step_log_property", None)
    bad_moves = sorted(vector.bad_moves)  # only networks with the step form have any
    graph = start.graph
    assert start.handed_over is not None
    i, (candidate, candidate_kind, next_try) = start.handed_over
    stored = np.array(graph.states, dtype=FIELD)
    keys = vector.hashes(stored)
    if len(np.unique(keys)) != len(keys):
        raise HashCollision
    rows = PackedRows(vector.width, vector.hashes)  # EXP-STORE
    rows.add(stored, keys)
    graph.states = RowStates(rows)
    graph.index = RowIndex(rows)
    graph.blocked = array(mask_typecode(len(system.process_names)))
    _extend(graph.blocked, vector.blocked_masks(stored))
    del stored
    blocked = graph.blocked
    violated = start.violated
    terminal_with_work = start.terminal_with_work
    complete = True
    while i < rows.n:
        hi = min(rows.n, i + VECTOR_BLOCK)
        block = rows.array[i:hi].astype(FIELD)  # a copy: the store grows below
        succ, counts = vector.successors(block, bool(safe))
        if symmetry is not None:
            # a vectorized search is of a network: its symmetry is a NetworkSymmetry
            succ.rows, perm_ids = vector.canonical(succ.rows, cast("NetworkSymmetry", symmetry))
        keys = vector.hashes(succ.rows)
        m = len(keys)
        # which candidates are new: the first occurrence of a hash not stored yet
        unique, first_at, inverse = np.unique(keys, return_index=True, return_inverse=True)
        known = rows.lookup(succ.rows[first_at], unique)
        fresh_unique = known < 0
        is_new = np.zeros(m, dtype=bool)
        is_new[first_at[fresh_unique]] = True
        new_rank = np.cumsum(is_new) - 1  # among the new candidates, in order
        unique_id = known.copy()
        unique_id[fresh_unique] = rows.n + new_rank[first_at[fresh_unique]]
        ids = unique_id[inverse] if m else np.zeros(0, dtype=np.int64)
        ends = np.cumsum(counts)  # candidates of parents [0, p] end at ends[p]
        # -- where _breadth_first would stop in this block: after parent `stop`, having
        # processed candidates [0, cut); first the budget ------------------------------
        stop, cut, event = len(block) - 1, m, None
        budget_parent = None
        over = _first(rows.n + np.cumsum(is_new) > max_states)
        if over is not None:
            budget_parent = stop = int(np.searchsorted(ends, over, side="right"))
            cut = over + 1
        pending = np.zeros(len(block), dtype=bool)
        terminal = counts == 0
        if terminal.any():
            pending[terminal] = vector.pending_work(block[terminal])
        first_pending = _first(pending[: stop + 1])
        if online:
            # then EXP-ONLINE: the candidate (set earlier, or the first of a terminal
            # state with work and a certified new state, by the parent that makes it)
            when = 0 if candidate is not None else None
            if candidate is None:
                certified_at = None
                if certify is not None and m:
                    new_positions = np.flatnonzero(is_new[:cut])
                    maybe = np.flatnonzero(vector.maybe_certified(succ.rows[new_positions]))
                    hit = _first(vector.certified(succ.rows[new_positions[maybe]]) != 0)
                    if hit is not None:
                        certified_at = int(new_positions[maybe[hit]])
                made_at = (
                    None
                    if certified_at is None
                    else int(np.searchsorted(ends, certified_at, side="right"))
                )
                if first_pending is not None and (made_at is None or first_pending < made_at):
                    candidate, candidate_kind, when = i + first_pending, "terminal", first_pending
                elif made_at is not None:
                    candidate, when = int(ids[certified_at]), made_at
            if when is not None:
                assert candidate is not None  # set with ``when``
                # after which parent _breadth_first returns or tries to resolve
                due = when if safe else max(when, candidate - i, next_try - i - 1)
                if due <= stop:
                    stop, event = due, "safe" if safe else "resolve"
                    cut = min(cut, int(ends[due]))
        if first_pending is not None and first_pending <= stop and terminal_with_work is None:
            terminal_with_work = i + first_pending
        # -- keep parents [0, stop] and candidates [0, cut) -----------------------------
        kept_new = np.flatnonzero(is_new[:cut])
        new_rows = succ.rows[kept_new]
        rows.add(new_rows, keys[kept_new])
        kept_ids = ids[:cut]
        if not np.array_equal(rows.array[kept_ids], succ.rows[:cut]):
            raise HashCollision
        parents = succ.parents[kept_new]  # in the block
        _extend(graph.parent, parents + i)
        _extend(graph.action, succ.actions[kept_new])
        _extend(graph.depth, np.array(graph.depth[i:hi], dtype=np.int64)[parents] + 1)
        _extend(graph.targets, kept_ids)
        if graph.perm_ids is not None:  # symmetry
            _extend(graph.perm_ids, perm_ids[:cut])
        # the last kept parent may be cut short by the budget
        _extend(graph.offsets, int(graph.offsets[-1]) + np.minimum(ends[: stop + 1], cut))
        _extend(blocked, vector.blocked_masks(new_rows))
        violated.update(vector.violations(new_rows))
        if bad_moves:
            # the successors of every kept parent are generated, even past the cut
            bad = _first(np.isin(succ.actions[: int(ends[stop]) if m else 0], bad_moves))
            if bad is not None:
                violated.add(lost_property)
                graph.step_witness.setdefault(
                    lost_property, (i + int(succ.parents[bad]), int(succ.actions[bad]))
                )
        i += stop + 1
        if progress is not None:
            progress(rows.n, i)
        if event == "safe":
            return _Search(
                graph,
                False,
                terminal_with_work,
                violated,
                deadlock_seen=True,
                candidate=(candidate, candidate_kind) if candidate is not None else None,
            )
        if event == "resolve":
            resolved = _resolve(
                system,
                graph,
                i,
                symmetry,
                certify or (lambda s: 0),
                blocked,
            )
            if resolved:
                return _Search(
                    graph,
                    False,
                    terminal_with_work,
                    violated,
                    True,
                    resolved,
                )
            next_try = RETRY_GROWTH * i
        if budget_parent is not None and stop == budget_parent:
            complete = False
            break
    return _Search(
        graph, complete, terminal_with_work, violated, deadlock_seen=candidate is not None
    )
