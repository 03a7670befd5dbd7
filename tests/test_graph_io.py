"""NET-FILE: graph files and presets; bad files give one-line errors naming the file."""

from __future__ import annotations

import json
import subprocess

import pytest

from creditflow.conformance.inputs.graphs import (
    GraphFileError,
    graph_to_node_link,
    load_graph,
    load_graph_file,
    load_preset,
    preset_names,
)
from creditflow.model.credit.spec import CreditSpec


def test_presets_are_all_valid():
    """NET-FILE, NET-GRAPH: every shipped preset loads."""
    names = preset_names()
    assert {"rabbitmq-publish", "fanout", "cycle2", "cycle3", "stalled-queue"} <= set(names)
    publish = load_preset("rabbitmq-publish")
    assert [e.credit for e in publish.edges] == [
        CreditSpec(400, 200),
        CreditSpec(400, 200),
        CreditSpec(4000, 800),
    ]
    assert publish.sources[0].name == "reader" and publish.sources[0].checks_blocked
    fanout = load_preset("fanout")
    assert set(fanout.successors("channel")) == {"queue1", "queue2"}
    assert fanout.predecessors("store") == ("queue1", "queue2")


def test_node_link_roundtrip_and_links_key(tmp_path):
    """NET-FILE: node-link JSON with 'edges' or 'links' reads back the same graph."""
    graph = load_preset("fanout")
    doc = graph_to_node_link(graph)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    assert load_graph_file(path) == graph
    doc["links"] = doc.pop("edges")
    path.write_text(json.dumps(doc))
    assert load_graph(str(path)) == graph


def test_graphml(tmp_path):
    """NET-FILE: GraphML with credit as two integer attributes or an 'I,M' string."""
    path = tmp_path / "g.graphml"
    path.write_text(
        """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="src" for="node" attr.name="source" attr.type="boolean"/>
  <key id="pub" for="node" attr.name="publishes" attr.type="int"/>
  <key id="ic" for="edge" attr.name="initial_credit" attr.type="int"/>
  <key id="mc" for="edge" attr.name="more_credit_after" attr.type="int"/>
  <key id="cr" for="edge" attr.name="credit" attr.type="string"/>
  <graph edgedefault="directed">
    <node id="r"><data key="src">true</data><data key="pub">4</data></node>
    <node id="c"/><node id="q"/>
    <edge source="r" target="c"><data key="ic">2</data><data key="mc">1</data></edge>
    <edge source="c" target="q"><data key="cr">3,2</data></edge>
  </graph>
</graphml>"""
    )
    graph = load_graph_file(path)
    assert [e.credit for e in graph.edges] == [CreditSpec(2, 1), CreditSpec(3, 2)]
    assert graph.sources[0].publishes == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "node-link JSON object"),
        ('{"nodes": [{"name": "a"}]}', "nodes[0].id: missing"),
        (
            '{"nodes": [{"id": "a", "source": true}], "edges": [{"source": "a"}]}',
            "edges[0].target: missing",
        ),
        (
            '{"nodes": [{"id": "a", "source": true}], "edges": [{"source": "a", "target": "b"}]}',
            "is not a node id",
        ),
        (
            '{"nodes": [{"id": "a", "source": true}, {"id": "b"}],'
            ' "edges": [{"source": "a", "target": "b", "credit": [1, "x"]}]}',
            "must be an integer",
        ),
        ('{"directed": false, "nodes": [{"id": "a", "source": true}]}', "must be directed"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path, content, message):
    """NET-FILE: one line, naming the file and the problem."""
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(GraphFileError) as info:
        load_graph_file(path)
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_missing_file_and_unknown_preset():
    """NET-FILE: a path that does not exist, or an unknown preset name."""
    with pytest.raises(GraphFileError, match="no such file"):
        load_graph("does/not/exist.json")
    with pytest.raises(GraphFileError, match="presets: "):
        load_graph("no-such-preset")


def test_dot_through_graphviz(tmp_path):
    """NET-FILE: DOT files, read by Graphviz itself; presentation attributes ignored."""
    path = tmp_path / "g.dot"
    path.write_text(
        'digraph publish { credit="2,1";\n'
        "  reader [source=true, publishes=4, shape=box];\n"
        "  channel; queue [stalled=true, color=grey];\n"
        '  reader -> channel [credit="3,1", penwidth=2];\n'
        "  channel -> queue;\n}\n"
    )
    graph = load_graph_file(path)
    assert graph.name == "publish"
    assert [e.credit for e in graph.edges] == [CreditSpec(3, 1), CreditSpec(2, 1)]
    assert graph.node("queue").stalled and graph.sources[0].publishes == 4
    bad = tmp_path / "bad.dot"
    bad.write_text("digraph { a -> }")
    with pytest.raises(GraphFileError, match="not valid DOT"):
        load_graph_file(bad)
    twice = tmp_path / "twice.dot"
    twice.write_text('digraph { a [source=true]; a -> b [credit="1,1"]; a -> b; }')
    with pytest.raises(GraphFileError, match="appears twice"):
        load_graph_file(twice)


def _dot_graph(tmp_path, body: str):
    path = tmp_path / "g.dot"
    path.write_text('digraph g { credit="2,1"; a [source=true]; ' + body + " }")
    return load_graph_file(path)


@pytest.mark.parametrize(
    "body",
    [
        "subgraph s { } a -> b",
        "subgraph cluster_x { subgraph cluster_y { subgraph z { } } a -> b } subgraph w { }",
        'subgraph cluster_x { label="X"; bgcolor=grey; peripheries=2; a -> b }',
        'subgraph cluster_x { "x-owner"=me; a } a -> b',
        "a:e -> b:w",
        "a:n:ne -> b:s [headport=w, tailclip=false, lhead=cluster_x]",
    ],
)
def test_dot_subgraphs_and_presentation_are_no_processes(tmp_path, body):
    """NET-DOT: subgraphs and clusters (empty, nested, inheriting the graph's credit)
    are no processes; Graphviz's own attributes and ports are presentation."""
    graph = _dot_graph(tmp_path, body)
    assert [n.name for n in graph.nodes] == ["a", "b"]
    assert [(e.sender, e.receiver, e.credit) for e in graph.edges] == [("a", "b", CreditSpec(2, 1))]


def test_dot_model_attributes_go_on_nodes_and_edges_not_subgraphs(tmp_path):
    """NET-DOT: ``edge [...]`` inside a subgraph sets its edges; a model attribute on the
    subgraph itself sets nothing and is refused in one line naming it."""
    graph = _dot_graph(tmp_path, 'subgraph cluster_x { edge [credit="3,1"]; a -> b } b -> c')
    assert [e.credit for e in graph.edges] == [CreditSpec(3, 1), CreditSpec(2, 1)]
    with pytest.raises(GraphFileError, match=r"subgraph 'cluster_x': attribute 'credit'") as e:
        _dot_graph(tmp_path, 'subgraph cluster_x { credit="3,1"; a -> b }')
    assert "\n" not in str(e.value)
    with pytest.raises(GraphFileError, match=r"subgraph 's': attribute 'source'"):
        _dot_graph(tmp_path, "subgraph s { source=true } a -> b")


def test_dot_is_read_without_a_layout(tmp_path, monkeypatch):
    """NET-DOT: Graphviz is asked for no layout (``-Knop``, every node placed), so a
    large, dense graph — whose ``dot`` layout takes minutes — reads in linear time."""
    calls: list[list[str]] = []
    real_run = subprocess.run

    def recording_run(args, **kwargs):
        calls.append(list(args))
        return real_run(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)
    rows = ['digraph g { credit="2,1"; n0 [source=true];']
    rows += [f" n{i} -> n{(i * 7 + k) % 1500};" for i in range(1500) for k in (1, 2, 3)]
    path = tmp_path / "dense.dot"
    path.write_text("\n".join(rows) + "}\n")
    graph = load_graph_file(path)
    assert len(graph.nodes) == 1500 and len(graph.edges) == 4500
    (command,) = calls
    assert "-Knop" in command and "-Tdot_json" in command
