"""Per-process traces (TRACE-PROCESS-DOC, TRACE-PROCESS-VARS, TRACE-PROCESS-REPLAY) and
network traces projected to per-process ops (TRACE-PROJECTION)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from creditflow.adapters.reference.credit_flow import ReferenceAdapter
from creditflow.conformance.cli import main
from creditflow.conformance.differential.projection import step_ops
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import check_trace, model_trace
from creditflow.conformance.differential.traces import (
    PROCESS_VARS,
    load_trace,
    write_process_trace,
)
from creditflow.conformance.explore.encoding import Step
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.inputs.itf import TraceFormatError, read_document
from creditflow.model.credit.spec import CreditSpec

OPS = (
    Op("send", "A", "B"),
    Op("send", "A", "B", spec=CreditSpec(1, 3)),
    Op("ack", "A", "C"),
    Op("bump", "A", "B", amount=-1),
    Op("block", "A", "qq"),
    Op("peer_down", "A", "B"),
    Op("unblock", "A", "qq"),
    Op("state", "Z"),
)


def test_round_trip(tmp_path):
    """TRACE-PROCESS-DOC, TRACE-PROCESS-VARS: ops, arguments, overrides and answers
    survive writing and reading; state 0 is the reset with its spec."""
    trace = model_trace(CreditSpec(2, 1), OPS)
    path = write_process_trace(trace, tmp_path / "t.itf.json", "a test", "tests")
    doc = read_document(path)
    assert doc["vars"] == PROCESS_VARS
    assert doc["states"][0]["mbt::actionTaken"] == "init"
    # TRACE-OPTIONS: the picks an op made, plain; those it did not make left out.
    assert doc["states"][2]["mbt::nondetPicks"]["spec"] == {
        "#tup": [{"#bigint": "1"}, {"#bigint": "3"}]
    }
    assert "spec" not in doc["states"][1]["mbt::nondetPicks"]
    assert doc["states"][4]["mbt::nondetPicks"]["amount"] == {"#bigint": "-1"}
    loaded = load_trace(path)
    assert loaded.kind == "process" and loaded.name == "t"
    assert loaded.trace == trace
    assert trace.steps[-2][1].emitted == (("C", 1),)  # the flush at the last unblock


def test_edited_trace_is_rejected(tmp_path):
    """TRACE-PROCESS-REPLAY: the model must reproduce every recorded answer."""
    path = write_process_trace(
        model_trace(CreditSpec(2, 1), OPS), tmp_path / "t.itf.json", "a test", "tests"
    )
    doc = json.loads(path.read_text())
    doc["states"][3]["state"]["deferred"] = []
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError, match=r"states\[3\] ack\(A, C\).*deferred"):
        load_trace(path)
    doc["states"][3]["mbt::actionTaken"] = "frob"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError, match="unknown op 'frob'"):
        load_trace(path)


def test_projection_of_each_step_kind():
    """TRACE-PROJECTION: read forwards, take acks then forwards (k times each with
    sends_per_message = k), bump carries the pair's MoreCreditAfter."""
    graph = load_preset("rabbitmq-publish").with_credit(CreditSpec(3, 2))
    names = graph.node_names
    reader, channel = names[0], graph.successors(names[0])[0]
    assert step_ops(graph, Step("read", reader)) == [
        Op("send", reader, channel, spec=CreditSpec(3, 2))
    ]
    take = step_ops(graph, Step("take", channel, reader))
    assert take[0] == Op("ack", channel, reader, spec=CreditSpec(3, 2))
    assert [op.kind for op in take[1:]] == ["send"] * len(graph.successors(channel))
    assert step_ops(graph, Step("bump", reader, channel)) == [Op("bump", reader, channel, amount=2)]


def test_network_trace_from_check_replays_as_per_process_ops(tmp_path):
    """TRACE-PROJECTION: `creditflow check` writes a network trace; `replay` accepts it,
    and the projected per-process answers reproduce the stalled-queue backlog."""
    runner = CliRunner()
    out = tmp_path / "sq.itf.json"
    result = runner.invoke(
        main,
        ["check", "stalled-queue", "--credit", "2,1", "--graph-supply", "--trace-out", str(out)],
    )
    assert result.exit_code == 10 and out.is_file()
    loaded = load_trace(out)
    assert loaded.kind == "network"
    channel_sends = [
        o for op, o in loaded.trace.steps if op.proc == "channel" and op.kind == "send"
    ]
    assert channel_sends[-1].state.credit_from == {"queue": -2}
    assert len(channel_sends[-1].state.deferred) == 2
    divergence, _ = check_trace(ReferenceAdapter(), loaded.trace.spec, loaded.trace.ops)
    assert divergence is None
    result = runner.invoke(main, ["replay", str(out), "--adapter", "rabbitmq"])
    assert result.exit_code == 0, result.output
