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
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from creditflow.conformance.explore.counterexamples import Finding, find_counterexamples
from creditflow.conformance.explore.deadlock import blocked_forever
from creditflow.model.system import TransitionSystem

#: PROP-NO-DEADLOCK's id (decided by the explorer rather than by a state predicate).
NO_DEADLOCK = "PROP-NO-DEADLOCK"
#: Default state budget of one exploration.
DEFAULT_MAX_STATES = 5_000_000

#: ``progress(states_found, states_expanded)``
Progress = Callable[[int, int], None]


@dataclass
class StateGraph:
    """The explored (possibly reduced) state graph, in breadth-first numbering."""

    states: list[Hashable]
    index: dict[Hashable, int]
    parent: array
    action: array
    depth: array
    offsets: array
    targets: array
    perm_ids: array | None
    #: Per state, the processes blocked forever in it (bit masks, own frame).
    stuck: list[int] = field(default_factory=list)

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
    symmetry: object | None = None,
    reduce: bool = True,
    check_deadlock: bool = True,
    progress: Progress | None = None,
) -> ExplorationResult:
    """Explore every state reachable from ``system.initial()`` breadth-first (EXP-BFS).

    ``symmetry``: a :class:`~creditflow.conformance.explore.symmetry.Symmetry` or ``None``.
    ``reduce``: use the model's safe actions (``system.safe_actions``) if it has any.
    Stops after ``max_states`` states (``complete=False``, EXP-BUDGET); deadlock freedom
    is then not decided and only the violations seen so far are reported.
    """
    started = time.perf_counter()
    safe = getattr(system, "safe_actions", frozenset()) if reduce else frozenset()
    graph, complete, terminal_with_work, violated = _breadth_first(
        system, max_states, symmetry, safe, progress
    )
    stuck_found = False
    if check_deadlock and complete:
        graph.stuck = blocked_forever(
            [system.blocked_mask(s) for s in graph.states],
            graph.offsets,
            graph.targets,
            graph.depth,
            len(system.process_names),
            perm_ids=graph.perm_ids,
            frames=getattr(symmetry, "node_frames", None),
        )
        stuck_found = any(graph.stuck)
    property_ids = (*system.property_ids, NO_DEADLOCK) if check_deadlock else tuple(
        system.property_ids
    )
    wanted = set(violated)
    if stuck_found or terminal_with_work is not None:
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
    if progress is not None:
        progress(len(graph.states), len(graph.states))
    return ExplorationResult(
        property_ids=property_ids,
        graph=graph,
        seconds=time.perf_counter() - started,
        complete=complete,
        reduced=bool(safe),
        symmetry_order=getattr(symmetry, "order", 1),
        findings=findings,
    )


def _breadth_first(
    system: TransitionSystem,
    max_states: int,
    symmetry: object | None,
    safe: frozenset[int],
    progress: Progress | None,
) -> tuple[StateGraph, bool, int | None, set[str]]:
    successors = system.successors
    violations_of = system.violations
    canon = symmetry.canonicalize if symmetry is not None else None  # type: ignore[attr-defined]

    first = system.initial()
    if canon is not None:
        first = canon(first)[0]
    graph = StateGraph(
        states=[first],
        index={first: 0},
        parent=array("q", [-1]),
        action=array("q", [-1]),
        depth=array("l", [0]),
        offsets=array("q", [0]),
        targets=array("q"),
        perm_ids=array("b") if canon is not None else None,
    )
    states, index, targets = graph.states, graph.index, graph.targets
    parent, action, depth, offsets, perm_ids = (
        graph.parent,
        graph.action,
        graph.depth,
        graph.offsets,
        graph.perm_ids,
    )
    violated = set(violations_of(first))
    terminal_with_work: int | None = None
    # a model may offer `first_safe(state)`: the first enabled safe action, computed
    # without building every successor
    first_safe = getattr(system, "first_safe", None) if safe else None
    complete = True
    i = 0
    while i < len(states):
        state = states[i]
        picked = first_safe(state) if first_safe is not None else None
        if picked is not None:
            nexts = (picked,)
        else:
            nexts = successors(state)
            if not nexts:
                if terminal_with_work is None and system.pending_work(state):
                    terminal_with_work = i
            elif safe and first_safe is None:
                for a, nxt in nexts:
                    if a in safe:
                        nexts = ((a, nxt),)
                        break
        d = depth[i] + 1
        for a, nxt in nexts:
            if canon is not None:
                nxt, p = canon(nxt)
                perm_ids.append(p)  # type: ignore[union-attr]
            j = index.get(nxt)
            if j is None:
                j = len(states)
                index[nxt] = j
                states.append(nxt)
                parent.append(i)
                action.append(a)
                depth.append(d)
                bad = violations_of(nxt)
                if bad:
                    violated.update(bad)
            targets.append(j)
        offsets.append(len(targets))
        i += 1
        if progress is not None and not i & 0x3FFF:
            progress(len(states), i)
        if len(states) > max_states:
            complete = False
            break
    return graph, complete, terminal_with_work, violated
