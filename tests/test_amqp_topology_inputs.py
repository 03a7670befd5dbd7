"""AMQ-TOPOLOGY, AMQ-TOPOLOGY-LIMITS through the input layer: the model keeps pure
structures (model/amqp/topology.py parses nothing); a bad topology file is one line
naming the file and the place, exit 2, as NET-FILE's bad graph files are
(tests/test_graph_io.py, tests/test_inputs.py mirrored here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs import amqp_topologies
from creditflow.conformance.inputs.amqp_topologies import (
    AmqpTopologyError,
    load_amqp_topology,
    topology_from_document,
)
from creditflow.model.amqp import topology as model_topology

ROOT = Path(__file__).resolve().parents[1]


def ring() -> dict:
    return json.loads((ROOT / "spec/graphs/amqp/ring-one-held.json").read_text())


def test_the_model_keeps_pure_structures():
    """AMQ-TOPOLOGY: the checks of a document live in the input layer; the model's
    module holds the structures only (no parser, no error type of its own)."""
    for name in ("topology_from_dict", "TopologyError", "credit_policy", "window_policy"):
        assert not hasattr(model_topology, name), name
        assert hasattr(amqp_topologies, name), name
    assert "Mapping" not in (ROOT / "model/amqp/topology.py").read_text()


def _check(tmp_path: Path, text: str) -> tuple[int, str, Path]:
    path = tmp_path / "bad.json"
    path.write_text(text)
    result = CliRunner().invoke(main, ["check", str(path)])
    return result.exit_code, result.output.strip(), path


RAW = [
    # NET-FILE's own cases (tests/test_graph_io.py), as AMQP files
    ('{"graph": {"family": "amqp"}, "nodes": [', "not valid JSON"),
    ('{"graph": {"family": "amqp"}, "graph": {"family": "amqp"}}', "graph"),  # IN-DUPLICATE
    ('{"graph": {"family": "amqp", "initial": NaN}, "nodes": [], "edges": []}', "NaN"),
]


@pytest.mark.parametrize(("text", "problem"), RAW)
def test_unreadable_files_are_one_line_exit_2(tmp_path, text, problem):
    """IN-READ, IN-DUPLICATE, IN-FINITE on an AMQP file: one line, exit 2."""
    code, err, path = _check(tmp_path, text)
    assert code == 2 and err.count("\n") == 0 and str(path) in err and problem in err, err


MUTATIONS = [
    (lambda d: d.update(nodes={"a": 1}), "nodes and edges must be lists"),
    (lambda d: d["nodes"][0].pop("id"), "nodes[0].id: expected a string"),
    (lambda d: d["nodes"].__setitem__(1, 7), "nodes[1]: expected an object"),
    (lambda d: d["nodes"][1].update(kind="router"), "nodes[1] (sender-session).kind"),
    (lambda d: d["nodes"].append(dict(d["nodes"][0])), "duplicate id 'sender'"),
    (lambda d: d["edges"][0].update(target="nowhere"), "edges[0]: edge to an undeclared node"),
    (lambda d: d["edges"].__setitem__(0, "a->b"), "edges[0]: expected an object"),
    (lambda d: d["edges"].append({"source": "receiver", "target": "sender"}), "one chain"),
    (lambda d: d["nodes"][0].update(publishes=True), "nodes (sender).publishes"),
    (lambda d: d["nodes"][0].update(publishes=2.5), "nodes (sender).publishes"),
    (lambda d: d["graph"].update(initial=2**32), "graph.initial"),
    (lambda d: d["nodes"][3].update(grants="3"), "nodes (receiver).grants: expected a list"),
    (lambda d: d["nodes"][3].update(credit={"policy": "magic"}), "unknown credit policy"),
    # AMQ-TOPOLOGY-LIMITS (IN-LIMITS): what would hang the model is refused with its maximum
    (lambda d: d["nodes"][0].update(publishes=10**7), "nodes (sender).publishes"),
    (
        lambda d: d["nodes"][2].update(window={"policy": "ring", "slots": 2**32}),
        "nodes (receiver-session).window.slots",
    ),
    (
        lambda d: d["nodes"][3]["credit"].update(window=2**40, threshold=1),
        "nodes (receiver).credit.window",
    ),
    (lambda d: d["nodes"][3].update(grants=[2**33]), "nodes (receiver).grants[0]"),
]


@pytest.mark.parametrize(("mutate", "problem"), MUTATIONS)
def test_bad_topologies_are_one_line_naming_file_and_place(tmp_path, mutate, problem):
    """AMQ-TOPOLOGY, AMQ-TOPOLOGY-LIMITS: every bad document is one line naming the file
    and the place, exit 2 (the CLI), an :class:`AmqpTopologyError` (the input layer)."""
    doc = ring()
    mutate(doc)
    code, err, path = _check(tmp_path, json.dumps(doc))
    assert code == 2 and err.count("\n") == 0 and str(path) in err and problem in err, err
    with pytest.raises(AmqpTopologyError, match="bad.json"):
        load_amqp_topology(path)


def test_limits_name_their_maximum(tmp_path):
    """AMQ-TOPOLOGY-LIMITS: the line says the maximum and the rule."""
    doc = ring()
    doc["nodes"][0]["publishes"] = 10**7
    with pytest.raises(AmqpTopologyError) as exc:
        topology_from_document(doc, "mine.json")
    text = str(exc.value)
    assert "1000000" in text.replace(",", "") and "AMQ-TOPOLOGY-LIMITS" in text
    doc["nodes"][0]["publishes"] = 10**6  # the maximum itself is accepted
    assert topology_from_document(doc, "mine.json").supply == 10**6
    # every number but ``initial`` at most 2^31 − 1, the largest serial addend (AMQ-SERIAL)
    doc["nodes"][2]["window"] = {"policy": "never", "window": 2**31 - 1}
    assert topology_from_document(doc, "mine.json").receiver.window.window == 2**31 - 1
    doc["nodes"][2]["window"] = {"policy": "never", "window": 2**31}
    with pytest.raises(AmqpTopologyError, match="maximum 2147483647"):
        topology_from_document(doc, "mine.json")


def test_the_supply_limit_is_in_limits_own():
    """AMQ-TOPOLOGY-LIMITS: the largest supply is IN-LIMITS' ``MAX_PUBLISHES``."""
    from creditflow.model.network.graph import MAX_PUBLISHES

    assert amqp_topologies.MAX_SUPPLY == MAX_PUBLISHES
