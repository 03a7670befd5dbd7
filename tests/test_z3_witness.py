"""Z3-WITNESS, Z3-BMC, Z3-BAD-TERMINAL, Z3-DEAD-SET: every Z3 witness replays step by step
through the Python model, becomes the explorer's kind of finding and ITF trace, and
agrees with the explorer's verdict."""

from __future__ import annotations

from dataclasses import replace

import pytest
import z3
from hypothesis import HealthCheck, given, settings

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.symbolic.bmc import BmcOptions, bounded_check, k_induction
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import houdini, prove_termination
from creditflow.conformance.symbolic.witness import (
    EncodingDriftError,
    finding_from_witness,
    map_witness,
)
from creditflow.conformance.traces.network import network_trace, replay_network_document
from creditflow.model.credit.spec import CreditSpec
from tests.strategies import process_graphs

FAST = BmcOptions(depth=6, mailbox_bound=1, timeout_ms=20_000, shorten_ms=2_000)


def replay_all(result, mailbox_bound=None):
    out = {}
    for pid, witness in result.witnesses.items():
        system, finding = finding_from_witness(witness, mailbox_bound)  # raises on drift
        assert finding.length == len(witness.actions)
        doc = network_trace(system, finding, source="test")
        replayed = replay_network_document(doc)
        assert replayed.states == [s for _, s in finding.path + finding.continuation]
        out[pid] = (system, finding)
    return out


@settings(
    max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=4, max_publishes=2, acyclic=True))
def test_random_witnesses_replay_and_agree_with_the_explorer(graph):
    """Z3-WITNESS: concrete-credit witnesses replay; a deadlock witness (bad terminal or
    dead set) is a deadlock for the explorer too, and a violated mailbox bound is
    violated there (soundness of Z3-BAD-TERMINAL and Z3-DEAD-SET); a complete search
    finds exactly the explorer's violations."""
    result = bounded_check(NetworkEncoding(graph), FAST)
    found = replay_all(result, mailbox_bound=1)
    _, explored = check_graph(graph, CheckOptions(mailbox_bound=1))
    assert explored.complete
    for pid in found:
        assert pid in explored.findings, (pid, graph)
    if result.complete:  # every run ended within the depth: nothing missed
        assert set(found) == set(explored.findings)


@settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=3, max_publishes=2))
def test_random_witnesses_replay_with_cycles(graph):
    """Z3-WITNESS on any graph (cycles, stalled processes): witnesses replay exactly."""
    replay_all(bounded_check(NetworkEncoding(graph), FAST), mailbox_bound=1)


@settings(
    max_examples=5, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(process_graphs(max_nodes=3, max_publishes=2))
def test_symbolic_credit_witnesses_replay(graph):
    """Z3-WITNESS, Z3-SYMBOLIC-CREDITS: with symbolic credits and supplies Z3 also picks the
    values; the witness replays on the graph with those values."""
    enc = NetworkEncoding(graph, Credits.PER_EDGE, symbolic_supply=True)
    small = z3.And([z3.BoolVal(True)] + [z3.And(v >= -1, v <= 3) for v in enc.params.values()])
    inv = houdini(enc, enc.lemmas())
    result = bounded_check(
        enc, replace(FAST, assume=small, invariant=inv.formula, properties=("PROP-MAILBOX-BOUND",))
    )
    fed = any(graph.node(e.sender).source and not graph.node(e.sender).stalled for e in graph.edges)
    if fed:  # Z3 can choose a supply of 2 and credit for both: two messages queued
        assert "PROP-MAILBOX-BOUND" in result.witnesses or result.unknown
    for system, finding in replay_all(result, mailbox_bound=1).values():
        assert system.graph.node_names == graph.node_names
        assert finding.path[0][1] == system.initial()


def test_stalled_queue_deadlock_matches_the_explorer_exactly():
    """Z3-DEAD-SET: the channel blocked on the stalled queue is found at the explorer's
    shortest length, 4 steps, and the lasso continues (EXP-LASSO)."""
    graph = load_preset("stalled-queue")
    result = bounded_check(NetworkEncoding(graph), BmcOptions(depth=8))
    ((system, finding),) = replay_all(result).values()
    assert (finding.kind, finding.length, finding.processes) == ("blocked-forever", 4, ("channel",))
    assert result.shortest[NO_DEADLOCK]
    _, explored = check_graph(graph)
    assert explored.findings[NO_DEADLOCK].length == 4
    assert finding.continuation


def test_terminal_deadlock_is_classified_like_the_explorer():
    """Z3-BAD-TERMINAL: cycle2 where everybody checks stops dead with work pending."""
    graph = load_preset("cycle2").with_credit(CreditSpec(1, 1)).with_all_checking()
    result = bounded_check(NetworkEncoding(graph), BmcOptions(depth=6))
    ((_, finding),) = replay_all(result).values()
    _, explored = check_graph(graph)
    expected = explored.findings[NO_DEADLOCK]
    assert (finding.kind, finding.length) == (expected.kind, expected.length) == ("terminal", 4)


def test_complete_search_proves_absence():
    """Z3-BMC, Z3-RANK: when every run is terminal within the depth, no witness is a proof;
    with the ranking function as a constraint and as the bound it is quick."""
    graph = load_preset("rabbitmq-publish").with_credit(CreditSpec(2, 1)).with_publishes(2)
    enc = NetworkEncoding(graph)
    inv = houdini(enc, enc.lemmas())
    bound = z3.simplify(prove_termination(enc, inv).initial_rank).as_long()
    assert bound == 14
    ranked = bounded_check(
        enc,
        BmcOptions(
            depth=bound, properties=(), invariant=inv.formula, rank=enc.rank(), max_steps=bound
        ),
    )
    assert not ranked.witnesses and ranked.complete


def test_a_tampered_witness_is_rejected():
    """Z3-WITNESS: a state that the model does not reach is reported as drift."""
    graph = load_preset("stalled-queue")
    result = bounded_check(NetworkEncoding(graph), BmcOptions(depth=6))
    witness = result.witnesses[NO_DEADLOCK]
    states = list(witness.states)
    states[2] = (states[2][0] + 1, *states[2][1:])
    with pytest.raises(EncodingDriftError):
        finding_from_witness(replace(witness, states=tuple(states)))
    with pytest.raises(EncodingDriftError):
        finding_from_witness(
            replace(witness, actions=witness.actions[1:], states=witness.states[1:])
        )


def test_mapped_witness_replays():
    """Z3-BOUNDARY: a witness moved by a graph automorphism (fanout's two queues) replays."""
    graph = load_preset("fanout").with_credit(CreditSpec(1, 2)).with_publishes(2)
    result = bounded_check(NetworkEncoding(graph), BmcOptions(depth=6))
    witness = result.witnesses[NO_DEADLOCK]
    phi = {"channel": "channel", "queue1": "queue2", "queue2": "queue1", "store": "store"}
    _, finding = finding_from_witness(map_witness(witness, phi))
    assert finding.length == len(witness.actions)


def test_k_induction():
    """Z3-K-INDUCTION: conservation is 1-inductive on its own; a false mailbox bound fails
    in the base case; with every sender checking, the store's two senders keep at most
    2 + 2 messages in its mailbox, which closes with the lemmas (and 3 does not)."""
    graph = load_preset("fanout").with_credit(CreditSpec(2, 1)).with_all_checking()
    enc = NetworkEncoding(graph)

    def bound(b):
        return enc.property_formulas(mailbox_bound=b)["PROP-MAILBOX-BOUND"]

    conserved = k_induction(enc, enc.property_formulas()["PROP-CONSERVATION"], 3)
    assert conserved.proved and conserved.k == 1
    too_small = k_induction(enc, bound(1), 3)
    assert not too_small.proved and too_small.failed_base
    inv = houdini(enc, enc.lemmas())
    assert k_induction(enc, bound(4), 3, lemmas=inv.formula).proved
    assert not k_induction(enc, bound(3), 3, lemmas=inv.formula).proved
