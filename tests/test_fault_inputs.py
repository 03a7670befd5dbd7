"""Bad fault input (issue 19): unknown or ill-typed fault attributes, ``may_crash`` on a
process with no credit pair, a crash bound below 0 — in node-link JSON, DOT and
GraphML, through ``check``, ``prove`` and ``synth``: one line naming the file and the
node (or the graph attribute), exit 2, nothing written (NET-FAULT-NODE,
NET-FAULT-BOUND, IN-ONE-LINE)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from tests.fuzz.hostile import ROOT, run_cli

FIXED = json.loads((ROOT / "spec/graphs/bugs/dead-mirror-3.8.10-fixed.json").read_text())


def _json_graph(change) -> str:
    doc = copy.deepcopy(FIXED)
    change(doc)
    return json.dumps(doc)


def _node(i: int, **attrs):
    return lambda doc: doc["nodes"][i].update(attrs)


def _graph_attr(**attrs):
    return lambda doc: doc["graph"].update(attrs)


def _lonely(doc) -> None:
    doc["nodes"].append({"id": "lonely", "may_crash": True})


#: (file name, content, what the one line must say besides the file)
JSON_ATTACKS = [
    ("typo.json", _node(3, may_crsh=True), ("node 'mirror'", "unknown attribute 'may_crsh'")),
    ("unknown.json", _node(3, crash_after=3), ("node 'mirror'", "unknown attribute")),
    (
        "crash-str.json",
        _node(3, may_crash="sometimes"),
        ("nodes[3].may_crash", "must be true or false"),
    ),
    ("crash-int.json", _node(3, may_crash=2), ("nodes[3].may_crash", "must be true or false")),
    ("crash-null.json", _node(3, may_crash=None), ("nodes[3].may_crash", "must be true or false")),
    (
        "crash-list.json",
        _node(3, may_crash=[True]),
        ("nodes[3].may_crash", "must be true or false"),
    ),
    ("handler-str.json", _node(1, on_peer_down="later"), ("node 'channel' on_peer_down",)),
    ("handler-int.json", _node(1, on_peer_down=1), ("node 'channel' on_peer_down",)),
    ("handler-list.json", _node(1, on_peer_down=["ignore"]), ("node 'channel' on_peer_down",)),
    ("handler-map.json", _node(1, on_peer_down={"a": 1}), ("node 'channel' on_peer_down",)),
    ("lonely.json", _lonely, ("node 'lonely': may_crash on a process with no credit pair",)),
    ("bound-neg.json", _graph_attr(max_crashes=-1), ("graph max_crashes", "must be >= 0")),
    ("bound-str.json", _graph_attr(max_crashes="two"), ("graph max_crashes", "integer")),
    ("bound-float.json", _graph_attr(max_crashes=1.5), ("graph max_crashes", "integer")),
    ("bound-bool.json", _graph_attr(max_crashes=True), ("graph max_crashes", "integer")),
    ("bound-huge.json", _graph_attr(max_crashes=10**30), ("31 digits",)),
]

DOT = (
    'digraph g {{ credit="2,1"; {graph} r [publishes="2"]; c [{c}]; q [may_crash="true"];'
    " {extra} r -> c; c -> q; }}\n"
)
DOT_ATTACKS = [
    ("lonely.dot", DOT.format(graph="", c="", extra='x [may_crash="true"];'), ("node 'x'",)),
    ("crash.dot", DOT.format(graph="", c='may_crash="maybe"', extra=""), ("node 'c' may_crash",)),
    ("handler.dot", DOT.format(graph="", c='on_peer_down="later"', extra=""), ("node 'c'",)),
    ("typo.dot", DOT.format(graph="", c='may_crsh="true"', extra=""), ("node 'c'", "may_crsh")),
    ("bound.dot", DOT.format(graph='max_crashes="-1";', c="", extra=""), ("graph max_crashes",)),
]


def _graphml(node_attrs: dict, graph_attrs: dict) -> str:
    g = nx.DiGraph(credit="2,1", **graph_attrs)
    g.add_node("r", publishes=2)
    g.add_node("c", **node_attrs)
    g.add_node("q", may_crash="true")
    g.add_edges_from([("r", "c"), ("c", "q")])
    return "\n".join(nx.generate_graphml(g))


GRAPHML_ATTACKS = [
    ("crash.graphml", _graphml({"may_crash": "maybe"}, {}), ("node 'c' may_crash",)),
    ("handler.graphml", _graphml({"on_peer_down": "later"}, {}), ("node 'c' on_peer_down",)),
    ("bound.graphml", _graphml({}, {"max_crashes": "-1"}), ("graph max_crashes",)),
    ("typo.graphml", _graphml({"may_crsh": "true"}, {}), ("node 'c'", "may_crsh")),
]

ATTACKS = (
    [(name, _json_graph(change), needles) for name, change, needles in JSON_ATTACKS]
    + DOT_ATTACKS
    + GRAPHML_ATTACKS
)


def _refused(tmp_path: Path, args: list[str], *needles: str) -> None:
    result = run_cli(args, tmp_path)  # also: no traceback, nothing written anywhere
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize(("name", "content", "needles"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_check_refuses_bad_fault_input_in_one_line(tmp_path, name, content, needles):
    """NET-FAULT-NODE, NET-FAULT-BOUND: every attack on ``check``: exit 2, one line
    naming the file and the node or the graph attribute."""
    (tmp_path / name).write_text(content)
    _refused(tmp_path, ["check", name, "--graph-supply"], name, *needles)


@pytest.mark.parametrize("command", ["prove", "synth"])
@pytest.mark.parametrize(
    ("name", "content", "needles"),
    [ATTACKS[0], ATTACKS[2], ATTACKS[6], ATTACKS[10], ATTACKS[11]],
    ids=["typo", "crash-str", "handler-str", "lonely", "bound-neg"],
)
def test_prove_and_synth_refuse_bad_fault_input_the_same_way(
    tmp_path, command, name, content, needles
):
    """NET-FAULT-NODE, NET-FAULT-BOUND: the Z3 commands read the same graph first, so
    they refuse the same input with the same line (before any Z3-FAULTS refusal)."""
    (tmp_path / name).write_text(content)
    _refused(tmp_path, [command, name], name, *needles)


@pytest.mark.parametrize(
    ("value", "needle"),
    [("-1", "'-1' is not an integer from 0"), ("x", "'x' is not an integer from 0")],
)
def test_a_bad_crash_bound_flag_is_one_line(tmp_path, value, needle):
    """NET-FAULT-BOUND: ``--max-crashes`` below 0 or not an integer: one line, exit 2."""
    path = ROOT / "spec/graphs/bugs/dead-mirror-3.8.10-fixed.json"
    _refused(tmp_path, ["check", str(path), "--graph-supply", f"--max-crashes={value}"], needle)


def _ignore_without_crashable_peer(tmp_path):
    """reader -> channel -> queue; only the reader may crash, the queue ignores DOWN
    (none of its peers may crash: no effect), the channel ignores DOWN too (its peer
    the reader may crash: the attribute matters)."""
    doc = {
        "directed": True,
        "graph": {"name": "noop-ignore", "credit": [2, 1]},
        "nodes": [
            {"id": "reader", "source": True, "publishes": 2, "may_crash": True},
            {"id": "channel", "on_peer_down": "ignore"},
            {"id": "queue", "on_peer_down": "ignore"},
        ],
        "edges": [
            {"source": "reader", "target": "channel"},
            {"source": "channel", "target": "queue"},
        ],
    }
    path = tmp_path / "noop.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("command", ["check", "prove"])
def test_ignore_without_a_crashable_peer_is_warned(tmp_path, command):
    """NET-FAULT-NOOP: `on_peer_down` on a node none of whose peers may crash has no
    effect; the command says so in one stderr line naming the file and the node (text
    and --json, where `input_warnings` lists it), and answers as before."""
    path = _ignore_without_crashable_peer(tmp_path)
    args = [command, str(path), "--graph-supply", "--trace-out", str(tmp_path / "t.itf.json")]
    text = CliRunner().invoke(main, args)
    warned = [line for line in text.stderr.splitlines() if "NET-FAULT-NOOP" in line]
    assert len(warned) == 1, text.stderr
    assert str(path) in warned[0] and "'queue'" in warned[0] and "'channel'" not in warned[0]
    as_json = CliRunner().invoke(main, [*args, "--json"])
    report = json.loads(as_json.stdout)
    assert report["input_warnings"] == [warned[0].removeprefix("warning: ")]
    assert as_json.exit_code == text.exit_code
