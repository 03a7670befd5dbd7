"""Z3-SYNTH: credit synthesis with Z3 Optimize, each answer proved and the step beyond it
refuted by a run of the model."""

from __future__ import annotations

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.symbolic.prove import ProveOptions
from creditflow.conformance.symbolic.synthesis import SynthesisOptions, synthesize
from creditflow.model.credit.spec import CreditSpec


def test_smallest_global_credit_for_deadlock_freedom():
    """Z3-SYNTH, Z3-CONDITION: with M = 3 everywhere the smallest I is 3; the answer is
    proved and I = 2 deadlocks (the explorer agrees on both)."""
    graph = load_preset("fanout")
    result = synthesize(graph, SynthesisOptions(prove=ProveOptions(credit=CreditSpec(1, 3))))
    assert result.status == "found" and result.method == "condition"
    assert {str(s) for s in result.credits.values()} == {"{3,3}"}
    assert result.proof is not None and result.proof.result == "proved"
    assert result.beyond is not None and result.beyond.finding.property_id == NO_DEADLOCK
    assert {str(s) for s in result.beyond_credits.values()} == {"{2,3}"}
    _, ok = check_graph(graph, CheckOptions(credit=CreditSpec(3, 3), publishes=4))
    _, bad = check_graph(graph, CheckOptions(credit=CreditSpec(2, 3), publishes=4))
    assert NO_DEADLOCK not in ok.findings and NO_DEADLOCK in bad.findings


def test_no_credit_works_without_grants():
    """Z3-SYNTH: an edge with M <= 0 never grants, so no I >= 1 is deadlock-free."""
    result = synthesize(
        load_preset("rabbitmq-publish"),
        SynthesisOptions(prove=ProveOptions(credit=CreditSpec(5, 0))),
    )
    assert result.status == "none" and "M <= 0" in result.explanation


def test_largest_credit_for_a_mailbox_bound_from_the_closed_form():
    """Z3-SYNTH, Z3-BACKLOG: the largest I with I + 2*floor(I/2) <= 9 is 5; I = 6 queues 12
    in a run of the model."""
    result = synthesize(
        load_preset("stalled-queue"),
        SynthesisOptions(goal="mailbox", bound=9, prove=ProveOptions(credit=CreditSpec(2, 2))),
    )
    assert result.status == "found" and result.method == "closed-form"
    assert {str(s) for s in result.credits.values()} == {"{5,2}"}
    assert result.beyond is not None
    assert result.beyond.finding.property_id == "PROP-MAILBOX-BOUND"
    final = result.beyond.finding.path[-1][1]
    net = result.beyond.system.network
    assert net.mailbox(final, net.node_index["queue"]) == 10


def test_counterexample_guided_loop_with_a_stalled_process():
    """Z3-SYNTH: with a stalled process no condition is known; the loop proposes the
    smallest I not yet refuted, and `prove` refutes each one here (every I deadlocks the
    stalled queue)."""
    result = synthesize(
        load_preset("stalled-queue"),
        SynthesisOptions(max_credit=2, prove=ProveOptions(timeout_s=20, depth=8, shorten_s=1)),
    )
    assert result.method == "cegis" and result.status == "none" and result.rounds == 3
    assert result.beyond is not None and result.beyond.finding.property_id == NO_DEADLOCK
