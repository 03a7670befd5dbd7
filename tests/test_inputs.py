"""The input layer, class by class (spec/inputs.md): each test attacks one class of bad
input through the real CLI (in-process, plus a few real subprocesses) and checks the
promise: one line naming the file (and the JSON path), exit 2, the verdict unchanged,
nothing imported from a data file, work bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from creditflow.conformance.explore import compiled
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import GraphFileError, load_graph, load_graph_file
from creditflow.conformance.inputs.itf import TraceFormatError, read_document
from creditflow.conformance.inputs.reading import MAX_DEPTH, InputError, parse_json, parse_toml
from creditflow.conformance.sweep.replay import replay_one, resolve_replay
from creditflow.conformance.sweep.schema import (
    COLUMN_NAMES,
    INT_RANGES,
    column_kind,
    rows_to_table,
)
from creditflow.conformance.sweep.sweepfile import (
    MAX_BUDGET_STATES,
    MAX_SWEEP_CREDIT,
    MAX_SWEEP_PUBLISHES,
    SweepFileError,
    parse_sweep,
)
from tests.fuzz.hostile import ROOT, run_cli

CYCLE2 = json.loads((ROOT / "spec/graphs/cycle2.json").read_text())
TRACE = ROOT / "conformance/corpus/credit_flow/cf13-disabled-0-0.itf.json"
CF = str(Path(sys.executable).parent / "creditflow")


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def bad(tmp_path: Path, args: list[str], *needles: str) -> str:
    """Run ``creditflow ARGS``: exit 2 and one line containing every needle."""
    result = run_cli(args, tmp_path, ("counterexamples", "out"))
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def graph(**changes: object) -> str:
    doc = json.loads(json.dumps(CYCLE2))
    doc.update(changes)
    return json.dumps(doc)


# -- IN-SCHEMA: wrong types -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (graph(directed="false"), "directed"),
        (graph(nodes=3), "nodes"),
        (graph(nodes=None), "nodes"),
        (graph(graph=[]), "graph"),
        (graph(edges={"a": 1}), "edges"),
        (graph(nodes=[{"id": ["A"]}]), "nodes[0].id"),
        (graph(nodes=[{"id": {"x": 1}}]), "nodes[0].id"),
        (graph(nodes=[{"id": None}]), "nodes[0].id"),
        (graph(nodes=[{"id": True}]), "nodes[0].id"),
        (graph(nodes=[{"id": ""}]), "nodes[0].id"),
        (graph(nodes=["A"]), "nodes[0]"),
        (graph(multigraph="no"), "multigraph"),
    ],
)
def test_wrong_types_are_one_line_with_a_json_path(tmp_path, text, where):
    """IN-SCHEMA: a string is never a boolean; nodes/ids/graph of the wrong type."""
    path = write(tmp_path, "g.json", text)
    bad(tmp_path, ["check", str(path)], str(path), f"{where}:")


# -- IN-DUPLICATE: duplicates never merge ----------------------------------------------------


def test_duplicate_node_ids_do_not_hide_a_deadlock(tmp_path):
    """IN-DUPLICATE: cycle2 deadlocks (exit 10); listing a node twice (also as 1 / "1")
    is refused, never merged into a graph that passes."""
    ok = write(tmp_path, "ok.json", json.dumps(CYCLE2))
    assert (
        run_cli(["check", str(ok), "--credit", "1,1"], tmp_path, ("counterexamples",)).exit_code
        == 10
    )
    doc = json.loads(json.dumps(CYCLE2))
    doc["nodes"].append(dict(doc["nodes"][1]))
    twice = write(tmp_path, "twice.json", json.dumps(doc))
    bad(tmp_path, ["check", str(twice), "--credit", "1,1"], "appears twice", "IN-DUPLICATE")
    mixed = write(
        tmp_path,
        "mixed.json",
        json.dumps({"nodes": [{"id": 1, "source": True}, {"id": "1"}], "edges": []}),
    )
    bad(tmp_path, ["check", str(mixed)], "nodes[1].id", "appears twice")


def test_duplicate_json_keys_and_graphml_nodes(tmp_path):
    """IN-DUPLICATE: a key twice in one JSON object; a GraphML node declared twice."""
    text = '{"nodes": [{"id": "a", "source": true, "source": false}], "edges": []}'
    bad(tmp_path, ["check", str(write(tmp_path, "k.json", text))], 'duplicate key "source"')
    ml = (
        "<graphml xmlns='http://graphml.graphdrawing.org/xmlns'><graph edgedefault="
        "'directed'><node id='a'/><node id='a'/></graph></graphml>"
    )
    bad(tmp_path, ["check", str(write(tmp_path, "d.graphml", ml))], "declared twice")


# -- IN-DANGLING --------------------------------------------------------------------------------


def test_edges_to_undeclared_nodes(tmp_path):
    """IN-DANGLING: GraphML no longer invents the node; JSON names the path."""
    ml = (
        "<graphml xmlns='http://graphml.graphdrawing.org/xmlns'><graph edgedefault="
        "'directed'><node id='a'/><edge source='a' target='ghost'/></graph></graphml>"
    )
    bad(tmp_path, ["check", str(write(tmp_path, "g.graphml", ml))], "'ghost'", "IN-DANGLING")
    doc = json.loads(json.dumps(CYCLE2))
    doc["edges"][0]["target"] = "ghost"
    bad(
        tmp_path,
        ["check", str(write(tmp_path, "g.json", json.dumps(doc)))],
        "edges[0].target",
        "IN-DANGLING",
    )


# -- IN-READ: empty, binary, two graphs, DTDs ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("e.dot", "", "empty file"),
        ("b.dot", b"\x00\x01\xff\xfe", "binary"),
        ("u.json", b"\xff\xfe{}", "not UTF-8"),
        (
            "two.dot",
            'digraph a { x [source=true]; x -> y [credit="1,1"] } digraph b { p }',
            "more than one graph",
        ),
        (
            "x.graphml",
            "<?xml version='1.0'?><!DOCTYPE g [<!ENTITY a 'aaa'>]><graphml/>",
            "DTDs and entities",
        ),
        ("two.json", '{"nodes": []} {"nodes": []}', "more than one JSON value"),
        ("e.json", "  \n", "empty file"),
    ],
)
def test_unreadable_files(tmp_path, name, content, needle):
    """IN-READ: bytes that are not one usable document of the format."""
    bad(tmp_path, ["check", str(write(tmp_path, name, content))], needle)


# -- IN-DEPTH and IN-INT in every format ---------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000


@pytest.mark.parametrize("payload", [DEEP, HUGE, "NaN", "-Infinity", "1e999"])
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("g.json", ["check", "@"]),
        ("a.json", ["accounts", "check", "@"]),
        ("s.json", ["paging", "@"]),
        ("t.itf.json", ["replay", "@", "--adapter", "reference"]),
        ("e.json", ["replay", str(TRACE), "--adapter", "reference", "--expectations", "@"]),
    ],
)
def test_deep_nesting_huge_integers_and_nan_in_every_json_format(tmp_path, name, args, payload):
    """IN-DEPTH, IN-INT, IN-FINITE: before the parser can recurse or convert."""
    path = write(tmp_path, name, '{"x": ' + payload + "}")
    line = bad(tmp_path, [a.replace("@", str(path)) for a in args], str(path))
    assert any(rule in line for rule in ("IN-DEPTH", "IN-INT", "IN-FINITE")), line


def test_bigint_and_container_values_in_itf(tmp_path):
    """IN-INT, IN-SCHEMA: malformed #bigint/#tup/#set/#map give their path."""
    doc = json.loads(TRACE.read_text())
    cases = {
        '{"#bigint": "12x"}': "#bigint",
        '{"#bigint": "' + "1" * 40 + '"}': "#bigint",
        '{"#tup": 3}': "#tup must be a list",
        '{"#set": {"a": 1}}': "#set must be a list",
        '{"#map": [[1]]}': "#map[0] must be a [key, value] pair",
        '{"#bigint": "1", "x": 2}': "only key",
    }
    for value, needle in cases.items():
        text = json.dumps(doc).replace('{"#bigint": "0"}', value, 1)
        path = write(tmp_path, "t.itf.json", text)
        with pytest.raises(TraceFormatError, match="states\\[0\\]"):
            read_document(path)
        bad(tmp_path, ["replay", str(path), "--adapter", "reference"], needle)


def test_toml_depth_ints_and_nan(tmp_path):
    """IN-DEPTH, IN-INT, IN-FINITE for sweep files (TOML)."""
    for text, rule in [
        (f"x = {'[' * 5000}1{']' * 5000}", "IN-DEPTH"),
        ("x = 9999999999999999999", "IN-INT"),
        ("x = nan", "IN-FINITE"),
        ("x = -inf", "IN-FINITE"),
        ("[" + ".".join(["a"] * 200) + "]", "IN-DEPTH"),
    ]:
        with pytest.raises(InputError, match=rule):
            parse_toml(text, "w.toml")
    path = write(tmp_path, "w.toml", "[[family]]\nkind = 'broker'\nqueues = nan\n")
    bad(tmp_path, ["sweep", str(path), "--dry-run"], "IN-FINITE")


def test_depth_limit_is_exact():
    """IN-DEPTH: MAX_DEPTH levels pass, one more is refused; strings do not count."""
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(ok, "x") is not None
    with pytest.raises(InputError, match="IN-DEPTH"):
        parse_json("[" + ok + "]", "x")
    assert parse_json(json.dumps("[" * 1000), "x") == "[" * 1000


# -- IN-LIMITS ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"sends_per_message": 10**15}, "sends_per_message"),
        ({"credit": [3_000_000_000, 1]}, "credit"),
    ],
)
def test_absurd_values_are_refused(tmp_path, edit, needle):
    """IN-LIMITS: values that would hang the model are refused with their maximum."""
    doc = json.loads(json.dumps(CYCLE2))
    doc["edges"][0].update(edit)
    bad(tmp_path, ["check", str(write(tmp_path, "g.json", json.dumps(doc)))], needle, "IN-LIMITS")


def test_absurd_command_line_values(tmp_path):
    """IN-LIMITS, IN-FINITE: --publishes, --credit and --timeout are bounded too."""
    bad(tmp_path, ["check", "cycle2", "--publishes", "10000000"], "IN-LIMITS")
    bad(tmp_path, ["check", "cycle2", "--credit", "3000000000,1"], "IN-LIMITS")
    for value in ("inf", "nan", "1e308"):
        result = run_cli(["prove", "cycle2", "--timeout", value], tmp_path)
        assert result.exit_code == 2 and "seconds" in result.stderr


def test_too_many_nodes(tmp_path):
    """IN-LIMITS: more than MAX_NODES processes is one line."""
    nodes = [{"id": i} for i in range(10_001)]
    nodes[0]["source"] = True
    path = write(tmp_path, "big.json", json.dumps({"nodes": nodes, "edges": []}))
    bad(tmp_path, ["check", str(path)], "nodes", "10000")


# -- IN-PLUGIN ----------------------------------------------------------------------------------

PLUGIN_SWEEP = """
[settings]
credits = {{ specs = [[1, 1]] }}
checkers = ["{checker}"]
[[family]]
kind = "broker"
"""


def test_a_sweep_file_alone_imports_nothing(tmp_path, monkeypatch):
    """IN-PLUGIN: naming a module in a data file neither imports nor runs it, also with
    --dry-run; --plugin approves it explicitly."""
    marker = tmp_path / "imported.txt"
    monkeypatch.setenv("CREDITFLOW_PLUGIN_MARKER", str(marker))
    sys.modules.pop("tests.plugin_side_effect", None)
    path = write(tmp_path, "p.toml", PLUGIN_SWEEP.format(checker="tests.plugin_side_effect:check"))
    bad(
        tmp_path,
        ["sweep", str(path), "--dry-run"],
        "--plugin tests.plugin_side_effect",
        "IN-PLUGIN",
    )
    assert not marker.exists() and "tests.plugin_side_effect" not in sys.modules
    system = write(tmp_path, "s.toml", PLUGIN_SWEEP.format(checker="os:system"))
    bad(tmp_path, ["sweep", str(system), "--dry-run"], "'os:system'", "IN-PLUGIN")
    approved = run_cli(
        ["sweep", str(path), "--dry-run", "--plugin", "tests.plugin_side_effect"],
        tmp_path,
        ("out", "imported.txt"),
    )
    assert approved.exit_code == 0, approved.stderr
    assert marker.read_text() == "imported\n"


def test_unapproved_plugin_in_a_real_subprocess(tmp_path):
    """IN-PLUGIN, IN-ONE-LINE through the installed `creditflow` command."""
    marker = tmp_path / "imported.txt"
    path = write(tmp_path, "p.toml", PLUGIN_SWEEP.format(checker="tests.plugin_side_effect:check"))
    done = subprocess.run(
        [CF, "sweep", str(path), "--dry-run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "CREDITFLOW_PLUGIN_MARKER": str(marker), "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "IN-PLUGIN" in done.stderr and not marker.exists()


# -- IN-WORK -----------------------------------------------------------------------------------


def chain(n: int) -> dict:
    nodes = [{"id": f"n{i}"} for i in range(n)]
    nodes[0]["source"] = True
    return {
        "graph": {"credit": [1, 1]},
        "nodes": nodes,
        "edges": [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(n - 1)],
    }


def star(n: int) -> dict:
    nodes = [{"id": "hub", "source": True}] + [{"id": f"l{i}"} for i in range(n - 1)]
    return {
        "graph": {"credit": [1, 1]},
        "nodes": nodes,
        "edges": [{"source": "hub", "target": f"l{i}"} for i in range(n - 1)],
    }


def test_ten_thousand_nodes_are_bounded_by_max_states(tmp_path):
    """IN-WORK, EXP-BUDGET: a 10,000-node chain (RecursionError compiling before) and a
    10,000-leaf star (a quadratic step before) reach exit 4 within seconds, through a
    real subprocess."""
    for name, doc in (("chain", chain(10_000)), ("star", star(10_000))):
        path = write(tmp_path, f"{name}.json", json.dumps(doc))
        started = time.monotonic()
        done = subprocess.run(
            [CF, "check", str(path), "--max-states", "50"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 4, done.stderr
        assert "Traceback" not in done.stderr
        assert time.monotonic() - started < 60, name


def test_big_graphs_run_the_readable_functions_with_the_same_results(monkeypatch):
    """IN-WORK: above COMPILE_LIMIT the interpreted successors (lazily expanded) give
    exactly the compiled explorer's results."""
    results = {}
    for limit in (10**9, 0):
        monkeypatch.setattr(compiled, "COMPILE_LIMIT", limit)
        for name in ("cycle2", "fanout", "stalled-queue"):
            system, result = check_graph(load_graph(name), CheckOptions(max_states=20_000))
            assert system.compiled == (limit > 0)
            results.setdefault(name, []).append(
                (
                    result.n_states,
                    result.transitions,
                    result.complete,
                    result.holds,
                    {k: f.length for k, f in result.findings.items()},
                )
            )
    for name, (a, b) in results.items():
        assert a == b, name


def test_prove_answers_within_its_timeout(tmp_path):
    """IN-WORK: `prove --depth 100000 --timeout 1` and a 2,000-node chain stop at their
    budget with exit 4 and one line."""
    path = write(tmp_path, "chain.json", json.dumps(chain(2000)))
    for args in (
        ["prove", "cycle2", "--depth", "100000", "--timeout", "1"],
        ["prove", str(path), "--timeout", "1"],
    ):
        started = time.monotonic()
        result = run_cli(args, tmp_path, ("counterexamples",))
        assert result.exit_code == 4, result.stderr
        assert "no answer within --timeout" in result.stderr
        assert time.monotonic() - started < 15


# -- SW-ROW-TYPES --------------------------------------------------------------------------------


def test_sweep_values_are_validated_against_their_columns():
    """SW-ROW-TYPES: the documented maxima fit the Parquet columns, and a value beyond
    them is refused at validation (so --dry-run and the commit agree)."""
    assert INT_RANGES[column_kind("credit_initial")][1] >= MAX_SWEEP_CREDIT
    assert INT_RANGES[column_kind("publishes")][1] >= MAX_SWEEP_PUBLISHES
    assert INT_RANGES[column_kind("max_states")][1] >= MAX_BUDGET_STATES
    base = "[[family]]\nkind = 'broker'\n"
    for setting in (
        "publishes = [3000000000]",
        "credits = { specs = [[3000000000, 1]] }",
        "credits = { grid = { initial = [1], more_after = [3000000000] } }",
        "instances = 10000000",
    ):
        with pytest.raises(SweepFileError, match="SW-ROW-TYPES"):
            parse_sweep(base + setting + "\n", "w.toml")


def test_an_unstorable_row_does_not_cost_its_part():
    """SW-ROW-TYPES, SW-COMMIT: a row whose value a column cannot hold is stored as an
    error row naming the column; the other rows of the part are stored as they are."""
    rows = [
        {
            **dict.fromkeys(COLUMN_NAMES),
            "case_id": f"c{i}",
            "verdict": "holds",
            "states": 10 + i,
            "blocked_forever": [],
            "violated": [],
            "finished_at": 0.0,
        }
        for i in range(2)
    ]
    rows[1]["states"] = 2**70
    table = rows_to_table(rows).to_pylist()
    assert [r["verdict"] for r in table] == [rows[0]["verdict"], "error"]
    assert table[1]["states"] is None and "states=" in table[1]["error"]
    assert table[0]["states"] == rows[0]["states"]


# -- IN-ONE-LINE elsewhere: replay-corpus and the pytest plugin -----------------------------------


def test_replay_corpus_rows_corrupt_traces_as_bad_trace(tmp_path):
    """IN-ONE-LINE, SW-REPLAY: a corrupt trace is `bad-trace` (exit 2), never `error`."""
    fn = resolve_replay("network")
    for content in (
        "",
        "{",
        DEEP,
        '{"x": ' + HUGE + "}",
        '{"vars": "x", "states": []}',
        '{"#meta": {"creditflow": null}, "vars": [], "states": [{}]}',
    ):
        path = write(tmp_path, "c.itf.json", content)
        row = replay_one(fn, str(path), "network")
        assert row.status == "bad-trace", (content[:30], row)
        assert row.message is not None and "\n" not in row.message


pytest_plugins = ["pytester"]


def test_pytest_plugin_reports_a_corrupt_trace_in_one_line(pytester):
    """IN-ONE-LINE: the pytest plugin shows a corrupt trace as its one-line error, not a
    traceback."""
    corpus = pytester.path / "corpus"
    corpus.mkdir()
    (corpus / "broken.itf.json").write_text('{"vars": ["x"], "states": [{"x": ' + HUGE + "}]}")
    result = pytester.runpytest(
        str(corpus), "--creditflow-adapter", "reference", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "IN-INT" in text and "Traceback" not in text and "json/decoder.py" not in text


def test_graph_files_keep_loading():
    """NET-FILE: every preset still loads through the input layer."""
    for name in ("cycle2", "cycle3", "fanout", "rabbitmq-publish", "stalled-queue"):
        assert load_graph(name).name == name
    with pytest.raises(GraphFileError):
        load_graph_file(ROOT / "README.md")


def test_a_foreign_parquet_file_in_a_sweep_folder_is_one_line(tmp_path):
    """IN-READ, SW-ROW-TYPES: `report` and `sweep` refuse a Parquet file that is not a
    sweep part file in one line (exit 2), not with a SQL error or a traceback."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    results = tmp_path / "sw" / "results"
    results.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1, 2]}), results / "foreign.parquet")
    bad(tmp_path, ["report", str(tmp_path / "sw")], "foreign.parquet", "no column 'case_id'")
    (results / "junk.parquet").write_bytes(b"not parquet at all")
    bad(
        tmp_path, ["sweep", "smoke", "--out", str(tmp_path / "sw"), "--dry-run"], "parquet", "not a"
    )
