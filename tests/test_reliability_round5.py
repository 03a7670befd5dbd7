"""Reliability, fifth round (issue 37) and issue 38 point 6: verdicts, never a traceback,
for every input the reader accepts.

* EXP-ONE-ENCODING: a counterexample carries the system that made its states; the relay
  ``a -> b -> c`` with per-edge credits ``{2,1}`` then ``{2,3}`` (or ``{3,5}``) is
  answered for every supply with its 4- and 7-step witnesses and their traces, and a
  random cross-check of every-supply ``check`` against the search of each supply.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.symbolic.every_supply import decide_check
from creditflow.conformance.traces.network import network_trace, replay_network_document
from creditflow.model.network.graph import FlowGraph
from tests.strategies import process_graphs


def relay(tmp_path: Path, second: tuple[int, int]) -> Path:
    """The relay of issue 38 point 6 as a node-link file: ``a -> b -> c``, a reads 4."""
    doc = {
        "directed": True,
        "multigraph": False,
        "graph": {"name": "relay", "credit": [2, 1]},
        "nodes": [{"id": "a", "source": True, "publishes": 4}, {"id": "b"}, {"id": "c"}],
        "edges": [
            {"source": "a", "target": "b", "credit": [2, 1]},
            {"source": "b", "target": "c", "credit": list(second)},
        ],
    }
    path = tmp_path / "relay.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(("second", "length"), [((2, 3), 4), ((3, 5), 7)])
def test_relay_with_per_edge_credits_is_answered_for_every_supply(tmp_path, second, length):
    """EXP-ONE-ENCODING, SCOPE-SHORTEST: the shorter-supply exhaustion's deadlock (its
    states without the sinks' counters) is written as a trace and shown, not read with
    the counting encoding (``IndexError`` before); b is blocked forever."""
    graph = relay(tmp_path, second)
    trace = tmp_path / "relay.itf.json"
    result = CliRunner().invoke(
        main, ["check", str(graph), "--json", "--no-progress", "--trace-out", str(trace)]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == exit_codes.DEADLOCK, result.output
    report = json.loads(result.stdout)
    assert report["scope"] == {"supply": "every"}
    assert report["blocked_forever"] == ["b"]
    assert report["shortest_counterexample_length"] == length
    assert report["shortest_certified"] is True
    assert report["trace"] == str(trace)
    shown = CliRunner().invoke(main, ["show", str(trace)])
    assert shown.exit_code == 0, shown.output
    assert "b blocked forever" in shown.output


def explored(graph: FlowGraph) -> dict[str, int]:
    """The shortest violation per property of ``graph``'s own supply (every state)."""
    _, result = check_graph(graph, CheckOptions(max_states=20_000))
    assert result.complete, f"{graph.name}: a small graph's search did not complete"
    return {pid: f.length for pid, f in result.findings.items()}


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(process_graphs(max_nodes=3, max_publishes=2, acyclic=True, allow_stalled=False))
def test_every_supply_check_agrees_with_the_search_of_each_supply(graph):
    """EXP-ONE-ENCODING, SCOPE-ORDER, SCOPE-SHORTEST on random small acyclic graphs with per-edge
    credits: the every-supply answer never raises; its counterexample's trace is written
    and replays (TRACE-REPLAY); its run's supply, searched, gives the same violation at
    the same length when certified shortest, and no supply up to 2 per source a shorter
    deadlock; "holds for every supply" is contradicted by no supply's search."""
    decision = decide_check(graph, CheckOptions(stop_at_deadlock=True), True, True, 5.0)
    report, system, primary = decision.report, decision.system, decision.primary
    sources = [n.name for n in graph.nodes if n.source]
    per_supply = {
        supply: explored(graph.with_supplies(dict(zip(sources, supply, strict=True))))
        for supply in itertools.product(range(3), repeat=len(sources))
    }
    if report.exit_code == exit_codes.OK:
        assert primary is None
        assert all(not found for found in per_supply.values()), per_supply
        return
    for found in per_supply.values():
        for pid in found:
            assert report.properties.get(pid) is not True, (pid, report.claim)
    if primary is None:
        assert report.exit_code == exit_codes.INCOMPLETE
        return
    assert system is not None
    doc = network_trace(system, primary, graph.name)
    replayed = replay_network_document(json.loads(json.dumps(doc)))
    assert len(replayed.states) == len(primary.path) + len(primary.continuation)
    used = explored(system.graph)
    assert primary.property_id in used
    if primary.shortest:
        assert used[primary.property_id] == primary.length
        if primary.property_id == NO_DEADLOCK and decision.answered_by == "proof":
            lengths = [found[NO_DEADLOCK] for found in per_supply.values() if NO_DEADLOCK in found]
            assert all(primary.length <= n for n in lengths), (primary.length, lengths)
