"""Z3-BACKLOG: the stalled-queue backlog ``I + M*floor(I/M)`` for every credit spec."""

from __future__ import annotations

import pytest
import z3

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.symbolic.backlog import prove_stalled_backlog, stalled_chain
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import check_valid, houdini
from creditflow.model.credit.spec import CreditSpec


def test_backlog_is_proved_for_every_spec():
    """Z3-BACKLOG: every obligation of the three cases (M >= 1, M <= 0 < I, I <= 0) holds,
    non-vacuously."""
    theorem = prove_stalled_backlog(load_preset("stalled-queue"))
    assert theorem.applicable
    assert [o.status for o in theorem.obligations] == ["proved"] * len(theorem.obligations)
    assert len(theorem.obligations) >= 12
    assert "I + M*floor(I/M)" in theorem.statements[0]


def test_a_wrong_backlog_is_not_provable():
    """Z3-BACKLOG: the proof has teeth: one message more is refuted in a terminal state."""
    graph = load_preset("stalled-queue")
    enc = NetworkEncoding(graph, Credits.GLOBAL, symbolic_supply=True)
    inv = houdini(enc, enc.lemmas())
    i, m = enc.params["I"], enc.params["M"]
    q = z3.Int("q")
    queue = enc.net.node_index["queue"]
    hyp = z3.And(
        enc.param_constraints,
        inv.formula,
        enc.terminal,
        i >= 1,
        m >= 1,
        q >= 0,
        m * q <= i,
        i < m * (q + 1),
        enc.params["P[reader]"] >= i + m * q + 1,
    )
    verdict, _ = check_valid(hyp, enc.mailbox(queue) == i + m * q + 1)
    assert verdict == "failed"


@pytest.mark.parametrize("spec", [(2, 1), (3, 2), (5, 2), (7, 3), (1, 3), (2, 0)])
def test_backlog_matches_the_explorer(spec):
    """Z3-BACKLOG, PROP-MAILBOX-BOUND: the proved value is the explorer's tight bound."""
    i, m = spec
    expected = i + m * (i // m) if m >= 1 else i
    options = dict(credit=CreditSpec(*spec), publishes=expected + 3)
    _, tight = check_graph(
        load_preset("stalled-queue"), CheckOptions(mailbox_bound=expected, **options)
    )
    _, tighter = check_graph(
        load_preset("stalled-queue"), CheckOptions(mailbox_bound=expected - 1, **options)
    )
    assert "PROP-MAILBOX-BOUND" not in tight.findings
    assert "PROP-MAILBOX-BOUND" in tighter.findings


def test_other_shapes_are_not_claimed():
    """Z3-BACKLOG only speaks about the checking-source -> relay -> stalled-sink chain."""
    assert stalled_chain(load_preset("stalled-queue")) == ("reader", "channel", "queue")
    assert stalled_chain(load_preset("rabbitmq-publish")) is None
    assert not prove_stalled_backlog(load_preset("fanout")).applicable
