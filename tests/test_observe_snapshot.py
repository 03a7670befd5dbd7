"""Snapshot analysis on hand-written snapshot documents (OBS-SNAPSHOT): the pairs
(OBS-EDGES), the checks, the chains, the graph (OBS-GRAPH) and the picture (OBS-PICTURE).
No broker: the broker tests check the same on live cuts."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.graphs import load_graph
from creditflow.conformance.observe.snapshot import SnapshotError, analyse, to_dot, to_graph
from creditflow.conformance.observe.validate import TraceError, load_trace

INFO = {
    "node": "n@h",
    "rabbit_version": "3.10.8",
    "credit_flow_default_credit": [400, 200],
    "msg_store_credit_disc_bound": [4000, 800],
}


def proc(pid, hint, **kw):
    base = {
        "pid": pid,
        "role_hint": hint,
        "name": kw.pop("name", pid),
        "credit_from": [],
        "credit_to": [],
        "blocked": [],
        "deferred": [],
        "in_flight": [],
        "mailbox_len": 0,
        "buffer_len": 0,
        "pre_suspended": False,
    }
    base.update(kw)
    return base


def stalled_doc(backlog=800):
    r, c, q = "<0.1.0>", "<0.2.0>", "<0.3.0>"
    return {
        "info": INFO,
        "pause_ms": 0.1,
        "t_suspended": 1,
        "t_resume": 2,
        "processes": [
            proc(r, "rabbit_reader", credit_from=[[c, 0]], blocked=[c]),
            proc(
                c,
                "rabbit_channel",
                credit_from=[[q, -400]],
                credit_to=[[r, 200]],
                blocked=[q],
                deferred=[[r, 200], [r, 200]],
            ),
            proc(
                q,
                "rabbit_amqqueue_process",
                pre_suspended=True,
                mailbox_len=backlog,
                in_flight=[["data", c, "mailbox", backlog - 100], ["data", c, "buffer", 100]],
            ),
        ],
    }


def test_stalled_queue_cut():
    """OBS-EDGES, OBS-CONSERVATION, OBS-CHAINS, OBS-IN-FLIGHT (mailbox + buffer)."""
    a = analyse(stalled_doc())
    assert a.violations == []
    assert [(e.sender, e.receiver, e.holds) for e in a.edges] == [
        ("<0.1.0>", "<0.2.0>", True),
        ("<0.2.0>", "<0.3.0>", True),
    ]
    (chain,) = a.chains
    assert [s["role"] for s in chain["chain"]] == ["reader", "channel", "queue"]
    assert "suspended with 800 messages" in chain["root_cause"]


def test_conservation_violation_reported():
    """OBS-CONSERVATION: one message too few in flight breaks the equation."""
    a = analyse(stalled_doc(backlog=799))
    assert [v["rule"] for v in a.violations] == ["OBS-CONSERVATION"]


def test_deferred_and_blocked_checks():
    """OBS-DEFERRED-BLOCKED and OBS-BLOCKED-CREDIT on a process that defers without
    being blocked and has credit 0 without a blocker."""
    doc = {
        "info": INFO,
        "processes": [
            proc(
                "<0.5.0>",
                "rabbit_channel",
                credit_from=[["<0.6.0>", 0]],
                deferred=[["<0.7.0>", 200]],
            )
        ],
    }
    rules = sorted(v["rule"] for v in analyse(doc).violations)
    assert rules == ["OBS-BLOCKED-CREDIT", "OBS-DEFERRED-BLOCKED"]


def test_graph_and_picture(tmp_path):
    """OBS-GRAPH loads as a creditflow graph (NET-FILE); OBS-PICTURE marks the blocked."""
    a = analyse(stalled_doc())
    path = tmp_path / "g.json"
    path.write_text(json.dumps(nx.node_link_data(to_graph(a), edges="edges")))
    g = load_graph(str(path))
    assert g is not None
    dot = to_dot(a)
    assert "color=red" in dot and "style=dashed" in dot and "penwidth=3" in dot


def test_bad_documents(tmp_path):
    """OBS-SNAPSHOT and OBS-EVENT shapes are checked, with the place named."""
    with pytest.raises(SnapshotError):
        analyse({"processes": "nope"})
    bad = tmp_path / "t.json"
    bad.write_text(
        json.dumps(
            {
                "format": "creditflow-observe-trace/1",
                "first": {},
                "last": {},
                "events": [[1, 1, "<0.1.0>", "send", "x"]],
            }
        )
    )
    with pytest.raises(TraceError, match="event 0"):
        load_trace(bad)


def test_snapshot_workload_needs_the_private_broker() -> None:
    """OBS-SNAPSHOT-WORKLOAD: the workload runs only on the private broker; with --node
    it is a usage error in one line, before any connection is tried."""
    args = ["observe", "snapshot", "--workload", "100", "--node", "rabbit@nowhere"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "--workload needs the private broker (no --node)" in result.output
