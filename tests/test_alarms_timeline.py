"""AL-TIMELINE: ``creditflow alarms run TIMELINE`` runs publish / alarm / consume /
clear steps through the alarm model and shows the state after each. Cost: < 1 s."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from creditflow.adapters.rabbitmq.alarms import model_alarm_run
from creditflow.conformance.cli import main
from creditflow.conformance.inputs.alarm_timelines import (
    load_timeline,
    run_timeline,
    state_view,
    timeline_names,
)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["alarms", "run", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_shipped_timeline_matches_the_broker_scenario() -> None:
    """AL-TIMELINE: the shipped memory-alarm timeline is AL-BROKER's scenario; every
    step ends in the state AL-BROKER's checkpoints predict (connection states, frames
    received so far, consumed, queued)."""
    assert {"memory-alarm", "two-sources"} <= set(timeline_names())
    timeline = load_timeline("memory-alarm")
    expected, _ = model_alarm_run(10, 3)
    frames: dict[str, list[str]] = {"publisher": [], "consumer": []}
    results = list(run_timeline(timeline))
    assert len(results) == len(expected.checkpoints) == 5
    for result, want in zip(results, expected.checkpoints, strict=True):
        for n in result.notices:
            frames[n.connection].append(n.method)
        view = state_view(timeline, result.state)
        assert view.connections == want.states, want.name
        assert {k: tuple(v) for k, v in frames.items()} == want.notices, want.name
        assert view.consumed["consumer"] == want.consumed
        assert view.queued == want.queued
        assert result.violations == []


def test_cli_table_and_json_lines() -> None:
    """AL-TIMELINE: a row per step; --json gives a header, one line per step, a summary."""
    code, out, _ = invoke("two-sources")
    assert code == 0
    assert "memory alarm cleared (rabbit@n1)" in out and "publisher: unblocked" in out
    code, out, _ = invoke("two-sources", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and lines[0]["steps"] == 8 == len(lines) - 2
    assert lines[-1] == {"end": True, "steps": 8, "violations": []}
    # AL1: clearing memory while disk is still alarmed keeps the publisher blocked.
    assert lines[6]["connections"]["publisher"] == "blocked"
    assert lines[8]["connections"]["publisher"] == "running"
    assert lines[8]["frames"] == [["publisher", "connection.unblocked", ""]]


def test_bad_timelines_are_one_line_exit_2(tmp_path: Path) -> None:
    """AL-TIMELINE: a bad file or a step the model cannot take: one line, exit 2."""
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {"connections": [{"name": "p"}], "steps": [{"op": "publish", "connection": "q"}]}
        )
    )
    code, _, err = invoke(str(bad))
    assert code == 2 and err.count("\n") == 1
    assert f"{bad}: step 1 (publish) connection must be a string (one of p)" in err
    stuck = tmp_path / "stuck.json"
    stuck.write_text(
        json.dumps(
            {
                "profile": "2008",
                "connections": [{"name": "p"}],
                "steps": [{"op": "alarm"}, {"op": "publish", "connection": "p"}],
            }
        )
    )
    code, _, err = invoke(str(stuck))
    assert code == 2 and "step 2 (p publishes 1): publish(p) is not possible" in err
