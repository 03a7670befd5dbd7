"""TRACE-*: ITF values and documents, counterexample files, replay through the model."""

from __future__ import annotations

import json

import pytest

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.inputs.itf import (
    Record,
    TraceFormatError,
    decode,
    encode,
    option,
    read_document,
)
from creditflow.conformance.traces.network import (
    TraceReplayError,
    network_trace,
    replay_network_document,
    replay_network_trace,
    write_network_trace,
)
from creditflow.model.credit.spec import CreditSpec


def test_itf_values_roundtrip():
    """TRACE-VALUES: ints as #bigint, maps, tuples, sets, records and options."""
    value = {
        ("a", "b"): 3,
        "k": frozenset({"x", "y"}),
        "r": Record({"node": option("a"), "peer": option(None)}),
        "l": [1, -2],
    }
    encoded = encode(value)
    assert encoded["#map"][0] == [{"#tup": ["a", "b"]}, {"#bigint": "3"}]
    assert decode(json.loads(json.dumps(encoded))) == value
    assert decode(5) == 5  # plain JSON integers are accepted


def counterexample(preset="cycle2", **options):
    system, result = check_graph(load_preset(preset), CheckOptions(**options))
    return system, result.findings[NO_DEADLOCK]


def test_counterexample_document_and_replay(tmp_path):
    """TRACE-ITF, TRACE-NETWORK-VARS, TRACE-REPLAY: a written counterexample is a valid
    ITF document with the graph embedded, and replays through the model."""
    system, finding = counterexample(credit=CreditSpec(2, 1))
    path = write_network_trace(system, finding, tmp_path / "x" / "c.itf.json", source="cycle2")
    doc = read_document(path)
    assert doc["#meta"]["format"] == "ITF"
    assert doc["#meta"]["creditflow"]["property"] == NO_DEADLOCK
    assert doc["vars"][-2:] == ["mbt::actionTaken", "mbt::nondetPicks"]
    assert doc["states"][0]["mbt::actionTaken"] == "init"
    assert len(doc["states"]) == len(finding.path) + len(finding.continuation)
    if finding.loop_start is not None:
        assert doc["loop"] == finding.loop_start
    replayed = replay_network_trace(path)
    assert replayed.states[: len(finding.path)] == [s for _, s in finding.path]


def test_tampered_trace_is_rejected():
    """TRACE-REPLAY: a state that the model does not reproduce is named."""
    system, finding = counterexample(credit=CreditSpec(1, 1), all_check_blocked=True)
    doc = network_trace(system, finding, source="cycle2")
    doc["states"][2]["credit_from"]["#map"][0][1] = {"#bigint": "7"}
    with pytest.raises(TraceReplayError, match=r"states\[2\] credit_from"):
        replay_network_document(doc)
    doc = network_trace(system, finding, source="cycle2")
    doc["states"][1]["mbt::actionTaken"] = "bump"
    with pytest.raises(TraceReplayError, match=r"states\[1\]"):
        replay_network_document(doc)


def test_malformed_trace_files(tmp_path):
    """TRACE-ITF: structural errors name the file."""
    path = tmp_path / "t.itf.json"
    for content, message in [
        ("nope", "not valid JSON"),
        ('{"vars": ["x"], "states": []}', "non-empty"),
        ('{"vars": ["x"], "states": [{"y": 1}]}', "lacks x"),
        ('{"vars": [], "states": [{}], "loop": 3}', "'loop'"),
    ]:
        path.write_text(content)
        with pytest.raises(TraceFormatError, match=message):
            read_document(path)
