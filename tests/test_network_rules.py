"""The readable NET rules (model/network/rules.py) against the explorer's flat encoding
(conformance/explore/encoding.py): the consensus-specs split, cross-checked.

Random runs of random graphs go through both side by side; after every step the two
must agree on the state (as counts, NET-FIFO), on the enabled steps and their order
(NET-READ, NET-TAKE, NET-BUMP guards) and on every state property (PROP-*). Whole
explorations of small graphs must give the same state counts, verdicts and shortest
counterexample lengths (PROP-NO-DEADLOCK, EXP-SHORTEST).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import NetworkProperties
from creditflow.model.network import properties, rules
from creditflow.model.network.system import ReadableNetwork
from tests.strategies import process_graphs, with_tight_credit

graphs = with_tight_credit(process_graphs)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(graph=graphs, mailbox_bound=st.none() | st.integers(0, 3), data=st.data())
def test_readable_rules_and_flat_encoding_agree_step_by_step(graph, mailbox_bound, data):
    """NET-INIT, NET-READ, NET-TAKE, NET-BUMP, NET-FORWARD, NET-DEBITS, NET-SINK,
    NET-BLOCKED, PROP-CONSERVATION, PROP-DEFERRED-BLOCKED, PROP-IN-FLIGHT-BOUND,
    PROP-MAILBOX-BOUND, PROP-NOTHING-LOST: 500 random runs, every step compared."""
    net = CreditNetwork(graph)
    flat_properties = NetworkProperties(net, mailbox_bound)
    flat, readable = net.initial(), rules.initial_state(graph)
    for _ in range(data.draw(st.integers(0, 40), label="steps")):
        assert net.counts(flat) == rules.counts(graph, readable)
        assert set(flat_properties.violations(flat)) == set(
            properties.violations(graph, readable, mailbox_bound)
        )
        assert net.pending_work(flat) == rules.pending_work(graph, readable)
        flat_steps = [net.decode(a) for a in net.enabled(flat)]
        assert flat_steps == rules.enabled_steps(graph, readable)
        if not flat_steps:
            break
        i = data.draw(st.integers(0, len(flat_steps) - 1), label="step")
        flat = net.apply(flat, net.encode(flat_steps[i]))
        readable = rules.apply(graph, readable, flat_steps[i])
    assert net.counts(flat) == rules.counts(graph, readable)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(graph=process_graphs(max_nodes=3, max_publishes=2))
def test_readable_rules_and_flat_encoding_give_the_same_verdicts(graph):
    """PROP-NO-DEADLOCK, EXP-BFS, EXP-SHORTEST: exploring the specification itself and the
    optimised encoding (reductions off) finds the same number of states, the same
    violated properties and counterexamples of the same length."""
    fast = explore(CheckedNetwork(graph), reduce=False, max_states=20_000)
    spec = explore(ReadableNetwork(graph), reduce=False, max_states=20_000)
    assert fast.complete == spec.complete
    assert fast.n_states == spec.n_states
    assert {p: f.length for p, f in fast.findings.items()} == {
        p: f.length for p, f in spec.findings.items()
    }
    assert {p: f.kind for p, f in fast.findings.items()} == {
        p: f.kind for p, f in spec.findings.items()
    }
