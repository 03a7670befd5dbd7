"""The checker's parts: the comparison (AD-COMPARE), responses (AD-RESPONSE, AD-ID),
ops (AD-OPS), delta debugging, and each search phase on its own finding a fault."""

from __future__ import annotations

import pytest

from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential.conform import ConformOptions, run_conform
from creditflow.conformance.differential.protocol import (
    Observation,
    Op,
    ProcessView,
    ProtocolError,
    compare,
    observation_from_response,
    op_from_request,
    parse_response,
)
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.model.credit.spec import CreditSpec


def obs(blocked=(), deferred=(), emitted=(), cf=None):
    return Observation(ProcessView(cf or {}, {}, tuple(blocked), tuple(deferred)), tuple(emitted))


def test_compare_blocked_as_multiset_and_grants_in_order():
    """AD-COMPARE: blocker order is free, multiplicity is not; deferred and emitted
    order is observable."""
    assert compare(obs(["B", "qq", "B"]), obs(["qq", "B", "B"])) == []
    assert [d.field for d in compare(obs(["B", "B"]), obs(["B"]))] == ["blocked"]
    assert [
        d.field
        for d in compare(obs(deferred=[("C", 1), ("B", 1)]), obs(deferred=[("B", 1), ("C", 1)]))
    ] == ["deferred"]
    assert [d.field for d in compare(obs(emitted=[("C", 1)]), obs())] == ["emitted"]
    assert [d.field for d in compare(obs(cf={"B": 0}), obs(cf={"B": -0}))] == []


def test_responses_are_validated():
    """AD-RESPONSE, AD-ID: shapes and ids are checked; extra members are ignored."""
    good = (
        '{"id":3,"ok":true,"extra":1,"state":{"credit_from":{"B":1},"credit_to":{},'
        '"blocked":[],"deferred":[{"to":"C","amount":2}]},"emitted":[]}'
    )
    got = observation_from_response(parse_response(good, 3))
    assert got.state.deferred == (("C", 2),) and got.state.credit_from == {"B": 1}
    with pytest.raises(ProtocolError, match="does not echo"):
        parse_response(good, 4)
    for bad in (
        '{"ok":true,"state":{"credit_from":{"B":true},"credit_to":{},"blocked":[],'
        '"deferred":[]},"emitted":[]}',
        '{"ok":true,"state":{"credit_from":{},"credit_to":{},"blocked":[1],'
        '"deferred":[]},"emitted":[]}',
        '{"ok":true,"state":{"credit_from":{},"credit_to":{},"blocked":[],'
        '"deferred":[]},"emitted":[{"to":"x"}]}',
    ):
        with pytest.raises(ProtocolError):
            observation_from_response(parse_response(bad))
    with pytest.raises(ProtocolError, match='"ok"'):
        parse_response('{"id":1}')


def test_ops_round_trip_through_requests():
    """AD-OPS: every op kind as a request line and back; bad requests are refused."""
    ops = [
        Op("send", "A", "B", spec=CreditSpec(1, 2)),
        Op("ack", "A", "B"),
        Op("bump", "A", "é", amount=-3),
        Op("block", "A", "qq"),
        Op("unblock", "A", "qq"),
        Op("peer_down", "A", "B"),
        Op("state", "A"),
    ]
    import json

    for i, op in enumerate(ops):
        req = json.loads(op.line(i))
        assert req["id"] == i
        assert op_from_request(req) == op
    for bad in (
        {"op": "send", "proc": "A"},
        {"op": "bump", "proc": "A", "peer": "B"},
        {"op": "x", "proc": "A"},
        {"op": "send", "proc": "A", "peer": "B", "spec": [1, "2"]},
    ):
        with pytest.raises(ValueError):
            op_from_request(bad)


def test_delta_debugging_finds_a_one_minimal_subsequence():
    """The failure needs 3 and 7 in order, then anything after them is cut."""

    def fails(seq):
        if 3 in seq and 7 in seq[seq.index(3) :]:
            return seq.index(7, seq.index(3)) + 1
        return None

    assert shrink_sequence(list(range(20)), fails) == [3, 7]
    with pytest.raises(ValueError):
        shrink_sequence([1, 2], fails)


@pytest.mark.parametrize(
    ("phase", "mutant"),
    [("network-runs", "negative-credit-clamped"), ("explorer-runs", "grants-not-deferred")],
)
def test_each_network_phase_finds_faults_alone(phase, mutant, tmp_path):
    """TRACE-PROJECTION: network runs (Hypothesis) and the explorer's runs (delta
    debugging) find a fault on their own, and shrink it to a short per-process trace."""
    result = run_conform(
        adapter_factory(f"mutant:{mutant}"),
        ConformOptions(seed=5, phases=(phase,), out_dir=tmp_path),
    )
    assert result.verdict == "divergence"
    assert result.found_by.startswith(phase)
    assert [p.name for p in result.phases] == [phase]
    assert result.trace is not None and len(result.trace.steps) <= 8
