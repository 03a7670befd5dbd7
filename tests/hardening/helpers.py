"""Shared pieces of the hardening tests: running ``creditflow`` (in-process or as a real
subprocess), the one-line error check, and process liveness read from /proc."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from creditflow.conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).with_name("hostile_adapter.py")
CF = [sys.executable, "-m", "creditflow.conformance.cli"]
#: Every exit code a command may return (README's table).
DOCUMENTED = {0, 1, 2, 3, 4, 5, 10, 12, 130, 143}
#: Graph names an attacker (or an unlucky user) may put into an input file.
HOSTILE_NAMES = {
    "absolute": "@ABS@",  # replaced by an absolute path inside the test's folder
    "dotdot": "../../escaped",
    "long": "n" * 300,
    "nul": "nul\x00name",
    "newline": "new\nline",
    "control": "ctl\x1b[31m\x07bell",
    "dot": "..",
}


def invoke(*args: str) -> tuple[int, str, str]:
    """Run ``creditflow ARGS`` in-process; exit code, stdout, stderr."""
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run(*args: str, cwd: Path, timeout: float = 60, **kw: Any) -> subprocess.CompletedProcess:
    """Run ``creditflow ARGS`` as a real subprocess."""
    return subprocess.run(
        [*CF, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, **kw
    )


def one_error_line(stderr: str) -> str:
    """The single stderr line of a failing command (no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].isprintable(), repr(lines[0])
    return lines[0]


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (read from /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pids: list[int], within: float = 3.0) -> bool:
    """Whether every pid has died (SIGKILL is delivered asynchronously)."""
    import time

    deadline = time.monotonic() + within
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc's parent links)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


def graph_json(name: str, deadlocks: bool = True) -> str:
    """cycle2 (deadlocks with credit 1,1) under another name, as node-link JSON."""
    return json.dumps(
        {
            "directed": True,
            "multigraph": False,
            "graph": {"name": name, "credit": [1, 1] if deadlocks else [2, 1]},
            "nodes": [{"id": "A", "source": True, "publishes": 4}, {"id": "B"}],
            "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "A"}],
        }
    )


def graph_graphml(name: str) -> str:
    from xml.sax.saxutils import escape

    return f"""<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="gname" for="graph" attr.name="name" attr.type="string"/>
  <key id="gcredit" for="graph" attr.name="credit" attr.type="string"/>
  <key id="src" for="node" attr.name="source" attr.type="boolean"/>
  <key id="pub" for="node" attr.name="publishes" attr.type="int"/>
  <graph edgedefault="directed">
    <data key="gname">{escape(name)}</data>
    <data key="gcredit">1,1</data>
    <node id="A"><data key="src">true</data><data key="pub">4</data></node>
    <node id="B"/>
    <edge source="A" target="B"/><edge source="B" target="A"/>
  </graph>
</graphml>
"""


def graph_dot(name: str) -> str:
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return (
        f'digraph "{quoted}" {{ credit="1,1"; A [source=true, publishes=4]; B; A -> B; B -> A; }}\n'
    )


def actor_graph_json(name: str) -> str:
    path = ROOT / "spec" / "graphs" / "accounts" / "slow-consumer.json"
    doc = json.loads(path.read_text())
    doc["graph"]["name"] = name
    return json.dumps(doc)


def hostile_adapter(mode: str, pidfile: Path | None = None) -> str:
    return f"{sys.executable} {HOSTILE} {mode}" + (f" {pidfile}" if pidfile else "")
