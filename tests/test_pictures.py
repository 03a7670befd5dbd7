"""EXP-PICTURE: a counterexample's picture draws the violating state: for a
blocked-forever deadlock the state where the victim becomes blocked forever, not the
end of the lasso continuation."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CREDIT_FROM, DATA, EDGE_FIELDS
from creditflow.conformance.inputs.graphs import load_graph_file, load_preset
from creditflow.conformance.traces.pictures import finding_dot

ROOT = Path(__file__).resolve().parent.parent


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


def test_a_huge_picture_is_written_as_dot_without_layout(tmp_path) -> None:
    """EXP-PICTURE-SIZE: above MAX_LAYOUT_LINES the DOT is written and no SVG is drawn
    (Graphviz is not even started, so it returns at once); at the limit the SVG is."""
    import shutil
    import time

    from creditflow.conformance.traces import pictures

    body = "".join(f"  n{i} -> n{i + 1};\n" for i in range(pictures.MAX_LAYOUT_LINES + 10))
    huge = "digraph g {\n" + body + "}\n"
    started = time.perf_counter()
    dot, svg = pictures.write_picture(huge, tmp_path / "huge.dot")
    assert svg is None and dot.read_text() == huge
    assert time.perf_counter() - started < 1
    assert "EXP-PICTURE-SIZE" in (pictures.layout_refusal(huge) or "")
    small = "digraph g {\n" + body.split("\n", 100)[0] + "\n}\n"
    assert pictures.layout_refusal(small) is None
    if shutil.which("dot"):
        assert pictures.write_picture(small, tmp_path / "small.dot")[1] is not None


def test_check_says_in_one_line_why_there_is_no_svg(tmp_path, monkeypatch) -> None:
    """EXP-PICTURE-SIZE: `check` writes the trace and the DOT, says in one stderr line
    that no SVG was drawn, and keeps its verdict (exit 10, `svg` null)."""
    import json

    from creditflow.conformance.traces import pictures

    monkeypatch.setattr(pictures, "MAX_LAYOUT_LINES", 5)
    trace = tmp_path / "sq.itf.json"
    args = ["check", "stalled-queue", "--publishes", "4", "--trace-out", str(trace), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 10, result.output
    report = json.loads(result.stdout)
    assert report["svg"] is None and report["dot"] and trace.exists()
    notes = [line for line in result.stderr.splitlines() if "EXP-PICTURE-SIZE" in line]
    assert len(notes) == 1 and notes[0].startswith("picture: no SVG drawn")


def test_fault_picture_blames_the_dead_process() -> None:
    """EXP-PICTURE-BLAME: in dead-mirror-3.8.10-bug the channel is blocked on the live
    master and on the dead mirror; only the mirror never releases it, so the thick chain
    runs reader -> channel -> mirror, not to the healthy master."""
    system, result = check_graph(
        load_graph_file(ROOT / "spec/graphs/bugs/dead-mirror-3.8.10-bug.json"),
        CheckOptions(),
    )
    finding = result.findings["PROP-NO-DEADLOCK"]
    dot = finding_dot(system, finding, "t")
    edges = {line.split(" [")[0].strip(): line for line in dot.splitlines() if " -> " in line}
    assert "penwidth" in edges['"channel" -> "mirror"']
    assert "penwidth" not in edges['"channel" -> "master"']
    assert "penwidth" in edges['"reader" -> "channel"']
