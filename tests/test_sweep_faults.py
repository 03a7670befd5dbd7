"""Sweeps over fault settings (SW-FAULTS, issue 19): family options that make processes
crashable, the explorer's fault semantics per case, and rows that carry the setting.
The local path only (run_batch, the executor's work, and the Parquet rows), no Spark."""

from __future__ import annotations

import random
import textwrap

import pytest

from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.sweep.cases import expand, graph_digest
from creditflow.conformance.sweep.families import FAMILY_KINDS
from creditflow.conformance.sweep.report import sweep_report
from creditflow.conformance.sweep.schema import rows_to_table
from creditflow.conformance.sweep.sweepfile import SweepFileError, parse_sweep
from creditflow.conformance.sweep.worker import case_graph
from creditflow.model.network.graph import flow_graph_from_networkx
from tests.sweep_rows import sweep_rows

FAULT_SWEEP = textwrap.dedent("""
    name = "faults"
    seed = 1
    [budget]
    max_states = 200000
    max_seconds = 60
    [settings]
    credits = { specs = [[1, 1]] }
    publishes = [2]
    [[family]]
    kind = "broker"
    name = "b"
    persistent = false
    may_crash = ["none", "queue"]
    on_peer_down = ["peer_down", "ignore"]
""")


def _rows(text: str) -> list[dict]:
    """The rows of the sweep file ``text``, computed in-process."""
    return sweep_rows(text, "faults.toml")


def test_a_sweep_ranges_over_fault_settings_with_the_explorers_fault_verdicts():
    """SW-FAULTS, SW-CHECKER, EXP-FAULTS, NET-DOWN: a broker family swept over
    may_crash x on_peer_down. The queue's crash is harmless when the channel's DOWN
    handler calls peer_down and leaves the channel blocked forever when it does not
    (the dead-mirror bug, 3.8.10); every row is check_graph's verdict on the case's
    fault graph, carries its fault setting, and fits the Parquet schema (SW-ROW)."""
    cases = {c.case_id: c for c in expand(parse_sweep(FAULT_SWEEP, "faults.toml"))[0]}
    rows = _rows(FAULT_SWEEP)
    # may_crash = none with either handler is one graph (the handler is never called)
    assert len(rows) == 3
    verdicts = {(r["may_crash"], r["on_peer_down"]): r for r in rows}
    assert set(verdicts) == {("none", "peer_down"), ("queue", "peer_down"), ("queue", "ignore")}
    assert verdicts[("none", "peer_down")]["verdict"] == "holds"
    assert verdicts[("queue", "peer_down")]["verdict"] == "holds"
    buggy = verdicts[("queue", "ignore")]
    assert buggy["verdict"] == "deadlock" and buggy["blocked_forever"]
    assert {"PROP-NO-DEADLOCK", "PROP-RECOVERY"} <= set(buggy["violated"])
    for row in rows:
        assert row["crashable"] == (0 if row["may_crash"] == "none" else 1)
        assert row["max_crashes"] is None
        case = cases[row["case_id"]]
        graph = case_graph(case.graph.graph, case.task)
        assert graph.has_faults == (row["may_crash"] != "none")
        system, result = check_graph(graph, CheckOptions(max_states=case.task.max_states))
        expected = summary(system, result)
        assert (row["deadlock"], row["states"], row["complete"]) == (
            expected.deadlock,
            expected.states,
            expected.complete,
        )
        assert row["shortest_counterexample"] == expected.shortest_counterexample_length
    table = rows_to_table(rows)
    assert table.column("verdict").to_pylist() == [r["verdict"] for r in rows]
    assert table.column("may_crash").to_pylist() == [r["may_crash"] for r in rows]


def test_the_report_keeps_fault_settings_apart(tmp_path):
    """SW-REPORT, SW-FAULTS: over the fault sweep's Parquet rows, each fault setting is
    its own variant: the deadlock rate by ``crashable`` is 0 without a crashable process,
    0 with one whose peers call peer_down and 1 with one whose peers ignore its DOWN;
    the minimal safe credit is given per fault setting."""
    import pyarrow.parquet as pq

    (tmp_path / "results").mkdir()
    pq.write_table(rows_to_table(_rows(FAULT_SWEEP)), tmp_path / "results" / "part-0.parquet")
    data = sweep_report(tmp_path)
    rates = {(r["value"], r["variant"]): r["deadlock_rate"] for r in data.by_feature["crashable"]}
    assert rates == {
        (0, "faithful"): 0.0,
        (1, "faithful, may_crash=queue, on_peer_down=peer_down"): 0.0,
        (1, "faithful, may_crash=queue, on_peer_down=ignore"): 1.0,
    }
    # the minimal safe credit is per fault setting: never mixed (SW-REPORT)
    safe = {r["variant"]: r["min_safe_initial"] for r in data.min_safe}
    assert safe == {
        "faithful": 1,
        "faithful, may_crash=queue, on_peer_down=peer_down": 1,
        "faithful, may_crash=queue, on_peer_down=ignore": None,
    }


def test_max_crashes_zero_is_the_fault_free_case():
    """SW-FAULTS, NET-FAULT-BOUND: with max_crashes = 0 the crashable queue never
    crashes: the instance is the fault-free graph (same digest, so it is dropped as a
    duplicate within its family) and its case id is the fault-free one."""
    base = FAULT_SWEEP.replace('on_peer_down = ["peer_down", "ignore"]', 'on_peer_down = "ignore"')
    bounded = base.replace('may_crash = ["none", "queue"]', 'may_crash = "queue"\nmax_crashes = 0')
    free = base.replace('may_crash = ["none", "queue"]', 'may_crash = "none"')
    (bounded_case,) = expand(parse_sweep(bounded, "faults.toml"))[0]
    (free_case,) = expand(parse_sweep(free, "faults.toml"))[0]
    assert bounded_case.graph.digest == free_case.graph.digest
    assert bounded_case.graph.features["crashable"] == 1
    assert not bounded_case.graph.graph.has_faults
    (mixed,) = [
        c.graph.graph_id
        for c in expand(
            parse_sweep(bounded.replace("max_crashes = 0", "max_crashes = [0, 1]"), "f.toml")
        )[0]
        if c.graph.graph.has_faults
    ]
    assert mixed.endswith("max_crashes=1#0")


@pytest.mark.parametrize("kind", ["broker", "random-dag", "random-cyclic", "layered"])
@pytest.mark.parametrize("selector", ["sources", "sinks", "relays", "all"])
def test_crash_selectors_mark_the_processes_they_name(kind, selector):
    """SW-FAULTS: each selector marks exactly the processes it names; the graph stays a
    valid fault graph (NET-FAULT-NODE: every crashable process has a credit pair) and its
    digest differs from the fault-free one whenever something may crash."""
    family = FAMILY_KINDS[kind]
    params = {**family.defaults(), "may_crash": selector}
    g = family.generate(params, random.Random(3))
    free = family.generate({**params, "may_crash": "none"}, random.Random(3))
    expected = {
        "sources": {n for n in g.nodes if g.nodes[n].get("source")},
        "sinks": {n for n in g.nodes if g.out_degree(n) == 0},
        "relays": {
            n
            for n in g.nodes
            if not g.nodes[n].get("source") and g.in_degree(n) and g.out_degree(n)
        },
        "all": set(g.nodes),
    }[selector]
    assert {n for n in g.nodes if g.nodes[n].get("may_crash")} == expected
    g.graph["credit"] = free.graph["credit"] = [1, 1]
    graph = flow_graph_from_networkx(g, "g")
    assert {n.name for n in graph.crashable} == expected
    same = graph_digest(graph) == graph_digest(flow_graph_from_networkx(free, "g"))
    assert same == (not expected)


def test_broker_roles_select_by_role():
    """SW-FAULTS, SW-BROKER: a broker role names the processes of that role."""
    family = FAMILY_KINDS["broker"]
    params = {**family.defaults(), "queues": 2, "mirrors": 1, "may_crash": "mirror"}
    g = family.generate(params, random.Random(0))
    assert sorted(n for n in g.nodes if g.nodes[n].get("may_crash")) == [
        "queue0.mirror0",
        "queue1.mirror0",
    ]


@pytest.mark.parametrize(
    ("family", "message"),
    [
        (
            "kind = 'broker'\nmay_crash = 'mirror'",
            'family[0] (broker): may_crash = "mirror" needs mirrors >= 1',
        ),
        (
            "kind = 'broker'\npersistent = false\nmay_crash = 'msg_store'",
            'may_crash = "msg_store" needs persistent = true',
        ),
        (
            "kind = 'random-dag'\nmay_crash = 'queue'",
            "family[0] (random-dag).may_crash must be one of",
        ),
        ("kind = 'broker'\nmay_crash = true", "family[0] (broker).may_crash must be one of"),
        (
            "kind = 'layered'\non_peer_down = 'later'",
            ".on_peer_down must be one of peer_down, ignore",
        ),
        ("kind = 'broker'\nmax_crashes = -1", '.max_crashes must be "all" or an integer in 0..'),
        ("kind = 'broker'\nmax_crashes = 'some'", '.max_crashes must be "all" or an integer'),
    ],
)
def test_bad_fault_settings_are_one_line_errors(family, message):
    """SW-FILE, SW-FAULTS: an unknown selector, a role the point does not build, an
    unknown handler or a bad crash bound: one line naming the file and the place."""
    with pytest.raises(SweepFileError) as err:
        parse_sweep(f"[[family]]\n{family}\n", "t.toml")
    assert str(err.value).startswith("t.toml: ") and "\n" not in str(err.value)
    assert message in str(err.value)


def test_fault_settings_change_no_graph_shape():
    """SW-SEED, SW-FAULTS: the fault settings are not in an instance's seed, so a random
    family swept over may_crash draws the same graphs with and without faults."""
    text = textwrap.dedent("""
        [[family]]
        kind = "random-dag"
        name = "d"
        nodes = 5
        instances = 3
        may_crash = ["none", "sinks"]
    """)
    graphs = {c.graph.graph_id: c.graph.graph for c in expand(parse_sweep(text, "faults.toml"))[0]}
    for i in range(3):
        free, faulty = graphs[f"d/may_crash=none#{i}"], graphs[f"d/may_crash=sinks#{i}"]
        assert free.edges == faulty.edges and faulty.crashable and not free.crashable
