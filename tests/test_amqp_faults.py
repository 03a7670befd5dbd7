"""AMQP faults (AMQ-FAULT, AMQ-FAULT-LEADER-CHANGE, PROP-AMQ-RESEND; issue 28 point 2):
a quorum-queue leader change that re-sends an applied credit request. The fault fields
come through the input layer (bad entries: one line naming the file and the place, exit
2); the model holds with the fault; a queue that reads credit as an increment is caught
by PROP-AMQ-RESEND right after the leader change."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.checking import search
from creditflow.conformance.inputs.amqp_topologies import (
    AmqpTopologyError,
    read_amqp_file,
    read_amqp_preset,
    topology_from_document,
)
from creditflow.model.amqp import queue, system
from creditflow.model.amqp.frames import CreditReply, CreditRequest
from creditflow.model.amqp.topology import Topology


def consume_document(leader_changes: int, max_queue_credit: int = 2, window: int = 4) -> dict:
    """RabbitMQ 4's consume path at small sizes: 4 ready messages, a relay of
    ``max_queue_credit``, a client window of ``window`` renewed at half, no drain."""
    doc = copy.deepcopy(read_amqp_preset("rabbitmq4-consume").document)
    for n in doc["nodes"]:
        if n["kind"] == "queue":
            n.update(ready=4, leader_changes=leader_changes)
        elif n["kind"] == "relay":
            n["max_queue_credit"] = max_queue_credit
        elif n.get("role") == "receiver":
            n.update(credit={"policy": "window", "window": window, "threshold": window // 2})
            n["drains"] = 0
    return doc


def consume(leader_changes: int, **sizes: int) -> Topology:
    return topology_from_document(consume_document(leader_changes, **sizes), "leader")


def _delta_on_credit(c, q, req):
    """A broken queue: the credit of a request is added to what the consumer has (an
    increment), not derived from the request's absolute delivery-count and credit."""
    c = c._replace(credit=c.credit + req.credit, drain=req.drain)
    c, q, out = queue.checkout(c, q)
    return c, q, (*out, CreditReply(c.delivery_count, c.credit, q.ready, req.drain))


def test_a_leader_change_applies_a_credit_request_twice():
    """AMQ-FAULT-LEADER-CHANGE: the action puts a copy of the applied request on the wire
    to the queue; the queue answers it with a second credit reply."""
    t = consume(1)
    s = system.initial_state(t)
    assert "leader_change" not in system.enabled(t, s)
    s = system.step(t, s, "take_back")  # the client's FLOW reaches the relay
    s = system.step(t, s, "queue")  # the queue applies the credit request
    assert isinstance(s, system.ConsumeState) and isinstance(s.applied, CreditRequest)
    assert "leader_change" in system.enabled(t, s)
    resent = system.step(t, s, "leader_change")
    assert isinstance(resent, system.ConsumeState)
    assert resent.s2q == (*s.s2q, s.applied) and resent.leader_changes == 0
    after = system.step(t, resent, "queue")
    assert sum(isinstance(f, CreditReply) for f in after.pending) == 2
    assert "leader_change" not in system.enabled(t, after)  # none left


@pytest.mark.parametrize(("changes", "window"), [(1, 4), (2, 4), (1, 2)])
def test_the_consume_path_holds_with_leader_changes(changes, window):
    """AMQ-FAULT-LEADER-CHANGE, PROP-AMQ-RESEND, PROP-AMQ-CONSERVATION, PROP-AMQ-NO-STALL:
    with re-sent credit requests nothing is lost, nothing stalls and every property holds
    for the supply (a complete search that takes the fault)."""
    t = consume(changes, window=window)
    result = search(t, 400_000)
    assert result.complete and result.violation is None
    without = search(consume(0, window=window), 400_000)
    assert without.complete and without.states < result.states  # the fault adds states


def test_a_queue_that_adds_credit_is_caught_after_one_leader_change(monkeypatch):
    """PROP-AMQ-RESEND fails on a broken model: a queue that adds a request's credit to
    the consumer's delivers it twice when a leader change re-sends the request; the
    shortest witness ends right after the second application."""
    monkeypatch.setattr(queue, "on_credit", _delta_on_credit)
    result = search(consume(1), 400_000)
    assert result.violation is not None and result.violation.prop == "PROP-AMQ-RESEND"
    assert result.violation.steps == ("take_back", "queue", "leader_change", "queue")


def test_without_the_fault_the_broken_queue_is_not_a_resend_finding(monkeypatch):
    """PROP-AMQ-RESEND is about the fault: with no leader change the same broken queue
    is caught later, by another property (PROP-AMQ-AGREE), never by PROP-AMQ-RESEND."""
    monkeypatch.setattr(queue, "on_credit", _delta_on_credit)
    result = search(consume(0), 400_000)
    assert result.violation is not None and result.violation.prop != "PROP-AMQ-RESEND"


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "faulty.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("value", [-1, "two", True, 1.5])
def test_a_bad_leader_changes_entry_is_one_line_exit_2(tmp_path, value):
    """AMQ-FAULT-LEADER-CHANGE, AMQ-TOPOLOGY: a bad fault entry is one line naming the file
    and the place, exit 2 (the input layer)."""
    doc = consume_document(0)
    for n in doc["nodes"]:
        if n["kind"] == "queue":
            n["leader_changes"] = value
    path = _write(tmp_path, doc)
    with pytest.raises(AmqpTopologyError) as err:
        read_amqp_file(path)
    assert str(path) in str(err.value) and "nodes (qq).leader_changes" in str(err.value)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "leader_changes" in lines[0] and str(path) in lines[0]


def test_leader_changes_on_a_publish_queue_is_refused(tmp_path):
    """AMQ-FAULT-LEADER-CHANGE: the publish shape's queue takes no credit requests."""
    doc = copy.deepcopy(read_amqp_preset("rabbitmq4-publish").document)
    for n in doc["nodes"]:
        if n["kind"] == "queue":
            n["leader_changes"] = 1
    path = _write(tmp_path, doc)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "nodes (qq).leader_changes: only a consume shape's queue" in result.output


def test_check_answers_a_topology_with_leader_changes(tmp_path):
    """AMQ-FAULT: `creditflow check` on a topology with the fault: complete for the
    supply given, exit 0; PROP-AMQ-RESEND among the properties held."""
    path = _write(tmp_path, consume_document(1))
    result = CliRunner().invoke(main, ["check", str(path), "--publishes", "4", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["complete"] and doc["properties"]["PROP-AMQ-RESEND"] is True
