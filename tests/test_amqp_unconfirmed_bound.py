"""PROP-AMQ-BOUNDS, AMQ-RMQ-LINK-CREDIT: the exact bound on a RabbitMQ 4 inbound link's
unconfirmed deliveries. ``grant_link_credit/3`` grants ``max_link_credit`` whenever the
credit is at most half and fewer than ``max_link_credit`` are unconfirmed, so a grant
can find ``max_link_credit − 1`` unconfirmed and let ``max_link_credit`` more in:
``2 · max_link_credit − 1`` (339 for 170), not ``max_link_credit · 1.5`` (255).

The maximum is measured here by a breadth-first walk of the model's successors written
in the test (it uses no property predicate), so the spec's bound is pinned from both
sides: the model reaches it, never passes it, and a grant rule off by one misses it."""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from pathlib import Path

import pytest

from creditflow.conformance.families.amqp.checking import search
from creditflow.conformance.families.amqp.directed import ORDERS, directed_runs
from creditflow.conformance.inputs.amqp_topologies import load_amqp_preset, topology_from_dict
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.system import PublishState
from creditflow.model.amqp.topology import Topology

ROOT = Path(__file__).resolve().parents[1]


def publish_topology(mlc: int, publishes: int) -> Topology:
    """rabbitmq4-publish with ``max_link_credit = mlc`` and a session window and soft
    limit large enough not to be what stops the sender."""
    d = json.loads((ROOT / "spec" / "graphs" / "amqp" / "rabbitmq4-publish.json").read_text())
    n = d["nodes"]
    n[0]["publishes"] = publishes
    n[2]["window"]["max_incoming_window"] = 4 * mlc
    n[2]["credit"]["max_link_credit"] = mlc
    n[3]["soft_limit"] = 4 * mlc
    return topology_from_dict(d)


def most_unconfirmed(t: Topology) -> int:
    """The largest ``len(broker.unconfirmed)`` over every reachable state of ``t``."""
    start = system.initial_state(t)
    seen = {start}
    frontier = deque([start])
    most = 0
    while frontier:
        s = frontier.popleft()
        assert isinstance(s, PublishState)
        most = max(most, len(s.broker.unconfirmed))
        for _, nxt in system.successors(t, s):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return most


@pytest.mark.parametrize("mlc", [1, 2, 3, 4])
def test_the_model_reaches_exactly_the_spec_bound(mlc):
    """PROP-AMQ-BOUNDS: with supply enough, the most unconfirmed the model reaches is
    the spec's ``2 · max_link_credit − 1``, and the search finds no violation there."""
    t = publish_topology(mlc, publishes=3 * mlc + 1)
    assert properties.max_unconfirmed(mlc) == 2 * mlc - 1
    assert most_unconfirmed(t) == properties.max_unconfirmed(mlc)
    result = search(t)
    assert result.complete and result.violation is None


@pytest.mark.parametrize("shift", [-1, +1])
def test_a_grant_rule_off_by_one_misses_the_bound(monkeypatch, shift):
    """AMQ-RMQ-LINK-CREDIT: ``unconfirmed < max_link_credit ± 1`` moves the maximum
    reached off the spec's bound; one more lets the search report PROP-AMQ-BOUNDS."""
    mlc = 3
    t = publish_topology(mlc, publishes=3 * mlc + 1)
    monkeypatch.setattr(
        system,
        "broker_may_grant",
        lambda b, c: b.link.credit <= c // 2 and len(b.unconfirmed) < c + shift,
    )
    assert most_unconfirmed(t) == properties.max_unconfirmed(mlc) + shift
    if shift > 0:
        result = search(t)
        assert result.violation is not None and result.violation.prop == "PROP-AMQ-BOUNDS"


def test_rabbitmq4_defaults_reach_339_and_hold_it():
    """PROP-AMQ-BOUNDS at RabbitMQ 4's own numbers (``max_link_credit`` 170, window 400,
    soft limit 32): with 500 publishes the directed runs (AMQ-DIRECTED-RUN) meet no
    violation (they passed the old 255 bound), and the run that sends first reaches
    339 unconfirmed, the spec's bound."""
    t = dataclasses.replace(load_amqp_preset("rabbitmq4-publish"), supply=500)
    assert directed_runs(t).witness is None
    rank = {a: i for i, a in enumerate(ORDERS[2])}
    s = system.initial_state(t)
    most = 0
    while succ := system.successors(t, s):
        _, s = min(succ, key=lambda p: rank.get(p[0], len(rank)))
        assert isinstance(s, PublishState)
        most = max(most, len(s.broker.unconfirmed))
    assert most == properties.max_unconfirmed(170) == 339
