"""Fuzzing every input format through the real CLI (IN-ONE-LINE, IN-SCHEMA, IN-DEPTH,
IN-INT, IN-FINITE, IN-DUPLICATE, IN-READ): Hypothesis mutates the shipped presets
(wrong types, deleted and duplicated keys, deep nesting, huge integers, NaN, binary
junk, truncation, hostile names) and runs the command that reads them, in a temporary
working folder. Every run must end with a documented exit code, stderr without a
traceback (one line for bad input), and no file outside the command's output folder.

Derandomized, no example database: the same cases in every run (docs/reliability-inputs.md
counts them).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.hostile import ROOT, fuzz_settings, mutated_json, run_cli

EXAMPLES = 100
FUZZ = fuzz_settings(EXAMPLES)

GRAPH = json.loads((ROOT / "spec/graphs/cycle2.json").read_text())
ACTORS = json.loads((ROOT / "spec/graphs/accounts/seed-small.json").read_text())
SCENARIO = json.loads((ROOT / "spec/paging/small-embedded.json").read_text())
TRACE = json.loads((ROOT / "conformance/corpus/credit_flow/cf13-disabled-0-0.itf.json").read_text())
EXPECTATIONS = json.loads((ROOT / "conformance/expectations/rabbitmq-3.10.8.json").read_text())
SWEEP = (ROOT / "spec/sweeps/smoke.toml").read_text()


def _run_on(data: bytes, name: str, args: list[str], allowed: tuple[str, ...]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / name).write_bytes(data)
        return run_cli([a.replace("@", name) for a in args], cwd, allowed).exit_code


@FUZZ
@given(mutated_json(GRAPH))
def test_fuzz_graph_json(data):
    """NET-FILE, IN-SCHEMA: `check` on a mutated node-link graph."""
    assert _run_on(data, "g.json", ["check", "@", "--max-states", "300"], ("counterexamples",)) in {
        0,
        2,
        4,
        10,
        12,
    }


@FUZZ
@given(mutated_json(ACTORS))
def test_fuzz_actor_graph(data):
    """AC-GRAPH, IN-SCHEMA: `accounts check` on a mutated actor graph."""
    assert _run_on(
        data, "a.json", ["accounts", "check", "@", "--max-states", "300"], ("counterexamples",)
    ) in {0, 2, 4, 10, 12}


@FUZZ
@given(mutated_json(SCENARIO))
def test_fuzz_paging_scenario(data):
    """PG-SCENARIO, IN-FINITE: `paging` on a mutated scenario."""
    assert _run_on(data, "s.json", ["paging", "@"], ()) in {0, 2, 12}


@FUZZ
@given(mutated_json(TRACE))
def test_fuzz_itf_trace(data):
    """TRACE-ITF, IN-SCHEMA: `replay` of a mutated trace on the reference model."""
    assert _run_on(data, "t.itf.json", ["replay", "@", "--adapter", "reference"], ()) in {0, 1, 2}


@FUZZ
@given(mutated_json(EXPECTATIONS))
def test_fuzz_expectations(data):
    """AD-EXPECTATIONS, IN-SCHEMA: `replay --expectations` with a mutated file."""
    trace = ROOT / "conformance/corpus/credit_flow/cf13-disabled-0-0.itf.json"
    assert _run_on(
        data, "e.json", ["replay", str(trace), "--adapter", "reference", "--expectations", "@"], ()
    ) in {0, 1, 2}


TOML_VALUES = [
    "3000000000",
    "-1",
    "nan",
    "inf",
    "1e400",
    '"x"',
    "[]",
    "{}",
    "true",
    "9" * 30,
    "[" * 2000 + "1" + "]" * 2000,
    '["os:system"]',
    '"../../../../tmp/evil"',
]


@FUZZ
@given(st.data())
def test_fuzz_sweep_file(data):
    """SW-FILE, SW-ROW-TYPES, IN-PLUGIN: `sweep --dry-run` on a mutated sweep file."""
    lines = SWEEP.splitlines()
    kind = data.draw(st.sampled_from(["value", "value", "delete", "duplicate", "junk", "truncate"]))
    assignments = [i for i, line in enumerate(lines) if " = " in line and not line.startswith("#")]
    i = data.draw(st.sampled_from(assignments))
    key = lines[i].split(" = ")[0]
    if kind == "value":
        lines[i] = f"{key} = {data.draw(st.sampled_from(TOML_VALUES))}"
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    text = "\n".join(lines).encode()
    if kind == "junk":
        text = data.draw(st.binary(min_size=1, max_size=64))
    elif kind == "truncate":
        text = text[: data.draw(st.integers(0, len(text) - 1))]
    assert _run_on(text, "w.toml", ["sweep", "@", "--dry-run", "--out", "out"], ("out",)) in {0, 2}


DOT_TEXTS = st.sampled_from(
    [
        "",
        "digraph {}",
        'digraph a { x [source=true]; x -> y [credit="1,1"] } digraph b {}',
        "graph { a -- b }",
        "digraph { a -> }",
        "\x00\x01binary",
        'digraph { a [source=true, publishes=99999999999999999999]; a -> b [credit="1,1"] }',
        'digraph "../../evil" { a [source=true]; a -> b [credit="1,1"] }',
        'digraph { a [source=true]; a -> b [credit="1,1", sends_per_message=1000000000] }',
    ]
)
GRAPHML_TEXTS = st.sampled_from(
    [
        "",
        "<graphml/>",
        "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaa'>]><graphml>&a;</graphml>",
        "<graphml xmlns='http://graphml.graphdrawing.org/xmlns'><graph edgedefault='directed'>"
        "<node id='a'/><node id='a'/></graph></graphml>",
        "<graphml xmlns='http://graphml.graphdrawing.org/xmlns'><graph edgedefault='directed'>"
        "<node id='a'/><edge source='a' target='ghost'/></graph></graphml>",
        "<graphml><graph><node id='a'></graph>",
    ]
)


@settings(max_examples=12, derandomize=True, database=None, deadline=None)
@given(DOT_TEXTS, GRAPHML_TEXTS)
def test_fuzz_dot_and_graphml(dot, graphml):
    """NET-FILE, IN-READ, IN-DUPLICATE, IN-DANGLING: hostile DOT and GraphML files."""
    for name, text in (("g.dot", dot), ("g.graphml", graphml)):
        assert _run_on(
            text.encode(), name, ["check", "@", "--max-states", "300"], ("counterexamples",)
        ) in {0, 2, 4, 10, 12}
