"""PROP-*: each state property holds on reachable states and is violated by bad ones."""

from __future__ import annotations

import networkx as nx

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CREDIT_FROM, DATA, DEFERRED, CreditNetwork
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    IN_FLIGHT_BOUND,
    MAILBOX_BOUND,
    NOTHING_LOST,
    NetworkProperties,
    edge_conserved,
)
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import flow_graph_from_networkx


def poke(state, index, delta):
    s = list(state)
    s[index] += delta
    return tuple(s)


def reachable(preset, spec, publishes=4):
    system, result = check_graph(
        load_preset(preset),
        CheckOptions(credit=CreditSpec(*spec), publishes=publishes, symmetry=False, reduce=False),
    )
    return system, result


def test_reachable_states_satisfy_every_state_property():
    """PROP-CONSERVATION, PROP-DEFERRED-BLOCKED, PROP-IN-FLIGHT-BOUND, PROP-NOTHING-LOST."""
    system, result = reachable("rabbitmq-publish", (2, 1))
    assert result.complete and result.findings == {}
    for state in result.graph.states:
        assert system.violations(state) == ()


def test_conservation_detects_a_lost_grant():
    """PROP-CONSERVATION: dropping a grant in flight breaks the equation."""
    net = CreditNetwork(load_preset("rabbitmq-publish").with_credit(CreditSpec(2, 1)))
    props = NetworkProperties(net)
    s = net.initial()
    assert edge_conserved(*s[0:5], 2, 1)
    bad = poke(s, CREDIT_FROM, -1)
    assert CONSERVATION in props.violations(bad)
    assert "reader->channel" in CheckedNetwork(net.graph).explain(bad, CONSERVATION)


def test_deferred_implies_blocked_detects_a_stray_deferral():
    """PROP-DEFERRED-BLOCKED: a deferred grant at an unblocked process is a violation."""
    net = CreditNetwork(load_preset("rabbitmq-publish").with_credit(CreditSpec(2, 1)))
    props = NetworkProperties(net)
    # the channel (receiver of edge 0) defers a grant while not blocked; keep the
    # equation balanced so only this property fails
    bad = poke(poke(net.initial(), DEFERRED, 1), CREDIT_FROM, -1)
    assert props.violations(bad) == (DEFERRED_IMPLIES_BLOCKED,)


def test_in_flight_bound_for_checking_senders_only():
    """PROP-IN-FLIGHT-BOUND: a checking sender never has more than I messages in flight."""
    net = CreditNetwork(load_preset("rabbitmq-publish").with_credit(CreditSpec(2, 1)))
    props = NetworkProperties(net)
    over = poke(poke(net.initial(), DATA, 3), CREDIT_FROM, -3)  # reader: 3 > I in flight
    assert IN_FLIGHT_BOUND in props.violations(over)
    channel_edge = net.edge_index[("channel", "queue")] * 5
    relay = poke(poke(net.initial(), channel_edge + DATA, 3), channel_edge + CREDIT_FROM, -3)
    assert IN_FLIGHT_BOUND not in props.violations(relay)  # the channel does not check


def test_mailbox_bound_counts_all_senders():
    """PROP-MAILBOX-BOUND: the mailbox is the sum over a process's senders."""
    net = CreditNetwork(load_preset("fanout"))
    props = NetworkProperties(net, mailbox_bound=1)
    s = net.initial()
    for q in ("queue1", "queue2"):
        e = net.edge_index[(q, "store")] * 5
        s = poke(poke(s, e + DATA, 1), e + CREDIT_FROM, -1)
    assert MAILBOX_BOUND in props.violations(s)


def test_nothing_lost_detects_a_vanished_message_and_skips_cycles():
    """PROP-NOTHING-LOST: a message that disappears is caught in DAGs; cycles are exempt."""
    g = nx.DiGraph()
    g.add_node("r", source=True, publishes=2)
    g.add_node("z")
    g.add_edge("r", "z", credit=[3, 1])
    net = CreditNetwork(flow_graph_from_networkx(g))
    props = NetworkProperties(net)
    s = net.apply(net.initial(), next(iter(net.enabled(net.initial()))))  # read(r)
    assert props.violations(s) == ()
    lost = poke(poke(s, DATA, -1), CREDIT_FROM, 1)  # message gone, credit refunded
    assert props.violations(lost) == (NOTHING_LOST,)
    assert not NetworkProperties(CreditNetwork(load_preset("cycle2"))).checks_nothing_lost
