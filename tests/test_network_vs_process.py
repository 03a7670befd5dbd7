"""NET-BLOCKED and the whole NET model against the per-process CF model.

Random runs of random networks are projected onto per-process credit_flow calls
(TRACE-PROJECTION: CF-SEND, CF-ACK, CF-BUMP with grant FIFOs kept by
``conformance/differential/projection.py``) and the two models must agree on every pair's credit,
counters, blockers (as multisets), deferred grants and grants in flight after every
step. This is what keeps the fast network model from drifting away from the readable
CF rules.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance.differential.projection import ProjectedProcesses
from creditflow.conformance.explore.encoding import CreditNetwork
from tests.strategies import process_graphs, with_tight_credit

graphs = with_tight_credit(process_graphs)


@settings(max_examples=300, deadline=None)
@given(graph=graphs, data=st.data())
def test_network_runs_agree_with_per_process_cf(graph, data):
    """NET-BLOCKED, NET-READ, NET-TAKE, NET-BUMP, NET-FORWARD, NET-DEBITS, NET-INIT
    agree with CF-SEND, CF-ACK, CF-BUMP, CF-DEFER, CF-FLUSH step by step."""
    net = CreditNetwork(graph)
    projected = ProjectedProcesses(net)
    state = net.initial()
    assert projected.disagreements(state) == []
    for _ in range(data.draw(st.integers(0, 60))):
        enabled = list(net.enabled(state))
        if not enabled:
            break
        action = data.draw(st.sampled_from(enabled))
        state = net.apply(state, action)
        projected.step(action)
        assert projected.disagreements(state) == []
