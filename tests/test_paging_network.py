"""PG-NET, PG-NET-CHAIN: paging inside reader -> channel -> queue -> msg_store. A slow
msg_store throttles paging and, through deferred grants, the publisher; a suspended one
blocks the publisher for good."""

from __future__ import annotations

import pytest

from creditflow.conformance.explore.explorer import explore
from creditflow.model.paging.chain import (
    CHAIN_BOUNDS,
    PagingNetwork,
    chain_witness,
    is_chain_throttled,
)


@pytest.fixture(scope="module")
def explored():
    system = PagingNetwork(CHAIN_BOUNDS)
    return system, explore(system, reduce=False)


def test_chain_holds_every_property_and_never_deadlocks(explored):
    """PG-NET: credit is conserved on both hops (PROP-CONSERVATION), the queue keeps
    every PROP-PG property, and with a live msg_store nothing deadlocks."""
    system, result = explored
    assert result.complete and not result.findings
    assert set(result.property_ids) >= {"PROP-CONSERVATION", "PROP-PG-CREDIT", "PROP-NO-DEADLOCK"}


def test_shortest_run_to_a_throttled_publisher(explored):
    """PG-NET-CHAIN: the shortest run to a state where the msg_store blocks the queue, the
    queue withholds the channel's grant, the channel the reader's, and the reader is
    blocked with publishes left."""
    system, result = explored
    run = chain_witness(system, result)
    assert run is not None
    end = run[-1][1]
    assert is_chain_throttled(end)
    assert end.queue.credit.blocked and end.channel.blocked and end.reader.blocked
    assert end.queue.stores[1].pending >= 1  # paging writes wait at the msg_store
    steps = [system.describe(a) for a, _ in run[1:]]
    assert steps[-1] == "take(queue<-channel)" and steps.count("read") == 3
    # and the chain drains: every reachable terminal state has read everything
    terminals = [s for i, s in enumerate(result.graph.states) if result.graph.is_terminal(i)]
    assert terminals and all(s.left == 0 and not s.reader.blocked for s in terminals)


def test_suspended_msg_store_blocks_the_publisher_forever():
    """PG-NET with NET-STALLED msg_store: the queue is blocked forever with its writes
    waiting, and runs exist where the reader is blocked for good with publishes left."""
    system = PagingNetwork(CHAIN_BOUNDS._replace(store_stalled=True))
    result = explore(system)
    finding = result.findings["PROP-NO-DEADLOCK"]
    assert finding.kind == "blocked-forever" and "queue" in finding.processes
    terminals = [s for i, s in enumerate(result.graph.states) if result.graph.is_terminal(i)]
    assert terminals
    assert all(s.queue.credit.blocked and s.queue.stores[1].pending for s in terminals)
    assert any(s.left > 0 and s.reader.blocked and s.channel.blocked for s in terminals)


def test_without_paging_the_chain_is_not_throttled():
    """With target infinity and transient messages nothing is written, so the msg_store
    never blocks the queue and the chain never throttles."""
    system = PagingNetwork(CHAIN_BOUNDS._replace(duration=None))
    result = explore(system, reduce=False)
    assert result.complete and not result.findings
    assert chain_witness(system, result) is None
    assert not any(s.queue.credit.blocked for s in result.graph.states)


def test_render_and_describe():
    system = PagingNetwork(CHAIN_BOUNDS._replace(consumer=True))
    first = system.initial()
    assert first.queue.target == 0
    acts = [system.describe(a) for a in system.enabled(first)]
    assert acts == ["read"]
    vars_ = system.render(first)
    assert vars_["publishes_left"] == 5 and vars_["blocked"] == frozenset()
    nxt = system.step(first, system.enabled(first)[0])
    assert system.render(nxt)["in_flight"] == (1, 0)
