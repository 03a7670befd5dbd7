"""AMQ-DIRECTED-RUN: violations at real sizes (a ring of 2,048 slots, credit 10,000 as a
delta, a threshold reset at a window of 10,000) found by directed runs after a bounded
breadth-first search; on every small shipped shape the directed run agrees with the
breadth-first search on the property and is never shorter than its shortest witness;
nothing found at real sizes is exit 4, never 0 (SCOPE-EXIT)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.checking import check_amqp, search
from creditflow.conformance.families.amqp.directed import directed_runs
from creditflow.conformance.inputs.amqp_topologies import topology_from_dict
from creditflow.model.amqp import properties, system

ROOT = Path(__file__).resolve().parents[1]
SHAPES = sorted(p.stem for p in (ROOT / "spec/graphs/amqp").glob("*.json"))


def _doc(name: str) -> dict:
    return json.loads((ROOT / "spec/graphs/amqp" / f"{name}.json").read_text())


def _nodes(doc: dict) -> dict:
    return {n["id"]: n for n in doc["nodes"]}


def _ring_2048() -> dict:
    d = _doc("ring-one-held")
    n = _nodes(d)
    n["receiver-session"]["window"]["slots"] = 2048
    n["receiver"]["credit"].update(window=10_000, threshold=5_000)
    n["sender"]["publishes"] = 2050
    return d


def _real_link(name: str) -> dict:
    d = _doc(name)
    n = _nodes(d)
    n["receiver"]["credit"].update(window=10_000, threshold=5_000)
    n["sender"]["publishes"] = 20_000
    for s in ("sender-session", "receiver-session"):
        n[s]["window"].update(window=65_535, threshold=32_767)
    return d


@pytest.mark.parametrize("name", SHAPES)
def test_directed_runs_agree_with_the_search_on_small_shapes(name):
    """AMQ-DIRECTED-RUN on every shipped shape: the same property as breadth first, a
    witness that replays step by step and is at least as long as the shortest."""
    t = topology_from_dict(_doc(name), name)
    bfs = search(t)
    run = directed_runs(t).witness
    if bfs.violation is None:
        assert run is None
        return
    assert run is not None and run.prop == bfs.violation.prop
    assert len(run.steps) >= len(bfs.violation.steps)
    s = system.initial_state(t)
    for action, state in zip(run.steps, run.states[1:], strict=True):
        s = system.step(t, s, action)
        assert s == state
    assert run.prop in properties.state_violations(t, s) or properties.stalled(t, s)


@pytest.mark.parametrize(
    ("doc", "prop", "code", "shortest"),
    [
        (_ring_2048, "PROP-AMQ-NO-STALL", 10, False),
        (lambda: _real_link("credit-as-delta"), "PROP-AMQ-AGREE", 12, False),
        # the hand grant of 1 stalls after 6 steps at any window: the bounded search finds it
        (lambda: _real_link("threshold-reset-by-grant"), "PROP-AMQ-NO-STALL", 10, True),
    ],
)
def test_stall_shapes_at_real_sizes_are_found(doc, prop, code, shortest):
    """AMQ-DIRECTED-RUN: at real sizes the bounded search decides nothing; the directed
    run finds the violation; the claim says the witness is not proved shortest (unless
    the bounded breadth-first search found it, then it is the shortest)."""
    t = topology_from_dict(doc(), "real")
    result = check_amqp(t, None, True, max_states=10_000)
    v = result.search.violation
    assert v is not None and v.prop == prop and result.shortest == shortest
    assert result.exit_code == code
    assert ("shortest not established" in result.claim) != shortest


def test_nothing_found_at_real_sizes_is_exit_4_never_0():
    """SCOPE-EXIT under AMQ-DIRECTED-RUN: a run that meets no violation proves nothing."""
    d = _doc("rabbitmq4-consume")
    _nodes(d)["qq"]["ready"] = 1_000
    result = check_amqp(topology_from_dict(d, "c"), None, False, max_states=2_000)
    assert result.search.violation is None and not result.search.complete
    assert result.directed_steps > 0 and result.exit_code == 4
    assert "directed runs" in result.claim and "not established" in result.claim


def test_check_prints_a_real_size_witness(tmp_path):
    """AMQ-DIRECTED-RUN through ``creditflow check``: exit 10, the claim in words."""
    f = tmp_path / "ring.json"
    f.write_text(json.dumps(_ring_2048()))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["check", str(f), "--trace-out", str(out / "r.itf.json"), "--max-states", "10000"]
    )
    assert result.exit_code == 10, result.output
    assert "PROP-AMQ-NO-STALL violated after" in result.output
    assert "a directed run's witness; shortest not established" in result.output


@pytest.mark.parametrize(("big", "shortest"), [(False, True), (True, False)])
def test_the_json_document_says_whether_the_witness_is_shortest(tmp_path, big, shortest):
    """AMQ-CHECK-JSON under AMQ-DIRECTED-RUN: ``violation.shortest`` is false for a
    directed run's witness, true for breadth first's; the schema requires it."""
    import jsonschema

    f = tmp_path / "ring.json"
    f.write_text(json.dumps(_ring_2048() if big else _doc("ring-one-held")))
    result = CliRunner().invoke(
        main, ["check", str(f), "--json", "--trace-out", str(tmp_path / "r.itf.json")]
    )
    doc = json.loads(result.output.splitlines()[-1])
    assert result.exit_code == 10 and doc["violation"]["shortest"] is shortest
    jsonschema.validate(doc, json.loads((ROOT / "spec/schemas/check.json").read_text()))


def test_a_trace_checked_with_publishes_replays(tmp_path):
    """AMQ-TRACE: the topology embedded in the trace carries the supply checked
    (``--publishes``), so ``show`` replays it (TRACE-REPLAY) instead of exit 2."""
    trace = tmp_path / "r.itf.json"
    checked = CliRunner().invoke(
        main, ["check", "ring-one-held", "--publishes", "5", "--trace-out", str(trace)]
    )
    assert checked.exit_code == 10, checked.output
    shown = CliRunner().invoke(main, ["show", str(trace)])
    assert shown.exit_code == 0, shown.output


def _random_link(rng) -> dict:
    """A small random ``link`` topology: a random window policy on the receiving
    session, a random credit window, holds and supply."""
    window = rng.choice(
        [
            {"policy": "fixed", "window": rng.randint(1, 4), "threshold": 0},
            {"policy": "never", "window": rng.randint(1, 4)},
            {"policy": "ring", "slots": rng.randint(1, 3)},
        ]
    )
    if window["policy"] == "fixed":
        window["threshold"] = rng.randint(0, window["window"] - 1)
    w = rng.randint(1, 3)
    credit = {
        "policy": "window",
        "window": w,
        "threshold": rng.randint(0, w - 1),
        "count": rng.choice(["credit", "since_grant"]),
        "encoding": rng.choice(["absolute", "absolute", "delta"]),
    }
    d = _doc("ring-one-held")
    n = _nodes(d)
    n["receiver-session"]["window"] = window
    n["receiver"]["credit"] = credit
    n["receiver"]["holds"] = rng.randint(0, 1)
    n["sender"]["publishes"] = rng.randint(1, 4)
    return d


def test_directed_runs_are_sound_on_random_small_topologies():
    """AMQ-DIRECTED-RUN against a complete breadth-first search on 60 seeded random
    small topologies: a directed violation is one breadth first also finds, no shorter
    than its shortest, and replays; where breadth first finds nothing, neither does it."""
    import random

    rng = random.Random(28)
    found = 0
    for i in range(60):
        t = topology_from_dict(_random_link(rng), f"random-{i}")
        bfs = search(t, 200_000)
        assert bfs.complete or bfs.violation is not None
        run = directed_runs(t).witness
        if run is None:
            continue
        found += 1
        assert bfs.violation is not None and len(run.steps) >= len(bfs.violation.steps)
        s = system.initial_state(t)
        for action in run.steps:
            s = system.step(t, s, action)
        assert s == run.states[-1]
        assert run.prop in properties.state_violations(t, s) or properties.stalled(t, s)
    assert found > 0
