"""The fuzz suite's outputs half (OUT-STREAM, OUT-TEXT), Hypothesis with a fixed seed:

* hostile names — any text, with lone surrogates, terminal escapes, line breaks and
  rich markup — as node ids, graph, timeline and connection names, through the CLI:
  the verdict is the one the same graph has under plain names, every name is shown as
  one printable line, and ``--json`` keeps it exactly;
* broken output streams — a command and a way to break stdout or stderr drawn at
  random, on the real program: the verdict's exit code survives (OUT-EXIT's code when
  something was lost), never 1 or a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance import exit_codes
from tests.fuzz.hostile import ROOT, fuzz_settings, run_cli
from tests.hardening.helpers import CF

NAMES = fuzz_settings(40)
STREAMS = settings(NAMES, max_examples=8)

#: characters an attacker reaches for, mixed into any text
HOSTILE_CHARS = ["\ud800", "\udfff", "\x1b", "\x1b[2J", "\x1b]0;t\x07", "\x07", "\n", "\r", "[b]"]
hostile_names = st.lists(
    st.one_of(st.characters(), st.sampled_from(HOSTILE_CHARS)), min_size=1, max_size=12
).map("".join)
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
GRAPH = json.loads((ROOT / "spec/graphs/cycle2.json").read_text())
TIMELINE = json.loads((ROOT / "spec/alarms/two-sources.json").read_text())


def _renamed_graph(node: str, graph_name: str) -> dict:
    doc = json.loads(json.dumps(GRAPH))
    doc["graph"]["name"] = graph_name
    doc["nodes"][1]["id"] = node
    for edge in doc["edges"]:
        for end in ("source", "target"):
            if edge[end] == "B":
                edge[end] = node
    return doc


@NAMES
@given(node=hostile_names, graph_name=hostile_names)
def test_fuzz_hostile_names_in_a_graph(node, graph_name):
    """OUT-TEXT: cycle2 under any names deadlocks (exit 10) as it does under A and B,
    the report's lines are printable, and ``--json`` names the renamed node exactly."""
    if json.loads(json.dumps(node)) == "A":
        node = "A2"
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "g.json").write_text(json.dumps(_renamed_graph(node, graph_name)))
        shown = run_cli(["check", "g.json", "--no-prove"], cwd, ("counterexamples",))
        assert shown.exit_code == exit_codes.DEADLOCK, shown.stderr
        assert not RAW_CONTROL.search(shown.stdout), shown.stdout
        as_json = run_cli(["check", "g.json", "--no-prove", "--json"], cwd, ("counterexamples",))
        assert as_json.exit_code == exit_codes.DEADLOCK, as_json.stderr
        report = json.loads(as_json.stdout)
        # as JSON reads it back (a surrogate pair in the file is one character)
        assert json.loads(json.dumps(node)) in report["blocked_forever_drawn"]
        assert report["graph"] == json.loads(json.dumps(graph_name))


@NAMES
@given(connection=hostile_names)
def test_fuzz_hostile_connection_names(connection):
    """OUT-TEXT: a timeline whose publisher has any name gives the same verdict as the
    shipped one (exit 0) and prints no raw control character."""
    if json.loads(json.dumps(connection)) == "consumer":
        connection = "consumer2"
    doc = json.loads(json.dumps(TIMELINE))
    doc["connections"][0]["name"] = connection
    for step in doc["steps"]:
        if step.get("connection") == "publisher":
            step["connection"] = connection
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "t.json").write_text(json.dumps(doc))
        done = run_cli(["alarms", "run", "t.json"], cwd)
        assert done.exit_code == exit_codes.OK, done.stderr
        assert not RAW_CONTROL.search(done.stdout), done.stdout


#: (arguments, the verdict's exit code, whether it prints on stdout, on stderr)
COMMANDS = [
    (["check", "cycle2", "--no-prove"], exit_codes.DEADLOCK, True, False),
    (
        ["check", "fanout", "--credit", "4,1", "--publishes", "2", "--json"],
        exit_codes.OK,
        True,
        False,
    ),
    (["presets"], exit_codes.OK, True, False),
    (["paging", "small-embedded"], exit_codes.OK, True, False),
    (["check", "nosuchgraph"], exit_codes.USAGE, False, True),
]


def _with_broken(args: list[str], mode: str, cwd: Path) -> subprocess.CompletedProcess:
    if mode == "full":
        with open("/dev/full", "wb") as full:
            return subprocess.run(
                [*CF, *args], cwd=cwd, stdout=full, stderr=subprocess.PIPE, timeout=120
            )
    if mode == "gone-reader":
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            return subprocess.run(
                [*CF, *args], cwd=cwd, stdout=write_end, stderr=subprocess.PIPE, timeout=120
            )
        finally:
            os.close(write_end)
    fd = "1" if mode == "stdout-closed" else "2"
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {fd}>&-', "sh", *CF, *args],
        cwd=cwd,
        capture_output=True,
        timeout=120,
    )


@STREAMS
@given(
    command=st.sampled_from(COMMANDS),
    mode=st.sampled_from(["full", "gone-reader", "stdout-closed", "stderr-closed"]),
)
def test_fuzz_broken_streams(command, mode):
    """OUT-STREAM: whatever the command and the broken stream, the exit code is the
    verdict's, or 5 for a verdict of 0; never 1, never a traceback."""
    args, verdict, on_stdout, on_stderr = command
    with tempfile.TemporaryDirectory() as tmp:
        done = _with_broken(args, mode, Path(tmp))
    lost = on_stderr if mode == "stderr-closed" else on_stdout
    expected = exit_codes.with_write_failure(verdict) if lost else verdict
    assert done.returncode == expected, (args, mode, done.returncode, done.stderr)
    assert done.returncode != exit_codes.DIVERGENCE
    assert b"Traceback" not in (done.stderr or b"")
