"""Faults (issue 19): processes that die, the DOWN that follows, CF-PEER-DOWN or not.

The readable NET-CRASH / NET-DOWN rules (model/network/rules.py) against the flat
encoding (conformance/explore/encoding.py) on random fault graphs, as
tests/test_network_rules.py does for the fault-free rules; then the properties with
faults (PROP-FAULT-*, PROP-RECOVERY) on small graphs whose verdicts are known.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import MessageMoves, NetworkProperties
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network import properties, rules
from creditflow.model.network.system import ReadableNetwork
from tests.strategies import fault_graphs

graphs = st.one_of(
    fault_graphs(max_nodes=4),
    fault_graphs(
        max_nodes=4,
        specs=st.builds(CreditSpec, st.integers(1, 2), st.integers(1, 2)),
        max_publishes=6,
        allow_stalled=False,
    ),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(graph=graphs, data=st.data())
def test_readable_fault_rules_and_flat_encoding_agree_step_by_step(graph, data):
    """NET-CRASH, NET-DEAD, NET-DOWN, NET-LOST-TO-CRASH, NET-FAULT-BOUND,
    PROP-FAULT-LIVE-PAIRS, PROP-FAULT-LOST: random runs of random fault graphs, every
    step compared (state counts, enabled steps in order, every state property, and the
    step form of nothing-lost agreeing with the count form)."""
    net = CreditNetwork(graph)
    flat_properties = NetworkProperties(net)
    moves = MessageMoves(net)
    flat, readable = net.initial(), rules.initial_state(graph)
    for _ in range(data.draw(st.integers(0, 40), label="steps")):
        assert net.counts(flat) == rules.counts(graph, readable)
        readable_found = properties.violations(graph, readable)
        assert set(flat_properties.violations(flat)) == set(readable_found)
        assert properties.NOTHING_LOST not in readable_found
        assert net.pending_work(flat) == rules.pending_work(graph, readable)
        assert net.quiet(flat) == rules.quiet(graph, readable)
        flat_steps = [net.decode(a) for a in net.enabled(flat)]
        assert flat_steps == rules.enabled_steps(graph, readable)
        if not flat_steps:
            break
        i = data.draw(st.integers(0, len(flat_steps) - 1), label="step")
        before = flat
        flat = net.apply(flat, net.encode(flat_steps[i]))
        assert moves.violations(before, net.encode(flat_steps[i]), flat) == ()
        readable = rules.apply(graph, readable, flat_steps[i])
    assert net.counts(flat) == rules.counts(graph, readable)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(graph=fault_graphs(max_nodes=3, max_publishes=2, acyclic=True))
def test_readable_fault_rules_and_flat_encoding_give_the_same_verdicts(graph):
    """PROP-FAULT-BLOCKED, EXP-FAULTS: exploring the readable fault rules and the flat
    encoding gives the same states, violated properties and shortest lengths (acyclic
    graphs: with the consumed and lost counters every one is finite).

    The readable states keep CF's ``blocked_at``, a history NET never reads (it has no
    clock); once CF-PEER-DOWN has erased a pair, two runs may reach the same NET state
    with different ``blocked_at``, so the readable states are compared by their counts."""
    fast = explore(CheckedNetwork(graph), reduce=False, max_states=20_000)
    spec = explore(ReadableNetwork(graph), reduce=False, max_states=20_000)
    assert fast.complete == spec.complete
    assert fast.n_states == len({repr(rules.counts(graph, s)) for s in spec.graph.states})
    assert {p: (f.length, f.kind) for p, f in fast.findings.items()} == {
        p: (f.length, f.kind) for p, f in spec.findings.items()
    }
