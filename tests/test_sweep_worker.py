"""The per-case work of an executor: verdicts, budgets, failures as results (no Spark)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.inputs.itf import validate_document
from creditflow.conformance.sweep.cases import expand
from creditflow.conformance.sweep.driver import make_batches
from creditflow.conformance.sweep.sweepfile import parse_sweep
from creditflow.conformance.sweep.worker import KILLED_EXIT, case_graph, run_batch
from creditflow.conformance.traces.network import replay_network_document

ROOT = Path(__file__).resolve().parent.parent

SWEEP = """
name = "w"
seed = 3
[budget]
max_states = {max_states}
max_seconds = {max_seconds}
[settings]
credits = {{ grid = {{ initial = [1, 2], more_after = [1] }} }}
variants = ["faithful", "all-check"]
publishes = [2]
checkers = ["{checker}"]
[[family]]
kind = "random-cyclic"
name = "cyc"
nodes = 3
edges = 3
[[family]]
kind = "broker"
name = "b"
"""


def cases_of(checker: str = "explore", max_states: int = 20000, max_seconds: float = 20):
    spec = parse_sweep(
        SWEEP.format(checker=checker, max_states=max_states, max_seconds=max_seconds),
        "w.toml",
        plugins=["tests.sweep_plugins"],
    )
    return expand(spec)[0]


def run_all(cases):
    (batch,) = make_batches(cases, len(cases))
    results = run_batch(batch)
    assert [r["case_id"] for r in results] == [t.case_id for t in batch.tasks]
    by_id = {c.case_id: c for c in cases}
    return [(by_id[r["case_id"]], r) for r in results]


def test_results_match_a_direct_check():
    """SW-CHECKER, SW-ROW: each result's verdict and figures are check_graph's on the case's
    graph; counterexamples come back as replayable ITF traces (SW-TRACE, TRACE-REPLAY)."""
    seen = set()
    for case, result in run_all(cases_of()):
        graph = case_graph(case.graph.graph, case.task)
        system, direct = check_graph(graph, CheckOptions(max_states=case.task.max_states))
        expected = summary(system, direct)
        assert result["states"] == expected.states
        assert result["deadlock"] == expected.deadlock
        assert result["conservation"] == expected.conservation
        assert result["complete"] == expected.complete
        assert result["shortest_counterexample"] == expected.shortest_counterexample_length
        assert result["error"] is None
        seen.add(result["verdict"])
        if expected.deadlock:
            assert result["verdict"] == "deadlock"
            doc = json.loads(zlib.decompress(result["trace_z"]))
            validate_document(doc)
            replayed = replay_network_document(doc)
            assert len(replayed.states) - 1 >= result["shortest_counterexample"]
        else:
            assert result["trace_z"] is None
    assert "deadlock" in seen and "holds" in seen


def test_prove_checker_agrees_with_explore():
    """SW-CHECKER, Z3-PROVE: where both decide, the Z3 checker's verdicts are the
    explorer's (where Z3 cannot prove, the case is incomplete, never a wrong verdict);
    its counterexample is a replayable trace; it explores no states."""
    text = textwrap.dedent("""
        name = "p"
        [budget]
        max_seconds = 60
        [settings]
        credits = { specs = [[1, 1], [2, 1]] }
        variants = ["all-check"]
        publishes = [2]
        checkers = ["explore", "prove"]
        [[family]]
        kind = "layered"
        widths = [1, 2]
        [[family]]
        kind = "random-cyclic"
        nodes = 2
        edges = 2
    """)
    cases = expand(parse_sweep(text, "p.toml"))[0]
    results = {(c.graph.graph_id, c.task.credit, c.task.checker): r for c, r in run_all(cases)}
    verdicts = set()
    for (graph_id, credit, checker), proved in results.items():
        if checker != "prove":
            continue
        explored = results[(graph_id, credit, "explore")]
        assert explored["complete"] and proved["states"] is None
        if proved["verdict"] == "incomplete":
            assert proved["deadlock"] is None or proved["deadlock"] == explored["deadlock"]
            continue
        assert (proved["verdict"], proved["deadlock"], proved["conservation"]) == (
            explored["verdict"],
            explored["deadlock"],
            explored["conservation"],
        )
        assert proved["exit_code"] == explored["exit_code"]
        verdicts.add(proved["verdict"])
        if proved["deadlock"]:
            replay_network_document(json.loads(zlib.decompress(proved["trace_z"])))
    assert verdicts == {"holds", "deadlock"}


def test_state_budget_gives_incomplete():
    """SW-BUDGET, EXP-BUDGET: a tiny state budget leaves undecided cases 'incomplete'
    with null (not false) deadlock verdicts."""
    results = [r for _, r in run_all(cases_of(max_states=5))]
    incomplete = [r for r in results if r["verdict"] == "incomplete"]
    assert incomplete
    assert all(r["deadlock"] is None and not r["complete"] for r in incomplete)


def test_wall_clock_budget_gives_timeout_rows():
    """SW-BUDGET: a checker past max_seconds is interrupted; the rest of the batch runs."""
    started = time.monotonic()
    results = run_all(cases_of("tests.sweep_plugins:spin_on_cycles", max_seconds=0.3))
    elapsed = time.monotonic() - started
    timeouts = [(c, r) for c, r in results if r["verdict"] == "timeout"]
    others = [(c, r) for c, r in results if r["verdict"] != "timeout"]
    assert timeouts and others
    assert all(c.graph.features["has_cycle"] for c, _ in timeouts)
    assert all(not c.graph.features["has_cycle"] for c, _ in others)
    for _, r in timeouts:
        assert 0.3 <= r["seconds"] < 2.0
        assert r["states"] >= 1000 and "max_seconds = 0.3" in r["error"]
    assert elapsed < 0.3 * len(timeouts) + 10


def test_errors_become_results():
    """SW-FAILURE: a checker that raises gives an 'error' result naming the exception
    and where; the other cases still get verdicts."""
    results = run_all(cases_of("tests.sweep_plugins:raise_on_cycles"))
    errors = [r for c, r in results if r["verdict"] == "error"]
    assert errors and len(errors) < len(results)
    assert all(r["error"].startswith("RuntimeError: refusing cyc") for r in errors)
    assert all("sweep_plugins.py:" in r["error"] for r in errors)


def test_watchdog_kills_a_case_no_signal_can_stop(tmp_path):
    """SW-BUDGET: a case that blocks the alarm is killed at 2 x max_seconds + 5 s: the
    worker process exits with KILLED_EXIT and says which case."""
    script = tmp_path / "deaf.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.test_sweep_worker import cases_of, run_all
        cases = [c for c in cases_of("tests.sweep_plugins:deaf_on_cycles", max_seconds=0.2)
                 if c.graph.features["has_cycle"]]
        run_all(cases[:1])
        print("not killed")
    """)
    )
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == KILLED_EXIT, proc.stderr
    assert "overran its hard time limit" in proc.stderr
    assert "not killed" not in proc.stdout
    assert 5.4 <= elapsed < 30
