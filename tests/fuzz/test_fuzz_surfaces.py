"""The fuzz suite on the newest surfaces (issue 20): alarm timelines (AL-TIMELINE), the
JSON Lines of `paging --json` (PG-STREAM), actor graphs in DOT and GraphML (AC-GRAPH,
NET-DOT) and the pytest plugin's options (IN-BOUNDS, SIG-PLUGIN). Expectations files,
broken streams and advanced.config have their own fuzz tests (test_fuzz_inputs.py,
test_fuzz_streams.py, test_fuzz_erlang_terms.py).

Hypothesis, derandomized, bounded example counts; the same promises as the rest of the
suite: a documented exit code, no traceback, one line for bad input, nothing written
outside the command's folder.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.hostile import ROOT, fuzz_settings, mutated_json, run_cli

pytest_plugins = ["pytester"]

FUZZ = fuzz_settings(60)
TIMELINE = json.loads((ROOT / "spec/alarms/two-sources.json").read_text())
SCENARIO = json.loads((ROOT / "spec/paging/small-embedded.json").read_text())


def _run(data: bytes, name: str, args: list[str]):
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / name).write_bytes(data)
        return run_cli([a.replace("@", name) for a in args], cwd, ())


@FUZZ
@given(mutated_json(TIMELINE), st.booleans())
def test_fuzz_alarm_timeline(data, as_json):
    """AL-TIMELINE, AL-ACTIONS, IN-SCHEMA: `alarms run` on a mutated timeline: exit 0,
    12 (an AL property violated) or 2 (one line); with --json, JSON Lines."""
    result = _run(data, "t.json", ["alarms", "run", "@", *(["--json"] if as_json else [])])
    assert result.exit_code in {0, 2, 12}
    if as_json and result.exit_code != 2:
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        assert lines and all(isinstance(line, dict) for line in lines)


@FUZZ
@given(mutated_json(SCENARIO))
def test_fuzz_paging_json_lines(data):
    """PG-STREAM, IN-SCHEMA: `paging --json` on a mutated scenario: every stdout line is
    one JSON object (the header, the steps, the summary), or the file is refused in one
    line with nothing on stdout."""
    result = _run(data, "s.json", ["paging", "@", "--json"])
    assert result.exit_code in {0, 2, 12}
    lines = result.stdout.splitlines()
    if result.exit_code == 2:
        assert not lines
    else:
        objects = [json.loads(line) for line in lines]
        assert len(objects) >= 2 and all(isinstance(o, dict) for o in objects)


ACTOR_DOT = st.sampled_from(
    [
        "",
        "digraph {}",
        "digraph { A [reads=2]; A -> B; B -> C }",
        "digraph { A [reads=2]; A -> B; B -> A }",  # a cycle without max_hops
        "digraph { max_hops=3; A [reads=1]; A -> B; B -> A }",
        "digraph { A [reads=99999999999999999999]; A -> B }",
        "digraph { A [reads=-1]; A -> B }",
        'digraph { A [reads="x"]; A -> B [events=0] }',
        "digraph { subgraph s { } A [reads=1]; A:e -> B:w }",
        "digraph { A [reads=1, stalled=true]; A -> B [events=2]; B -> C }",
        "graph { A -- B }",
        "digraph a { A [reads=1] } digraph b { }",
        'digraph "../../evil" { A [reads=1]; A -> B }',
        "\x00\x01binary",
    ]
)
ACTOR_GRAPHML = st.sampled_from(
    [
        "<graphml/>",
        "<graphml xmlns='http://graphml.graphdrawing.org/xmlns'>"
        "<key id='r' for='node' attr.name='reads' attr.type='int'/>"
        "<graph edgedefault='directed'><node id='A'><data key='r'>2</data></node>"
        "<node id='B'/><edge source='A' target='B'/></graph></graphml>",
        "<graphml xmlns='http://graphml.graphdrawing.org/xmlns'><graph edgedefault='directed'>"
        "<node id='A'/><edge source='A' target='ghost'/></graph></graphml>",
        "<graphml><graph><node id='a'></graph>",
    ]
)


@settings(FUZZ, max_examples=20)
@given(ACTOR_DOT, ACTOR_GRAPHML)
def test_fuzz_actor_graphs_in_dot_and_graphml(dot, graphml):
    """AC-GRAPH, NET-DOT, IN-READ: `accounts check` on hostile DOT and GraphML actor
    graphs: a verdict or one line, exit 2."""
    for name, text in (("a.dot", dot), ("a.graphml", graphml)):
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            (cwd / name).write_bytes(text.encode("utf-8", "surrogatepass"))
            result = run_cli(
                ["accounts", "check", name, "--max-states", "300"], cwd, ("counterexamples",)
            )
        assert result.exit_code in {0, 2, 4, 10, 12}


NUMBER_TEXTS = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e308", "1" * 30, "", " ", "0x10", "1_0"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8),
)
COMMAND_TEXTS = st.one_of(
    st.sampled_from(["python3 'x", 'python3 "x', "", "   ", "\\", "nosuchprogram-creditflow"]),
    st.text(alphabet="ab '\"\\ ", max_size=10),
)


@pytest.mark.filterwarnings("ignore::pytest.PytestAssertRewriteWarning")
@settings(FUZZ, max_examples=15)
@given(timeout=NUMBER_TEXTS, command=COMMAND_TEXTS)
def test_fuzz_plugin_options(pytester, timeout, command):
    """IN-BOUNDS, SIG-PLUGIN: the pytest plugin given any --creditflow-timeout and
    --creditflow-adapter-cmd text ends its session normally or with a pytest usage error
    (exit 4) naming the option, never an INTERNALERROR or a traceback."""
    args = ["--creditflow-timeout", timeout]
    args += ["--creditflow-adapter-cmd", command]
    result = pytester.runpytest_inprocess(*args)
    text = "\n".join(result.outlines + result.errlines)
    assert "INTERNALERROR" not in text and "Traceback" not in text
    assert result.ret in (0, 4, 5)
    if result.ret == 4:
        assert "--creditflow-timeout" in text or "--creditflow-adapter-cmd" in text
