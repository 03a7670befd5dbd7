"""NET-BLOCKED and the whole NET model against the per-process CF model.

Random runs of random networks are projected onto per-process credit_flow calls
(CF-SEND, CF-ACK, CF-BUMP with grant FIFOs kept by the test) and the two models must
agree on every pair's credit, counters, blockers (as multisets), deferred grants and
grants in flight after every step. This is what keeps the fast network model from
drifting away from the readable CF rules.
"""

from __future__ import annotations

from collections import Counter, deque

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.model import credit_flow as cf
from creditflow.model.credit_spec import CreditSpec
from creditflow.model.network import (
    ACTION_SHIFT,
    BUMP,
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    READ,
    TAKE,
    CreditNetwork,
)
from tests.strategies import process_graphs


class ProjectedProcesses:
    """Every process as a CF ProcessCredit, plus the grant FIFOs between them."""

    def __init__(self, net: CreditNetwork) -> None:
        self.net = net
        self.graph = net.graph
        self.procs = {n: cf.INITIAL for n in net.graph.node_names}
        self.grants: dict[tuple[str, str], deque[int]] = {}

    def _emit(self, sender: str, emitted: tuple) -> None:
        for to, amount in emitted:
            self.grants.setdefault((sender, to), deque()).append(amount)

    def forward(self, node: str) -> None:
        for e in self.graph.edges:
            if e.sender == node:
                for _ in range(e.sends_per_message):
                    self.procs[node] = cf.send(self.procs[node], e.receiver, e.credit)

    def step(self, action: int) -> None:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        names = self.graph.node_names
        if kind == READ:
            self.forward(names[index])
            return
        edge = self.graph.edges[index]
        if kind == TAKE:
            receiver = edge.receiver
            for _ in range(edge.sends_per_message):
                self.procs[receiver], out = cf.ack(self.procs[receiver], edge.sender, edge.credit)
                self._emit(receiver, out)
            self.forward(receiver)
        else:
            assert kind == BUMP
            amount = self.grants[(edge.receiver, edge.sender)].popleft()
            self.procs[edge.sender], out = cf.handle_bump(
                self.procs[edge.sender], edge.receiver, amount
            )
            self._emit(edge.sender, out)

    def assert_agrees(self, state: tuple) -> None:
        net = self.net
        for i, e in enumerate(self.graph.edges):
            s, r = e.sender, e.receiver
            f = state[5 * i : 5 * i + 5]
            assert self.procs[s].credit_from.get(r, e.credit.initial) == f[CREDIT_FROM]
            assert self.procs[r].credit_to.get(s, e.credit.more_after) == f[CREDIT_TO]
            deferred = [a for to, a in self.procs[r].deferred if to == s]
            assert len(deferred) == f[DEFERRED]
            assert len(self.grants.get((r, s), ())) == f[BUMPS]
            assert f[DATA] >= 0
        for n, name in enumerate(self.graph.node_names):
            blockers = Counter(self.graph.node_names[r] for r in net.blockers(state, n))
            assert Counter(self.procs[name].blocked) == blockers, name


graphs = st.one_of(
    process_graphs(max_nodes=4),
    # small credits and more publishes: blocking on several peers at once is common
    process_graphs(
        max_nodes=4,
        specs=st.builds(CreditSpec, st.integers(1, 2), st.integers(1, 2)),
        max_publishes=6,
        allow_stalled=False,
    ),
)


@settings(max_examples=300, deadline=None)
@given(graph=graphs, data=st.data())
def test_network_runs_agree_with_per_process_cf(graph, data):
    """NET-BLOCKED, NET-READ, NET-TAKE, NET-BUMP, NET-FORWARD, NET-DEBITS, NET-INIT
    agree with CF-SEND, CF-ACK, CF-BUMP, CF-DEFER, CF-FLUSH step by step."""
    net = CreditNetwork(graph)
    projected = ProjectedProcesses(net)
    state = net.initial()
    projected.assert_agrees(state)
    for _ in range(data.draw(st.integers(0, 60))):
        enabled = list(net.enabled(state))
        if not enabled:
            break
        action = data.draw(st.sampled_from(enabled))
        state = net.apply(state, action)
        projected.step(action)
        projected.assert_agrees(state)
