"""Z3-ENCODING, Z3-SYMBOLIC-CREDITS: the Z3 transition relation is the Python model's.

On every reachable state of the presets and of random small graphs, the Z3 guard of
every action, its next state, NET-BLOCKED, the pending work and every PROP-* formula
evaluate exactly as the Python model (and its state properties) compute them; with
per-edge symbolic credits and supplies too, once Z3 is told the graph's values.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import HealthCheck, given, settings

from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import STATE_PROPERTIES
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.symbolic import Sym, SymbolicUseError, all_paths, merge
from creditflow.model.network.graph import FlowGraph
from tests.strategies import process_graphs

MAX_STATES = 50


def reachable(system: CheckedNetwork, limit: int = MAX_STATES) -> list[tuple[int, ...]]:
    """Breadth-first, the first ``limit`` reachable states."""
    first = system.initial()
    seen = {first: None}
    queue = [first]
    i = 0
    while i < len(queue) and len(queue) < limit:
        for _, nxt in system.successors(queue[i]):
            if nxt not in seen:
                seen[nxt] = None
                queue.append(nxt)
        i += 1
    return queue[:limit]


def evaluator(enc: NetworkEncoding, state, params: dict[str, int]):
    solver = z3.Solver()
    solver.add(*(x == v for x, v in zip(enc.x, state, strict=True)))
    solver.add(*(enc.params[name] == v for name, v in params.items()))
    assert solver.check() == z3.sat
    model = solver.model()

    def value(expr):
        result = model.eval(expr, model_completion=True)
        return z3.is_true(result) if z3.is_bool(result) else result.as_long()

    return value


def graph_params(graph: FlowGraph, enc: NetworkEncoding) -> dict[str, int]:
    """The graph's own credits and supplies, named as the encoding's parameters."""
    values = {}
    for e in graph.edges:
        name = f"{e.sender}->{e.receiver}"
        values[f"I[{name}]"] = e.credit.initial
        values[f"M[{name}]"] = e.credit.more_after
        values["I"], values["M"] = e.credit  # GLOBAL: every edge has the same spec
    for n in graph.nodes:
        if n.source:
            values[f"P[{n.name}]"] = n.publishes
    return {k: v for k, v in values.items() if k in enc.params}


def assert_same_as_model(graph: FlowGraph, credits: Credits, mailbox_bound: int = 2) -> int:
    if credits is Credits.GLOBAL and graph.edges:
        graph = graph.with_credit(graph.edges[0].credit)
    system = CheckedNetwork(graph, mailbox_bound=mailbox_bound)
    net = system.network
    enc = NetworkEncoding(graph, credits, symbolic_supply=credits is not Credits.CONCRETE)
    params = graph_params(graph, enc)
    props = enc.property_formulas(mailbox_bound)
    states = reachable(system)
    init = evaluator(enc, states[0], params)
    assert tuple(init(v) for v in enc.initial()) == states[0]
    for state in states:
        value = evaluator(enc, state, params)
        enabled = set(net.enabled(state))
        for a in enc.actions:
            assert value(enc.guards[a]) == (a in enabled), (graph.name, net.describe(a), state)
            if a in enabled:
                nxt = tuple(value(v) for v in enc.nexts[a])
                assert nxt == net.apply(state, a), (graph.name, net.describe(a), state)
        for n in range(net.n_nodes):
            assert value(enc.blocked[n]) == net.is_blocked(state, n)
        for e in range(net.n_edges):
            assert value(enc.blocks_on[e]) == net.blocks_on(state, e)
        assert value(enc.pending) == net.pending_work(state)
        assert value(enc.terminal) == (not enabled)
        violated = set(system.violations(state))
        for pid in STATE_PROPERTIES:
            assert value(props[pid]) == (pid not in violated), (pid, state)
    return len(states)


@pytest.mark.parametrize(
    "name", ["rabbitmq-publish", "fanout", "stalled-queue", "cycle2", "cycle3"]
)
def test_presets_concrete_and_symbolic(name):
    """Z3-ENCODING on the presets (small supply), concrete and Z3-SYMBOLIC-CREDITS."""
    graph = load_preset(name).with_publishes(2)
    for credits in Credits:
        assert assert_same_as_model(graph, credits) > 5


@settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=4, max_publishes=2))
def test_random_graphs_agree_with_the_model(graph):
    """Z3-ENCODING on random graphs: negative and zero specs, two sends per message,
    stalled and checking processes, cycles."""
    assert_same_as_model(graph, Credits.CONCRETE)
    assert_same_as_model(graph, Credits.PER_EDGE)


def test_paths_partition_and_merge():
    """Z3-ENCODING: the paths of a function are exclusive and exhaustive, and their ite is
    the function."""
    x = Sym(z3.Int("x"))

    def f():
        if x <= 0:
            return 1
        if x == 3:
            return x * 2
        return x - 1

    paths = all_paths(f)
    assert len(paths) == 3
    solver = z3.Solver()
    solver.add(z3.Not(z3.Or(*(p.condition for p in paths))))
    assert solver.check() == z3.unsat
    merged = merge(paths, lambda r: r)
    for v in range(-2, 6):
        assert z3.simplify(z3.substitute(merged, (x.expr, z3.IntVal(v)))).as_long() == (
            1 if v <= 0 else 6 if v == 3 else v - 1
        )


def test_unsupported_symbolic_use_fails_loudly():
    """Z3-ENCODING: model code that needs a concrete value of a symbolic one is an error,
    never a silent mis-encoding."""
    x = Sym(z3.Int("x"))
    with pytest.raises(SymbolicUseError):
        range(x)  # type: ignore[call-overload]  # the misuse under test
    with pytest.raises(SymbolicUseError):
        [0, 1][x]  # type: ignore[index]  # the misuse under test
    with pytest.raises(SymbolicUseError):
        bool(x <= 0)  # outside all_paths
