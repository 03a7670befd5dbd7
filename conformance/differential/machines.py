"""Hypothesis state machines that drive the model and an adapter side by side
(AD-COMPARE after every op).

* :class:`ProcessOpsMachine` generates protocol ops over three processes and a
  pseudo-peer, under credit specs that reach the edge cases: ``I = 1``, ``I < M``,
  ``{0,0}``, negative ``I`` (CF-DISABLED, CF-NEGATIVE), per-op spec overrides,
  block/unblock of a pseudo-peer (CF-MULTISET), ``peer_down`` while blocked
  (CF-PEER-DOWN), bumps from unknown peers (CF-BUMP-UNKNOWN), and grants delivered
  in any order.
* :class:`NetworkRunMachine` draws a process graph (a preset or a random one), runs it
  step by step in the NET model and replays each step's projection (TRACE-PROJECTION).

A divergence raises :class:`DivergenceFound`, which Hypothesis shrinks to a minimal
op sequence (within a time budget: :class:`ShrinkBudgetSpent` then stops it and the
smallest divergence seen is used); an adapter failure raises :class:`AdapterAbort`,
which stops Hypothesis at once (a crashed or hung implementation is not shrunk).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    multiple,
    precondition,
    rule,
)

from creditflow.conformance.differential.adapter import Adapter, AdapterFailure
from creditflow.conformance.differential.projection import step_ops
from creditflow.conformance.differential.protocol import DEFAULT_SPEC, OP_KINDS, Op
from creditflow.conformance.differential.session import DifferentialRun, Divergence, ProcessTrace
from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.inputs.graphs import load_preset, preset_names
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx

PROCESSES = ("A", "B", "C")
PSEUDO_PEERS = ("qq",)
#: Credit specs with their edge cases: I = 1, I < M, {0,0}, negative I, M > I, large.
SPECS = (
    CreditSpec(1, 1),
    CreditSpec(2, 1),
    CreditSpec(3, 2),
    CreditSpec(1, 2),
    CreditSpec(2, 3),
    CreditSpec(0, 0),
    CreditSpec(-1, 2),
    CreditSpec(4, 2),
    CreditSpec(5, 3),
    CreditSpec(400, 200),
)
#: M = 1 grants on every ack, so blocked processes collect deferred grants quickly:
#: {1,1} and {2,1} are drawn more often.
specs = st.sampled_from(SPECS[:1] * 3 + SPECS[1:2] * 2 + SPECS[2:])
processes = st.sampled_from(PROCESSES)


def _pairs(peers: tuple[str, ...]) -> st.SearchStrategy[tuple[str, str]]:
    """(process, peer) pairs of distinct names, three in four acting in ``A``: most
    faults need several ops in one process (blocked, then grants deferred to two
    peers, then an unblock), so concentrating on one process finds them sooner."""
    focus = [("A", q) for q in peers if q != "A"]
    others = [(p, q) for p in PROCESSES[1:] for q in peers if p != q]
    return st.sampled_from(focus * 3 * max(1, len(others) // len(focus)) + others)


#: (process, peer) pairs of two processes: credit flows between processes.
pairs = _pairs(PROCESSES)
#: pairs whose peer may also be a pseudo-peer (a quorum queue's name).
any_pairs = _pairs(PROCESSES + PSEUDO_PEERS)


class DivergenceFound(Exception):
    """The adapter answered an op differently from the model."""

    def __init__(self, divergence: Divergence, trace: ProcessTrace, machine: str) -> None:
        super().__init__(f"{machine}: divergence at op {divergence.index + 1}: {divergence.op}")
        self.divergence = divergence
        self.trace = trace
        self.machine = machine


class _StopHypothesis(KeyboardInterrupt):
    """A signal that ends a Hypothesis run at once, from any example (even one being
    replayed while shrinking). Hypothesis treats a ``KeyboardInterrupt`` as the only
    exception that stops it without recording the example; no other exception type
    gets through its shrinker unchanged."""


class AdapterAbort(_StopHypothesis):  # noqa: N818 - a control-flow signal, not an error type
    """Stops Hypothesis without shrinking: the adapter failed (AD-FAILURE)."""

    def __init__(self, failure: AdapterFailure, trace: ProcessTrace, machine: str) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.trace = trace
        self.machine = machine


class ShrinkBudgetSpent(_StopHypothesis):  # noqa: N818 - a control-flow signal
    """Stops Hypothesis's shrinking after the time budget; the smallest divergence seen
    so far is in the context."""


@dataclass
class MachineContext:
    """What the machines share across examples: the adapter, counters, and the
    smallest divergence seen (kept in case shrinking runs out of time)."""

    adapter: Adapter
    shrink_seconds: float = 10.0
    examples: int = 0
    ops: int = 0
    first_failure: float | None = None
    smallest: DivergenceFound | None = None
    #: The ops the implementation offers (AD-CAPABILITIES); the machines draw no other.
    offered: frozenset[str] = frozenset(OP_KINDS)
    #: Names the known divergence a divergence (in the run's trace so far) is an
    #: instance of (AD-EXPECTATIONS-CONFORM).
    expected: Callable[[Divergence, ProcessTrace], str | None] | None = None
    #: Known divergences met, by expectation name: how many examples ended in each.
    expected_hits: dict[str, int] = field(default_factory=dict)
    expected_examples: dict[str, ProcessTrace] = field(default_factory=dict)

    def offers(self, *kinds: str) -> bool:
        return all(k in self.offered for k in kinds)

    def found(self, exc: DivergenceFound) -> None:
        if self.first_failure is None:
            self.first_failure = time.monotonic()
        if self.smallest is None or len(exc.trace.steps) < len(self.smallest.trace.steps):
            self.smallest = exc

    def check_budget(self) -> None:
        if (
            self.first_failure is not None
            and time.monotonic() - self.first_failure > self.shrink_seconds
        ):
            raise ShrinkBudgetSpent()


class _Differential(RuleBasedStateMachine):
    """Runs ops on both sides and raises on the first divergence."""

    def __init__(self, context: MachineContext) -> None:
        super().__init__()
        self.context = context
        self.run: DifferentialRun | None = None
        #: An expected divergence ended this example: later rules do nothing.
        self.ended = False

    def _start(self, spec: CreditSpec) -> None:
        self.context.check_budget()
        self.context.examples += 1
        try:
            self.run = DifferentialRun(self.context.adapter, spec)
        except AdapterFailure as exc:
            raise AdapterAbort(exc, ProcessTrace(spec, ()), type(self).__name__) from None

    def _check(self, ops: list[Op]) -> None:
        """Run ``ops`` on both sides; raise on a divergence or an adapter failure."""
        assert self.run is not None
        self.context.ops += len(ops)
        try:
            found = self.run.check(ops)
        except AdapterFailure as exc:
            raise AdapterAbort(exc, self.run.trace(), type(self).__name__) from None
        if found is not None and self.context.expected is not None:
            try:
                name = self.context.expected(found, self.run.trace())
            except AdapterFailure as exc:
                raise AdapterAbort(exc, self.run.trace(), type(self).__name__) from None
            if name is not None:
                # AD-EXPECTATIONS-CONFORM: a known divergence ends the example (the two
                # sides no longer agree on the state) without failing the run.
                hits = self.context.expected_hits
                hits[name] = hits.get(name, 0) + 1
                self.context.expected_examples.setdefault(name, self.run.trace())
                self.ended = True
                return
        if found is not None:
            divergence = DivergenceFound(found, self.run.trace(), type(self).__name__)
            self.context.found(divergence)
            raise divergence


class ProcessOpsMachine(_Differential):
    """Random protocol ops over three processes and one pseudo-peer."""

    grants = Bundle("grants")

    @initialize(spec=specs)
    def reset(self, spec: CreditSpec) -> None:
        self._start(spec)

    def _op(self, op: Op) -> object:
        """Run one op; the grants it sent go to the bundle as (sender, recipient, amount)."""
        if self.ended:
            return multiple()
        self._check([op])
        if self.ended:
            return multiple()
        assert self.run is not None
        return multiple(*[(op.proc, to, amount) for to, amount in self.run.last_emitted()])

    @precondition(lambda self: self.context.offers("send"))
    @rule(target=grants, pair=pairs, spec=st.none() | specs)
    def send(self, pair: tuple[str, str], spec: CreditSpec | None) -> object:
        return self._op(Op("send", *pair, spec=spec))

    @precondition(lambda self: self.context.offers("ack"))
    @rule(target=grants, pair=pairs, spec=st.none() | specs)
    def ack(self, pair: tuple[str, str], spec: CreditSpec | None) -> object:
        return self._op(Op("ack", *pair, spec=spec))

    @precondition(lambda self: self.context.offers("bump"))
    @rule(target=grants, grant=consumes(grants))
    def deliver(self, grant: tuple[str, str, int]) -> object:
        """A grant sent earlier reaches its recipient, in any order (CF-BUMP)."""
        sender, recipient, amount = grant
        return self._op(Op("bump", recipient, sender, amount=amount))

    @precondition(lambda self: self.context.offers("bump"))
    @rule(target=grants, pair=any_pairs, amount=st.integers(-2, 6))
    def bump(self, pair: tuple[str, str], amount: int) -> object:
        """Any bump, also from peers never sent to (CF-BUMP-UNKNOWN)."""
        return self._op(Op("bump", *pair, amount=amount))

    @precondition(lambda self: self.context.offers("block"))
    @rule(target=grants, pair=any_pairs)
    def block(self, pair: tuple[str, str]) -> object:
        return self._op(Op("block", *pair))

    @precondition(lambda self: self.context.offers("unblock"))
    @rule(target=grants, pair=any_pairs)
    def unblock(self, pair: tuple[str, str]) -> object:
        return self._op(Op("unblock", *pair))

    @precondition(lambda self: self.context.offers("peer_down"))
    @rule(target=grants, pair=any_pairs)
    def peer_down(self, pair: tuple[str, str]) -> object:
        return self._op(Op("peer_down", *pair))

    @rule(target=grants, proc=processes)
    def state(self, proc: str) -> object:
        return self._op(Op("state", proc))


# -- network runs ------------------------------------------------------------------------


@st.composite
def random_graphs(draw: st.DrawFn) -> FlowGraph:
    """A random process graph of 2-4 nodes with small credit (cycles allowed)."""
    n = draw(st.integers(2, 4))
    g = nx.DiGraph(name="random")
    names = [f"p{i}" for i in range(n)]
    for i, name in enumerate(names):
        attrs: dict[str, object] = {}
        if i == 0 or draw(st.integers(0, 3)) == 0:
            attrs["source"] = True
            attrs["publishes"] = draw(st.integers(1, 6))
        if draw(st.integers(0, 3)) == 0:
            attrs["checks_blocked"] = draw(st.booleans())
        if i > 0 and draw(st.integers(0, 7)) == 0:
            attrs["stalled"] = True
        g.add_node(name, **attrs)
    for i in range(n - 1):
        g.add_edge(names[i], names[i + 1])
    for i in range(n):
        for j in range(n):
            if i != j and not g.has_edge(names[i], names[j]) and draw(st.integers(0, 3)) == 0:
                g.add_edge(names[i], names[j])
    for u, v in g.edges:
        g.edges[u, v]["credit"] = list(draw(st.sampled_from(SPECS[:9])))
        g.edges[u, v]["sends_per_message"] = draw(st.sampled_from([1, 1, 1, 2]))
    return flow_graph_from_networkx(g)


@st.composite
def preset_graphs(draw: st.DrawFn) -> FlowGraph:
    """A preset with small credit and supply, so runs reach blocking quickly."""
    graph = load_preset(draw(st.sampled_from(preset_names())))
    graph = graph.with_credit(draw(st.sampled_from(SPECS[:9])))
    return graph.with_publishes(draw(st.integers(1, 8)))


flow_graphs = st.one_of(preset_graphs(), random_graphs())


class NetworkRunMachine(_Differential):
    """A network run, each step replayed as its per-process ops (TRACE-PROJECTION)."""

    def __init__(self, context: MachineContext) -> None:
        super().__init__(context)
        self.net: CreditNetwork | None = None
        self.state: tuple[int, ...] = ()

    @initialize(graph=flow_graphs)
    def start(self, graph: FlowGraph) -> None:
        self.net = CreditNetwork(graph)
        self.state = self.net.initial()
        self._start(DEFAULT_SPEC)

    def _enabled(self) -> list[int]:
        return [] if self.net is None else list(self.net.enabled(self.state))

    @precondition(lambda self: bool(self._enabled()) and not self.ended)
    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        assert self.net is not None
        action = data.draw(st.sampled_from(self._enabled()), label="action")
        self._check(step_ops(self.net.graph, self.net.decode(action)))
        self.state = self.net.apply(self.state, action)

    @rule(data=st.data())
    def observe(self, data: st.DataObject) -> None:
        """Ask one process for its state (AD-STATE)."""
        assert self.net is not None
        if self.ended:
            return
        proc = data.draw(st.sampled_from(self.net.graph.node_names), label="proc")
        self._check([Op("state", proc)])
