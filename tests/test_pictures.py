"""EXP-PICTURE: a blocked-forever counterexample's picture marks every process blocked
forever in the drawn state (the end of the lasso), and says which was first."""

from __future__ import annotations

import pytest

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.traces.pictures import finding_dot


@pytest.mark.parametrize("reduce", [True, False])
@pytest.mark.parametrize("stop_at_deadlock", [False, True])
def test_stalled_queue_draws_the_reader_blocked_forever(
    reduce: bool, stop_at_deadlock: bool
) -> None:
    """EXP-PICTURE: in stalled-queue the channel is blocked forever first; by the end of
    the lasso the reader (throttled forever) is too, and the picture says both — also
    when the deadlock is reported on the fly (EXP-ONLINE, as ``check`` does), where the
    certificate (EXP-CERTIFICATE) names the others instead of the whole state graph."""
    options = CheckOptions(reduce=reduce, stop_at_deadlock=stop_at_deadlock)
    system, result = check_graph(load_preset("stalled-queue"), options)
    assert result.stopped_at_deadlock is stop_at_deadlock
    finding = result.primary()
    assert finding is not None and finding.kind == "blocked-forever"
    assert finding.processes == ("channel",)
    assert set(finding.final_processes) == {"reader", "channel"}
    dot = finding_dot(system, finding, "t")
    lines = {
        line.split(" [")[0].strip().strip('"'): line
        for line in dot.splitlines()
        if "[label=" in line and "->" not in line
    }
    assert "BLOCKED FOREVER (first)" in lines["channel"]
    assert "BLOCKED FOREVER" in lines["reader"] and "(first)" not in lines["reader"]
    assert "fillcolor=tomato" in lines["reader"]
    assert "BLOCKED" not in lines["queue"]


def test_terminal_deadlock_marks_all_without_first() -> None:
    """EXP-PICTURE: when every process was blocked forever from the start (cycle2), no
    process is singled out as first."""
    system, result = check_graph(load_preset("cycle2"), CheckOptions(all_check_blocked=True))
    finding = result.primary()
    assert finding is not None
    dot = finding_dot(system, finding, "t")
    assert "(first)" not in dot
    assert dot.count("BLOCKED FOREVER") == len(finding.final_processes) >= 2
