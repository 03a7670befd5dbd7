"""The compiled network (explorer fast path) agrees with the readable model exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.network_system import CheckedNetwork
from tests.strategies import process_graphs


@settings(max_examples=120, deadline=None)
@given(graph=process_graphs(max_nodes=4), bound=st.one_of(st.none(), st.integers(0, 3)))
def test_compiled_agrees_on_reachable_states(graph, bound):
    """NET-READ, NET-TAKE, NET-BUMP, EXP-SAFE, PROP-CONSERVATION: same successors in the
    same order, same first safe action, same violated properties, on every state
    reachable within a budget."""
    readable = CheckedNetwork(graph, mailbox_bound=bound)
    fast = CompiledNetwork(graph, mailbox_bound=bound)
    seen = {readable.initial()}
    frontier = [readable.initial()]
    while frontier and len(seen) < 3000:
        state = frontier.pop()
        expected = readable.successors(state)
        assert fast.successors(state) == expected
        safe = [pair for pair in expected if pair[0] in readable.safe_actions]
        assert fast.first_safe(state) == (safe[0] if safe else None)
        assert set(fast.violations(state)) == set(readable.violations(state))
        assert fast.blocked_mask(state) == readable.blocked_mask(state)
        for _, nxt in expected:
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)


@settings(max_examples=60, deadline=None)
@given(
    graph=process_graphs(max_nodes=4), bound=st.one_of(st.none(), st.integers(0, 3)), data=st.data()
)
def test_compiled_agrees_on_arbitrary_states(graph, bound, data):
    """PROP-CONSERVATION, PROP-IN-FLIGHT-BOUND, PROP-DEFERRED-BLOCKED, PROP-MAILBOX-BOUND,
    NET-BLOCKED on states no run reaches (every field arbitrary), where the properties
    fail: the compiled checks, constants folded, say what the readable ones say."""
    readable = CheckedNetwork(graph, mailbox_bound=bound)
    fast = CompiledNetwork(graph, mailbox_bound=bound)
    size = len(readable.initial())
    for _ in range(40):
        state = tuple(data.draw(st.lists(st.integers(-3, 4), min_size=size, max_size=size)))
        assert set(fast.violations(state)) == set(readable.violations(state))
        assert fast.blocked_mask(state) == readable.blocked_mask(state)
