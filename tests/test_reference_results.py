"""The reference results the model must reproduce (properties.md "Reference results")."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CREDIT_FROM, CreditNetwork
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.explore.properties import STATE_PROPERTIES
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec
from tests.strategies import process_graphs, sane_specs


def backlog(i: int, m: int) -> int:
    return i + m * (i // m)


@pytest.mark.parametrize(
    ("spec", "expected"), [((2, 1), 4), ((3, 2), 5), ((5, 2), 9), ((7, 3), 13)]
)
def test_stalled_queue_backlog_in_every_terminal_state(spec, expected):
    """PROP-NO-DEADLOCK, PROP-MAILBOX-BOUND: reader -> channel -> stalled queue ends with
    I + M*floor(I/M) messages queued, channel credit -M*floor(I/M), the reader blocked
    forever, in *every* terminal state (spec/sources.md 1.6)."""
    assert backlog(*spec) == expected
    graph = load_preset("stalled-queue")
    system, result = check_graph(
        graph, CheckOptions(credit=CreditSpec(*spec), publishes=expected + 5)
    )
    net = system.network
    queue, channel, reader = (net.node_index[n] for n in ("queue", "channel", "reader"))
    terminals = [s for i, s in enumerate(result.graph.states) if result.graph.is_terminal(i)]
    assert terminals
    for s in terminals:
        assert net.mailbox(s, queue) == expected
        e = net.edge_index[("channel", "queue")]
        assert s[5 * e + CREDIT_FROM] == -spec[1] * (spec[0] // spec[1])
        assert net.is_blocked(s, reader) and net.is_blocked(s, channel)
    deadlock = result.findings[NO_DEADLOCK]
    assert deadlock.kind == "blocked-forever"
    # the tight mailbox bound holds, one less is violated
    _, bounded = check_graph(
        graph,
        CheckOptions(credit=CreditSpec(*spec), publishes=expected + 5, mailbox_bound=expected),
    )
    assert "PROP-MAILBOX-BOUND" not in bounded.findings
    _, tighter = check_graph(
        graph,
        CheckOptions(credit=CreditSpec(*spec), publishes=expected + 5, mailbox_bound=expected - 1),
    )
    assert "PROP-MAILBOX-BOUND" in tighter.findings


@pytest.mark.parametrize(("spec", "expected"), [((400, 200), 800), ((2, 1), 4), ((5, 2), 9)])
def test_stalled_queue_backlog_on_random_runs(spec, expected):
    """NET-TAKE, CF-DEFER: any maximal run ends with the same backlog, e.g. {400,200} -> 800,
    the channel's credit at -400 (too many states to enumerate, so sample runs)."""
    graph = (
        load_preset("stalled-queue").with_credit(CreditSpec(*spec)).with_publishes(expected + 50)
    )
    net = CreditNetwork(graph)
    queue = net.node_index["queue"]
    rng = random.Random(7)
    for _ in range(5):
        s = net.initial()
        while True:
            enabled = list(net.enabled(s))
            if not enabled:
                break
            s = net.apply(s, rng.choice(enabled))
        assert net.mailbox(s, queue) == expected
        assert net.is_blocked(s, net.node_index["reader"])
        e = net.edge_index[("channel", "queue")]
        assert s[5 * e + CREDIT_FROM] == spec[0] - expected


CHAIN_SPECS = [(1, 1), (2, 1), (2, 2), (3, 1), (3, 2), (3, 3), (4, 3)]


@pytest.mark.parametrize("spec", CHAIN_SPECS)
@pytest.mark.parametrize("preset", ["rabbitmq-publish", "fanout"])
@pytest.mark.parametrize("all_check", [False, True])
def test_chains_and_fanouts_with_m_le_i_are_safe(preset, spec, all_check):
    """PROP-NO-DEADLOCK, PROP-CONSERVATION and every other property hold for chains and
    fan-outs with 1 <= M <= I."""
    _, result = check_graph(
        load_preset(preset),
        CheckOptions(credit=CreditSpec(*spec), publishes=5, all_check_blocked=all_check),
    )
    assert result.complete
    assert result.findings == {}
    assert set(result.holds) == {*STATE_PROPERTIES, NO_DEADLOCK}


@settings(max_examples=40, deadline=None)
@given(graph=process_graphs(max_nodes=4, specs=sane_specs, acyclic=True, allow_stalled=False))
def test_random_dags_with_m_le_i_are_safe(graph):
    """PROP-NO-DEADLOCK, PROP-NOTHING-LOST: any DAG without stalled processes and with
    1 <= M <= I on every edge is deadlock-free and loses nothing."""
    _, result = check_graph(graph, CheckOptions(max_states=300_000))
    assert result.complete
    assert result.findings == {}


@pytest.mark.parametrize("i", [1, 2, 3, 4])
@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_two_cycle_deadlocks_for_every_spec(i, m):
    """PROP-NO-DEADLOCK: A <-> B forwarding everything back deadlocks for every {I,M}
    within 20 publishes."""
    for publishes in range(1, 21):
        _, result = check_graph(
            load_preset("cycle2"), CheckOptions(credit=CreditSpec(i, m), publishes=publishes)
        )
        if NO_DEADLOCK in result.findings:
            return
    pytest.fail(f"no deadlock for {{{i},{m}}} within 20 publishes")


def test_two_cycle_all_check_shortest_counterexample_is_four_steps():
    """PROP-NO-DEADLOCK, EXP-SHORTEST: {1,1}, every process checks: 4 steps, terminal."""
    _, result = check_graph(
        load_preset("cycle2"),
        CheckOptions(credit=CreditSpec(1, 1), publishes=20, all_check_blocked=True),
    )
    deadlock = result.findings[NO_DEADLOCK]
    assert deadlock.length == 4 and deadlock.kind == "terminal"
    assert set(deadlock.processes) == {"A", "B"}
    net = CreditNetwork(load_preset("cycle2"))
    steps = [str(net.decode(action)) for action, _ in deadlock.path[1:]]
    assert steps == ["read(A)", "take(B<-A)", "bump(A<-B)", "read(A)"]


def test_m_greater_than_i_deadlocks_a_checking_source():
    """PROP-NO-DEADLOCK, CF-ACK: with I < M a checking sender is never granted again."""
    _, result = check_graph(
        load_preset("rabbitmq-publish"), CheckOptions(credit=CreditSpec(1, 2), publishes=3)
    )
    assert result.findings[NO_DEADLOCK].processes == ("reader",)
    assert result.findings[NO_DEADLOCK].length == 1


def test_disabled_credit_never_blocks():
    """CF-DISABLED: with {0,0} no process ever blocks; every message piles up in the
    stalled queue's mailbox (RabbitMQ's classic_queue_SUITE with flow disabled)."""
    system, result = check_graph(
        load_preset("stalled-queue"), CheckOptions(credit=CreditSpec(0, 0), publishes=6)
    )
    assert result.findings == {}
    net = system.network
    final = [s for i, s in enumerate(result.graph.states) if result.graph.is_terminal(i)]
    assert all(net.mailbox(s, net.node_index["queue"]) == 6 for s in final)
    assert all(system.blocked_mask(s) == 0 for s in result.graph.states)
