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
from typing import Any

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


# -- issue 37 class 6: limits and types, for every family's reader ---------------------------

SPEC = Path(__file__).resolve().parent.parent / "spec"


def _net(path: str) -> object:
    from creditflow.conformance.inputs.graphs import load_graph

    return load_graph(path)


def _amqp(path: str) -> object:
    from creditflow.conformance.inputs.amqp_topologies import load_amqp_topology

    return load_amqp_topology(path)


def _paging(path: str) -> object:
    from creditflow.conformance.inputs.paging_scenarios import load_scenario

    return load_scenario(path)


def _actors(path: str) -> object:
    from creditflow.conformance.inputs.actor_graphs import load_actor_graph

    return load_actor_graph(path)


def _alarms(path: str) -> object:
    from creditflow.conformance.inputs.alarm_timelines import load_timeline

    return load_timeline(path)


#: per family: its reader, a shipped input, and how to set that input's name
READERS = {
    "credit_flow": (_net, SPEC / "graphs" / "cycle2.json", ("graph", "name")),
    "amqp": (_amqp, SPEC / "graphs" / "amqp" / "rabbitmq4-consume.json", ("graph", "name")),
    "paging": (_paging, SPEC / "paging" / "small-embedded.json", ("name",)),
    "accounts": (_actors, SPEC / "graphs" / "accounts" / "rpc.json", ("graph", "name")),
    "alarms": (_alarms, SPEC / "alarms" / "memory-alarm.json", ("name",)),
}


def refused_in_one_line(reader, doc: dict, tmp_path: Path) -> str:
    """The reader's error for ``doc`` written to a file: one line naming the file."""
    from creditflow.conformance.inputs.reading import InputError

    path = tmp_path / "input.json"
    path.write_text(json.dumps(doc))
    with pytest.raises((InputError, ValueError)) as exc:
        reader(str(path))
    text = str(exc.value)
    assert "\n" not in text and str(path) in text, text
    return text


def named(doc: dict, where: tuple[str | int, ...], value: object) -> dict:
    """A copy of ``doc`` with ``value`` at ``where``."""
    doc = json.loads(json.dumps(doc))
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return doc


@pytest.mark.parametrize("family", sorted(READERS))
@pytest.mark.parametrize("bad", ["x" * 5000, ["a", {"b": 1}], {"a": 1}, 7, ""])
def test_a_bad_name_is_refused_by_every_familys_reader(tmp_path, family, bad):
    """IN-LIMITS, IN-SCHEMA: a 5,000-character name, a list, an object, a number or an
    empty string as the name is refused in one line naming the file, never printed as a
    Python repr (``['a', {'b': 1}]``); 1,024 characters are taken."""
    reader, shipped, where = READERS[family]
    doc = json.loads(shipped.read_text())
    text = refused_in_one_line(reader, named(doc, where, bad), tmp_path)
    assert "['a'" not in text and "{'a'" not in text
    if isinstance(bad, str) and bad:
        assert "1,024" in text or "1024" in text
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(named(doc, where, "n" * 1024)))
    assert reader(str(ok)) is not None


def test_the_name_limit_is_in_limits_own():
    """IN-LIMITS: the input layer's name limit is the model's MAX_NAME_LENGTH."""
    from creditflow.conformance.inputs.reading import MAX_NAME_CHARS
    from creditflow.model.network.graph import MAX_NAME_LENGTH

    assert MAX_NAME_CHARS == MAX_NAME_LENGTH == 1024


AMQP_PRESET = SPEC / "graphs" / "amqp" / "rabbitmq4-consume.json"


@pytest.mark.parametrize(
    ("where", "value", "path"),
    [
        (("edges", 0, "source"), ["qq"], "edges[0].source"),
        (("edges", 0, "target"), {"id": "relay"}, "edges[0].target"),
        (("nodes", 0, "kind"), ["queue"], "nodes[0] (qq).kind"),
        (("nodes", 1, "id"), ["relay"], "nodes[1].id"),
        (("nodes", 4, "role"), ["receiver"], "role"),
        (("nodes", 4, "credit", "policy"), ["window"], "credit.policy"),
        (("nodes", 2, "window", "policy"), {"p": 1}, "window.policy"),
        (("nodes", 0, "consumer", "mode"), ["credited"], "consumer.mode"),
        (("nodes", 4, "grants"), {"a": 1}, "grants"),
        (("nodes", 0, "consumer", "prefech"), 3, "consumer"),
    ],
)
def test_a_wrong_type_in_a_topology_is_refused_with_its_path(tmp_path, where, value, path):
    """IN-SCHEMA, AMQ-TOPOLOGY: a list or object where an id, kind or policy is expected,
    and an unknown key in a queue's ``consumer`` (``prefech``), exit 2 with the JSON path
    of the place, never ``TypeError: unhashable type``."""
    doc = named(json.loads(AMQP_PRESET.read_text()), where, value)
    text = refused_in_one_line(_amqp, doc, tmp_path)
    assert path in text, text
    result = CliRunner().invoke(main, ["check", str(tmp_path / "input.json"), "--no-progress"])
    assert result.exit_code == exit_codes.USAGE, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and path in result.stderr


# -- issue 37 class 8: --trace-out DIR ------------------------------------------------------
# issue 38: a folder the user names holds the trace (OUT-TARGET): tests/test_output_targets.py


# -- issue 37 class 9: an adapter's start-up deadline ---------------------------------------

SLOW_ADAPTER = """
import os, sys, time
time.sleep(float(sys.argv[1]))
sys.path.insert(0, {adapters!r})
import python_template
python_template.main()
"""


def slow_adapter(tmp_path: Path) -> list[str]:
    import sys

    script = tmp_path / "slow_adapter.py"
    adapters = str(Path(__file__).resolve().parent.parent / "adapters")
    script.write_text(SLOW_ADAPTER.format(adapters=adapters))
    return [sys.executable, str(script)]


def test_a_slow_adapter_starts_within_the_configured_start_deadline(tmp_path, monkeypatch):
    """AD-START-DEADLINE: an adapter that takes 1.5 s to answer ``hello`` hangs against a
    start-up deadline of 0.5 s, and the message names that deadline and how to set it;
    CREDITFLOW_ADAPTER_START_TIMEOUT=10 lets the same adapter start (the caller's 0.5 s
    is overridden); a bad value is refused in one line."""
    from creditflow.conformance.differential.adapter import HANG, REFUSED, AdapterFailure
    from creditflow.conformance.differential.transport import (
        START_TIMEOUT_ENV,
        JsonLinesProcess,
    )

    argv = slow_adapter(tmp_path)
    monkeypatch.delenv(START_TIMEOUT_ENV, raising=False)
    with pytest.raises(AdapterFailure) as info:
        JsonLinesProcess([*argv, "1.5"], start_timeout=0.5)
    assert info.value.kind == HANG
    assert "start-up deadline" in str(info.value) and START_TIMEOUT_ENV in str(info.value)
    monkeypatch.setenv(START_TIMEOUT_ENV, "10")
    adapter = JsonLinesProcess([*argv, "1.5"], start_timeout=0.5)
    try:
        assert adapter.info["name"]
    finally:
        adapter.close()
    monkeypatch.setenv(START_TIMEOUT_ENV, "soon")
    with pytest.raises(AdapterFailure) as info:
        JsonLinesProcess([*argv, "0"])
    assert info.value.kind == REFUSED and "\n" not in str(info.value)
    assert f"{START_TIMEOUT_ENV}=soon" in str(info.value)
