"""OUT-TEXT: a name from an input (a connection, a process, an actor) that carries a line
break and terminal escapes is printed escaped, on stdout and stderr, by every command
that prints it: verdicts, tables and the one-line refusals (issue 30, "also found": an
alarm timeline's stuck step printed three raw lines with the escape).

The real program runs in a child process, so nothing between it and the pipe strips or
rewrites what it writes (click's test runner would drop the escapes itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SPEC = Path(__file__).resolve().parents[1] / "spec"
#: a line break, a colour escape (CSI), an OSC title escape and a bell
EVIL = "pub\n\x1b[31mEVIL\x1b]0;owned\x07"
RAW = ("\x1b", "\x07")


def _timeline(folder: Path, steps: list[dict], profile: str = "3.10.8") -> str:
    doc = {
        "name": "t",
        "profile": profile,
        "connections": [{"name": EVIL}, {"name": "consumer"}],
        "steps": steps,
    }
    (folder / "timeline.json").write_text(json.dumps(doc))
    return "timeline.json"


def stuck_timeline(folder: Path) -> list[str]:
    """The issue's case: a 2008 complying client told to publish during an alarm."""
    steps = [{"op": "alarm", "source": "memory"}, {"op": "publish", "connection": EVIL}]
    return ["alarms", "run", _timeline(folder, steps, "2008")]


def running_timeline(folder: Path) -> list[str]:
    steps = [
        {"op": "consume", "connection": "consumer"},
        {"op": "publish", "connection": EVIL, "count": 2},
        {"op": "alarm", "source": "memory"},
        {"op": "clear", "source": "memory"},
    ]
    return ["alarms", "run", _timeline(folder, steps)]


def refused_timeline(folder: Path) -> list[str]:
    steps = [{"op": "publish", "connection": EVIL + "-unknown"}]
    return ["alarms", "run", _timeline(folder, steps)]


def _graph(folder: Path, **extra: object) -> str:
    doc = json.loads((SPEC / "graphs" / "cycle2.json").read_text())
    old = doc["nodes"][1]["id"]
    doc["nodes"][1] = {**doc["nodes"][1], "id": EVIL, **extra}
    for edge in doc["edges"]:
        for end in ("source", "target"):
            edge[end] = EVIL if edge[end] == old else edge[end]
    (folder / "graph.json").write_text(json.dumps(doc))
    return "graph.json"


def check_graph(folder: Path) -> list[str]:
    return ["check", _graph(folder)]


def prove_graph(folder: Path) -> list[str]:
    return ["prove", _graph(folder), "--timeout", "20"]


def refused_graph(folder: Path) -> list[str]:
    return ["check", _graph(folder, crash_after=3)]


def actor_graph(folder: Path) -> list[str]:
    doc = json.loads((SPEC / "graphs" / "accounts" / "seed-small.json").read_text())
    old = doc["nodes"][0]["id"]
    doc["nodes"][0]["id"] = EVIL
    for edge in doc["edges"]:
        for end in ("source", "target"):
            edge[end] = EVIL if edge[end] == old else edge[end]
    (folder / "actors.json").write_text(json.dumps(doc))
    return ["accounts", "check", "actors.json"]


def show_trace(folder: Path) -> list[str]:
    """``show`` of the deadlock trace that ``check`` wrote for the hostile graph."""
    graph = _graph(folder)
    subprocess.run(
        [sys.executable, "-m", "creditflow.conformance.cli", "check", graph, "--credit", "1,1"],
        cwd=folder,
        capture_output=True,
        timeout=300,
        check=False,
    )
    traces = sorted((folder / "counterexamples").glob("*.itf.json"))
    assert traces, "check wrote no trace"
    return ["show", str(traces[0])]


def paging_scenario(folder: Path) -> list[str]:
    doc = json.loads((SPEC / "paging" / "small-embedded.json").read_text())
    doc["name"] = EVIL
    doc["description"] = EVIL
    (folder / "scenario.json").write_text(json.dumps(doc))
    return ["paging", "scenario.json"]


ATTACKS: dict[str, Callable[[Path], list[str]]] = {
    "show": show_trace,
    "paging": paging_scenario,
    "alarms run, stuck step": stuck_timeline,
    "alarms run, steps": running_timeline,
    "alarms run, refused": refused_timeline,
    "check": check_graph,
    "prove": prove_graph,
    "check, refused": refused_graph,
    "accounts check": actor_graph,
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_input_names_are_printed_escaped(attack: str, tmp_path: Path) -> None:
    args = ATTACKS[attack](tmp_path)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "creditflow.conformance.cli", *args],
        cwd=tmp_path,
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in err, err
    for stream, text in (("stdout", out), ("stderr", err)):
        for raw in RAW:
            assert raw not in text, (attack, stream, text)
        # the name's line break would start a line with what follows it
        assert not any(
            line.startswith("\x1b[31mEVIL") or line.startswith("EVIL") for line in text.splitlines()
        ), (attack, stream, text)
    assert "EVIL" in out + err, (attack, out, err)  # the name was printed, escaped
    if done.returncode == 2:
        assert len(err.strip().splitlines()) == 1, err
