"""EXP-PICTURE: a counterexample's picture draws the violating state: for a
blocked-forever deadlock the state where the victim becomes blocked forever, not the
end of the lasso continuation."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CREDIT_FROM, DATA, EDGE_FIELDS
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.traces.pictures import finding_dot


def node_lines(dot: str) -> dict[str, str]:
    return {
        line.split(" [")[0].strip().strip('"'): line
        for line in dot.splitlines()
        if "[label=" in line and "->" not in line
    }


@pytest.mark.parametrize("reduce", [True, False])
@pytest.mark.parametrize("stop_at_deadlock", [False, True])
def test_stalled_queue_draws_the_state_where_the_channel_is_stuck(
    reduce: bool, stop_at_deadlock: bool
) -> None:
    """EXP-PICTURE: in stalled-queue (credit {2,1}) the channel is blocked forever after
    4 steps; the picture shows that state (2 messages in the queue's mailbox, the
    channel's credit 0), not the end of the lasso (where the reader is stuck too and
    the mailbox holds more) — also when the deadlock is reported on the fly
    (EXP-ONLINE, as ``check`` does)."""
    options = CheckOptions(reduce=reduce, stop_at_deadlock=stop_at_deadlock)
    system, result = check_graph(load_preset("stalled-queue"), options)
    finding = result.primary()
    assert finding is not None and finding.kind == "blocked-forever"
    assert finding.length == 4 and finding.processes == ("channel",)
    assert set(finding.final_processes) == {"reader", "channel"}
    assert finding.continuation, "the lasso goes on past the violating state"
    violating = finding.path[-1][1]
    end = finding.continuation[-1][1]
    queue_edge = 1  # channel -> queue
    assert violating[EDGE_FIELDS * queue_edge + DATA] == 2
    assert end[EDGE_FIELDS * queue_edge + DATA] > 2
    dot = finding_dot(system, finding, "t")
    lines = node_lines(dot)
    assert "BLOCKED FOREVER" in lines["channel"] and "fillcolor=tomato" in lines["channel"]
    assert "BLOCKED" not in lines["reader"] and "BLOCKED" not in lines["queue"]
    assert f"credit {violating[EDGE_FIELDS * queue_edge + CREDIT_FROM]}" in dot
    assert "data 2," in dot and f"data {end[EDGE_FIELDS * queue_edge + DATA]}," not in dot


def test_terminal_deadlock_marks_every_victim() -> None:
    """EXP-PICTURE: when every process is blocked forever at once (cycle2), each is
    marked and none singled out as first."""
    system, result = check_graph(load_preset("cycle2"), CheckOptions(all_check_blocked=True))
    finding = result.primary()
    assert finding is not None
    dot = finding_dot(system, finding, "t")
    assert "(first)" not in dot
    assert dot.count("BLOCKED FOREVER") == len(finding.processes) >= 2


def test_check_title_names_the_violating_step(tmp_path) -> None:
    """EXP-PICTURE through ``check`` exploring the preset's supply: the picture's title
    is "after 4 steps" and no later state; the text names the reader as blocked
    forever later."""
    trace = tmp_path / "sq.itf.json"
    result = CliRunner().invoke(
        main, ["check", "stalled-queue", "--graph-supply", "--trace-out", str(trace)]
    )
    assert result.exit_code == 10, result.output
    dot = (tmp_path / "sq.dot").read_text()
    assert "after 4 steps" in dot and "state after" not in dot
    assert "blocked forever: channel (later also: reader)" in result.stdout
