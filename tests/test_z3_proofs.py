"""Z3-INVARIANT, Z3-RESIDUE, Z3-RANK, Z3-EDGE-LEMMA, Z3-CONDITION, Z3-DEADLOCK-FREE,
Z3-DEAD-SET, Z3-BOUNDARY: the parametric proofs, for every credit spec, and the exact
credit condition checked against the explicit explorer."""

from __future__ import annotations

import math
from dataclasses import replace

import networkx as nx
import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import (
    PROVED,
    check_valid,
    derive_condition,
    edge_lemma_obligations,
    houdini,
    prove_dead_set_sound,
    prove_deadlock_freedom,
    prove_termination,
    safe_condition,
)
from creditflow.conformance.symbolic.prove import ProveOptions, exit_code, prove_graph
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx
from tests.strategies import process_graphs


def chain(*hops: int, checks: bool | None = None, publishes: int = 3) -> FlowGraph:
    """source -> p1 -> ... with ``hops[i]`` sends per message on edge i."""
    g = nx.DiGraph(name="chain")
    g.add_node("p0", source=True, publishes=publishes)
    for i, k in enumerate(hops, start=1):
        g.add_node(f"p{i}")
        if checks is not None:
            g.nodes[f"p{i}"]["checks_blocked"] = checks
        g.add_edge(f"p{i - 1}", f"p{i}", credit=[2, 1], sends_per_message=k)
    return flow_graph_from_networkx(g)


def diamond() -> FlowGraph:
    g = nx.DiGraph(name="diamond")
    g.add_node("s", source=True, publishes=2)
    for n in ("a", "b", "z"):
        g.add_node(n)
    g.add_edge("s", "a", credit=[2, 1])
    g.add_edge("s", "b", credit=[2, 1], sends_per_message=2)
    g.add_edge("a", "z", credit=[2, 1])
    g.add_edge("b", "z", credit=[2, 1])
    return flow_graph_from_networkx(g)


def symbolic(graph: FlowGraph):
    enc = NetworkEncoding(graph, Credits.PER_EDGE, symbolic_supply=True)
    return enc, houdini(enc, enc.lemmas())


@pytest.mark.parametrize(
    "graph",
    [
        chain(1, 1, 1),
        diamond(),
        load_preset("fanout"),
        load_preset("cycle3"),
        load_preset("stalled-queue"),
    ],
    ids=lambda g: g.name,
)
def test_invariant_holds_for_every_credit_spec(graph):
    """Z3-INVARIANT, Z3-RESIDUE: every candidate lemma is inductive for all I, M (any
    integers) and all supplies, and it implies PROP-CONSERVATION, PROP-DEFERRED-BLOCKED,
    PROP-IN-FLIGHT-BOUND and PROP-NOTHING-LOST."""
    enc, inv = symbolic(graph)
    assert inv.dropped == {}
    if any(e.sends_per_message > 1 for e in graph.edges):
        assert any(n.startswith("residue[") for n in inv.lemmas)
    props = enc.property_formulas()
    for pid in (
        "PROP-CONSERVATION",
        "PROP-DEFERRED-BLOCKED",
        "PROP-IN-FLIGHT-BOUND",
        "PROP-NOTHING-LOST",
    ):
        assert inv.implies(enc, props[pid]) == PROVED, pid


def test_houdini_drops_what_is_not_inductive():
    """Z3-INVARIANT: a false candidate is dropped with the action that breaks it."""
    enc = NetworkEncoding(load_preset("rabbitmq-publish"), symbolic_supply=True)
    e = enc.net.edge_index[("reader", "channel")]
    inv = houdini(enc, enc.lemmas() | {"wrong": enc.x[5 * e + 2] <= 1})  # data <= 1
    assert "wrong" in inv.dropped and "read(reader)" in inv.dropped["wrong"]
    assert "conservation[reader->channel]" in inv.lemmas


@settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=4, acyclic=True, allow_stalled=False))
def test_random_dags_terminate_and_are_deadlock_free_under_the_condition(graph):
    """Z3-RANK, Z3-EDGE-LEMMA, Z3-DEADLOCK-FREE: on random DAGs the ranking function
    decreases on every step and the edge lemma holds under the condition, for every spec."""
    enc, inv = symbolic(graph)
    termination = prove_termination(enc, inv)
    assert termination.proved
    condition = z3.And(
        [z3.BoolVal(True)]
        + [safe_condition(t.initial, t.more_after, t.debits) for t in enc.edge_terms]
    )
    proof = prove_deadlock_freedom(enc, inv, termination, condition)
    assert proof.proved and proof.rule in ("edge-lemma", "never-blocked")


def test_edge_lemma_fails_outside_the_condition():
    """Z3-EDGE-LEMMA: without the condition the lemma has a counterexample, with I < M or
    with I >= 1 and M <= 0."""
    enc, inv = symbolic(chain(1))
    (ob,) = edge_lemma_obligations(enc, inv, z3.BoolVal(True), 10_000)
    assert ob.status == "failed"
    i, m = ob.counterexample["I[p0->p1]"], ob.counterexample["M[p0->p1]"]
    assert i >= 1 and (m <= 0 or m > i)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 6])
def test_derived_condition_is_the_readable_one(k):
    """Z3-CONDITION: quantifier elimination gives exactly ``I <= 0 or (M >= 1 and
    M - gcd(k, M) < I)``; for one send per message ``I <= 0 or 1 <= M <= I``."""
    enc, inv = symbolic(chain(k))
    cond = derive_condition(enc, inv, 0)
    assert cond.readable_equivalent
    if k == 1:
        assert cond.text == "I <= 0 or 1 <= M <= I"
    i, m = enc.edge_terms[0].initial, enc.edge_terms[0].more_after
    for iv in range(-1, 7):
        for mv in range(-1, 7):
            got = z3.is_true(
                z3.simplify(z3.substitute(cond.derived, (i, z3.IntVal(iv)), (m, z3.IntVal(mv))))
            )
            expected = iv <= 0 or (mv >= 1 and mv - math.gcd(k, mv) < iv)
            assert got == expected, (k, iv, mv)


@pytest.mark.parametrize("k", [1, 2])
def test_condition_is_exact_against_the_explorer(k):
    """Z3-CONDITION, PROP-NO-DEADLOCK: on a source -> relay -> sink chain with enough
    supply for every remainder of acks, the explicit explorer finds a deadlock exactly
    when the spec of the first edge violates the condition."""
    for iv in range(-1, 5):
        for mv in range(-1, 5):
            g = chain(k, 1, publishes=2 * max(iv, mv, 1) + 1)
            edges = (
                g.edges[0].__class__(g.edges[0].sender, g.edges[0].receiver, CreditSpec(iv, mv), k),
                g.edges[1],
            )
            graph = FlowGraph(g.name, g.nodes, edges)
            _, result = check_graph(graph)
            assert result.complete
            safe = iv <= 0 or (mv >= 1 and mv - math.gcd(k, mv) < iv)
            assert (NO_DEADLOCK not in result.findings) == safe, (k, iv, mv)


def test_symbolic_prove_finds_the_exact_boundary_on_a_chain():
    """Z3-BOUNDARY, Z3-PROVE: `prove --symbolic` proves deadlock freedom for all specs
    satisfying the condition and shows, per edge, a replayed deadlock just outside it;
    the explorer agrees with every boundary counterexample."""
    report = prove_graph(chain(1, 1, 1), ProveOptions(symbolic=True, timeout_s=20))
    assert report.verdicts[NO_DEADLOCK].status == PROVED
    assert report.condition == "every edge: I <= 0 or 1 <= M <= I"
    assert report.condition_exact and len(report.boundary) == 3
    for cex in report.boundary:
        spec = next(
            e.credit for e in cex.system.graph.edges if f"{e.sender}->{e.receiver}" == cex.edge
        )
        assert 1 <= spec.initial < spec.more_after
        _, explored = check_graph(cex.system.graph)
        assert NO_DEADLOCK in explored.findings


@pytest.mark.parametrize("name", ["cycle2", "cycle3", "stalled-queue", "fanout"])
def test_dead_set_is_inductive(name):
    """Z3-DEAD-SET: for every set of processes and every credit spec, a dead set stays a
    dead set after any step, so its members are blocked forever."""
    enc, inv = symbolic(load_preset(name))
    assert all(o.status == PROVED for o in prove_dead_set_sound(enc, inv))


def test_blocked_alone_is_not_a_dead_set():
    """Z3-DEAD-SET: the check has teeth: "blocked now" is not preserved (a grant arrives)."""
    enc, inv = symbolic(load_preset("fanout"))
    members = [z3.Bool(f"m.{n}") for n in enc.graph.node_names]
    weak = z3.And(
        z3.Or(*members), *(z3.Implies(m, b) for m, b in zip(members, enc.blocked, strict=True))
    )
    broken = [
        a
        for a in enc.actions
        if check_valid(
            z3.And(enc.param_constraints, inv.formula, weak, enc.guards[a]),
            enc.at(weak, enc.nexts[a]),
        )[0]
        == "failed"
    ]
    assert broken


@settings(
    max_examples=5, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=3, max_publishes=2))
def test_symbolic_proofs_against_the_explorer_on_the_graphs_own_credits(graph):
    """Z3-OWN-CREDITS on random graphs (cyclic, stalled, k > 1): when the explorer finds a
    deadlock with the graph's own credits, `prove --symbolic` names edges outside its
    condition and neither says "proved" nor exits 0; when it says "proved", the explorer
    finds no deadlock; a deadlock it reports for the graph's own credits (some supply)
    the explorer finds with that supply."""
    report = prove_graph(graph, ProveOptions(symbolic=True, timeout_s=10, depth=6))
    _, explored = check_graph(graph)
    deadlock = NO_DEADLOCK in explored.findings
    if deadlock:
        assert report.own_outside, report.condition
        assert report.result != "proved" and exit_code(report) != 0
    if report.result == "proved":
        assert not deadlock
    if report.own_credits is not None and report.own_credits.status == "violated":
        # a deadlock for some supply of the graph's own credits: the explorer finds it too
        cex = report.counterexamples[NO_DEADLOCK]
        assert [e.credit for e in cex.system.graph.edges] == [e.credit for e in graph.edges]
        _, again = check_graph(cex.system.graph)
        assert NO_DEADLOCK in again.findings


@settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    process_graphs(
        max_nodes=3,
        max_publishes=2,
        specs=st.builds(CreditSpec, st.integers(1, 2), st.integers(1, 2)),
    ).filter(lambda g: not g.is_dag())
)
def test_bmc_and_the_explorer_count_deadlocks_alike_on_random_cyclic_graphs(graph):
    """Z3-BMC-STEPS on random cyclic graphs, with the graph's supply: the explorer's
    shortest deadlock is never longer than BMC's; a graph the explorer exhausts without a
    deadlock has none for BMC; BMC's "none" names what it searched for."""
    depth = 8
    report = prove_graph(graph, ProveOptions(depth=depth, timeout_s=20))
    _, explored = check_graph(graph)
    found = explored.findings.get(NO_DEADLOCK)
    verdict = report.verdicts[NO_DEADLOCK]
    if NO_DEADLOCK in report.counterexamples:
        bmc_length = report.counterexamples[NO_DEADLOCK].finding.length
        assert found is not None and found.length <= bmc_length
    elif verdict.status == "none-up-to-depth":
        assert "no dead set or bad terminal state" in verdict.detail
    if found is None and explored.complete:
        assert NO_DEADLOCK not in report.counterexamples


def test_cycle2_steps_by_check_and_by_bmc():
    """Z3-BMC-STEPS: on `cycle2` `{2,1}` the explorer certifies a 7-step blocked-forever;
    BMC at depth 7 finds no certificate and says so (not a bare "no counterexample"), at
    depth 8 it finds the same deadlock (was: "no counterexample within 7 steps")."""
    graph = load_preset("cycle2")
    options = ProveOptions(credit=CreditSpec(2, 1), depth=7, timeout_s=30)
    shallow = prove_graph(graph, options)
    verdict = shallow.verdicts[NO_DEADLOCK]
    assert verdict.status == "none-up-to-depth"
    assert "no dead set or bad terminal state within 7 steps" in verdict.detail
    assert "no counterexample" not in verdict.detail  # a 7-step one exists (check's count)
    _, explored = check_graph(graph, CheckOptions(credit=CreditSpec(2, 1)))
    assert explored.findings[NO_DEADLOCK].length == 7
    deep = prove_graph(graph, replace(options, depth=8))
    assert deep.counterexamples[NO_DEADLOCK].finding.length == 8
