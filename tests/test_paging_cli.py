"""`creditflow paging`: presets, the per-step table, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json

from click.testing import CliRunner

from creditflow.conformance.cli import main


def run(*args: str):
    return CliRunner().invoke(main, ["paging", *args], catch_exceptions=False)


def test_lists_presets():
    result = run()
    assert result.exit_code == 0
    assert "large-tight-credit" in result.output and "small-embedded" in result.output


def test_table_shows_each_step_and_the_one_pass_state():
    """PG-SCENARIO via the CLI: a row per step, the one-pass row of a target step."""
    result = run("large-tight-credit")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "publish 40 x 5000 B transient" in out and "target 0 (one pass)" in out
    assert "↳ settled" in out and "q3" in out and "messages_ram" in out


def test_json_has_views_and_passes():
    """PG-STREAM: JSON Lines: a header, one line per step, a summary."""
    result = run("small-embedded", "--json")
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.output.splitlines()]
    doc, steps, end = lines[0], lines[1:-1], lines[-1]
    assert doc["scenario"] == "small-embedded" and doc["steps"] == len(steps)
    assert end == {"end": True, "steps": len(steps), "violation_count": 0, "violations": []}
    assert [s["index"] for s in steps] == list(range(1, len(steps) + 1))
    step2 = steps[1]
    assert step2["step"] == "target 0"
    assert [p["alphas_moved"] for p in step2["passes"]][:1] == [20]
    assert len(step2["after"]["q3"]) == 20 and len(step2["settled"]["q3"]) == 16
    assert doc["profile"]["store_credit"] == [10, 5]


def test_bad_scenario_is_exit_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"steps": [{"op": "publish"}]}))
    result = CliRunner().invoke(main, ["paging", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert f"{bad}: step 1 (publish): give exactly one of 'size' or 'sizes'" in result.stderr


def test_model_only_scenario_refuses_a_broker():
    result = CliRunner().invoke(main, ["paging", "slow-store", "--against-broker"])
    assert result.exit_code == 2 and "cannot run on a broker" in result.stderr


def test_a_property_violation_is_exit_12(monkeypatch):
    """A violated PROP-PG property (here: a model broken on purpose) exits 12."""
    from creditflow.conformance.cli import paging as cli_paging

    monkeypatch.setattr(
        cli_paging, "check", lambda profile, st, reports=(): {"PROP-PG-ORDER": "broken"}
    )
    result = run("embed-boundary")
    assert result.exit_code == 12 and "PROP-PG-ORDER" in result.output
