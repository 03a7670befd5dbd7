"""`creditflow observe` against a real RabbitMQ 3.10.8 broker from Debian's package
(spec/observe.md). One private broker for the module; the last test stops it."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pika
import pytest

from creditflow.adapters.rabbitmq.observe import (
    NodeTarget,
    ObserveAgent,
    ObserveError,
    queue_pid_expr,
    record,
    run_workload,
)
from creditflow.conformance.inputs.graphs import load_graph
from creditflow.conformance.observe.snapshot import analyse, to_graph
from creditflow.conformance.observe.validate import validate, window

pytestmark = pytest.mark.xdist_group("broker")
CLI = [sys.executable, "-m", "creditflow.conformance.cli"]


def _nums(pid: str) -> tuple[str, str]:
    """<X.N.M> -> (N, M): pids as rabbitmqctl and the node print them differ in X."""
    parts = re.findall(r"\d+", pid)
    return parts[-2], parts[-1]


@pytest.fixture(scope="module")
def agent(private_broker):
    with ObserveAgent(NodeTarget.of_broker(private_broker)) as a:
        yield a


def _wait(pred, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.2)
    return pred()


def test_suspended_queue_blocks_reader_through_channel(private_broker, agent, tmp_path):
    """OBS-CUT, OBS-PROCESS, OBS-IN-FLIGHT, OBS-CHAINS, OBS-CONSERVATION,
    OBS-BLOCKED-CREDIT, OBS-DEFERRED-BLOCKED:
    a suspended queue blocks its channel, which defers its grants and blocks the reader;
    the snapshot says so, rabbitmqctl agrees (`flow`), conservation holds on every pair,
    before and after the queue is resumed. The live graph loads as a creditflow graph
    (OBS-GRAPH)."""
    params = private_broker.connection_parameters()
    conn = pika.BlockingConnection(params)
    ch = conn.channel()
    ch.queue_declare("obs.stalled")
    qpid = agent.eval(f"{queue_pid_expr('obs.stalled')}, sys:suspend(P), P.")
    try:
        for _ in range(1500):
            ch.basic_publish("", "obs.stalled", b"m" * 32)
        conn.process_data_events(0.5)

        def blocked_chain():
            a = analyse(agent.snapshot())
            return a if any(c["chain"][-1]["pid"] == qpid for c in a.chains) else None

        a = _wait(blocked_chain)
        assert a is not None, "no chain down to the suspended queue"
        chain = next(c for c in a.chains if c["chain"][-1]["pid"] == qpid)
        assert [s["role"] for s in chain["chain"]] == ["reader", "channel", "queue"]
        assert "suspended" in chain["root_cause"]
        assert a.processes[qpid].suspended
        complete = [e for e in a.edges if e.complete]
        assert complete and all(e.holds for e in complete), [e.to_json() for e in complete]
        assert a.violations == []
        stalled_edge = next(e for e in a.edges if e.receiver == qpid)
        i, m = stalled_edge.spec
        assert stalled_edge.data == i + m * (i // m)  # the reference backlog, 800
        # a sys-suspended queue does not drain: its backlog is in its mailbox
        assert a.processes[qpid].mailbox_len >= stalled_edge.data
        assert a.processes[qpid].name == "'obs.stalled'"
        reader, channel = chain["chain"][0]["pid"], chain["chain"][1]["pid"]
        conns = json.loads(
            private_broker.ctl("list_connections", "pid", "state", "--formatter", "json")
        )
        states = {_nums(c["pid"]): c["state"] for c in conns}
        assert states[_nums(reader)] == "flow"
        chans = json.loads(
            private_broker.ctl("list_channels", "pid", "connection", "--formatter", "json")
        )
        owner = {_nums(c["pid"]): _nums(c["connection"]) for c in chans}
        assert owner[_nums(channel)] == _nums(reader)
        g = to_graph(a)
        path = tmp_path / "live.json"
        import networkx as nx

        path.write_text(json.dumps(nx.node_link_data(g, edges="edges")))
        loaded = load_graph(str(path))
        assert loaded is not None
    finally:
        agent.eval(f"{queue_pid_expr('obs.stalled')}, sys:resume(P), ok.")

    def drained():
        a = analyse(agent.snapshot())
        return a if not any(p.blocked for p in a.processes.values()) else None

    after = _wait(drained)
    assert after is not None, "still blocked after resume"
    assert all(e.holds for e in after.edges if e.complete)
    assert after.violations == []
    conns = json.loads(
        private_broker.ctl("list_connections", "pid", "state", "--formatter", "json")
    )
    assert all(c["state"] in ("running", "flow") for c in conns)
    conn.close()


def _mutations(doc):
    """(name, mutated doc, predicate on the divergence) for one dropped, swapped and
    altered event of a real trace."""
    ev = window(doc)
    base = copy.deepcopy(doc)
    base["events"] = ev
    out = []
    k = next(i for i, e in enumerate(ev) if e[3] == "grant" and i > len(ev) // 3)
    pid = ev[k][2]
    dropped = copy.deepcopy(base)
    del dropped["events"][k]
    # the first later event of the same process that is not a copy of the dropped one: a
    # queue may flush two equal deferred grants in a row, and either of them can be missing
    nxt = next(
        i
        for i in range(k, len(dropped["events"]))
        if dropped["events"][i][2] == pid and dropped["events"][i][2:] != ev[k][2:]
    )
    out.append(("dropped grant", dropped, lambda d, nxt=nxt, k=k: k <= d.index <= nxt))
    a = next(i for i, e in enumerate(ev) if e[3] == "ack" and i > len(ev) // 2)
    altered = copy.deepcopy(base)
    altered["events"][a][5] += 7
    out.append(("altered ack spec", altered, lambda d, a=a: d.index == a))
    s = next(
        i
        for i, e in enumerate(ev)
        if e[3] == "send" and e[2] == ev[i + 1][2] and ev[i + 1][3] == "block"
    )
    swapped = copy.deepcopy(base)
    e1, e2 = swapped["events"][s], swapped["events"][s + 1]
    swapped["events"][s], swapped["events"][s + 1] = e2, e1
    out.append(("swapped send/block", swapped, lambda d, s=s: d.index == s))
    return out


def test_record_10000_publishes_validates(private_broker, agent, tmp_path):
    """OBS-WORKLOAD, OBS-TRACE, OBS-WINDOW, OBS-VALIDATE: 10,000 confirmed publishes with
    a suspended queue and a slow consumer; nothing lost; the trace is a run of CF and NET
    with PROP-CONSERVATION after every event; one event dropped, altered or swapped is
    rejected at the right first event (OBS-CF-RUN, OBS-DIVERGENCE)."""
    params = private_broker.connection_parameters()
    box = {}
    out = tmp_path / "trace.json"
    summary = record(
        agent, out, during=lambda: box.setdefault("w", run_workload(agent, params, 10_000))
    )
    w = box["w"]
    assert sum(w.published) == 10_000 and w.confirmed == w.published
    assert w.nacked == (0, 0, 0) and not w.errors
    q = w.queued
    assert q["cf.persistent"] == w.published[0]
    assert q["cf.transient"] == w.published[1]
    assert q["cf.fan2"] == w.published[2] == q["cf.fan1"] + w.consumed_fan1
    during = analyse(w.snapshot_during)  # kept in w for _live_differences
    assert any(
        c["chain"][-1]["role"] == "queue" and "suspended" in c["root_cause"] for c in during.chains
    )
    assert during.violations == []
    doc = json.loads(out.read_text())
    res = validate(doc)
    assert res.ok, res.divergence
    assert res.stats["send"] >= 10_000 and res.stats["block"] > 0 and res.stats["bump"] > 0
    assert summary.events_between_cuts == res.events
    _live_differences(doc, w, res)
    done = subprocess.run(
        [*CLI, "observe", "validate", str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for name, bad, ok in _mutations(doc):
        r = validate(bad)
        assert not r.ok, name
        assert ok(r.divergence), (name, r.divergence)


def _live_differences(doc, w, res):
    """What the live trace shows about RabbitMQ vs NET (spec/observe.md)."""
    ev = window(doc)
    # channels live only as long as their connections: take roles from the cut taken
    # during the stall as well as from the first and last cuts
    roles = {
        p["pid"]: p["role_hint"]
        for snap in (doc["first"], w.snapshot_during, doc["last"])
        for p in snap["processes"]
    }
    # OBS-DIFF-PEER-DOWN: publishers' connections close inside the window
    assert res.stats.get("peer_down", 0) > 0
    # OBS-DIFF-STORE: one msg_store write per persistent publish, none for transient ones
    store_sends = [e for e in ev if e[3] == "send" and [e[5], e[6]] == [4000, 800]]
    assert len(store_sends) == w.published[0]
    assert {roles.get(e[4]) for e in store_sends} == {"rabbit_msg_store"}
    assert any(
        p["role_hint"] == "rabbit_msg_store" and p["name"] == "msg_store_persistent"
        for p in doc["last"]["processes"]
    )  # OBS-PROCESS
    # OBS-DIFF-CHANNEL: a channel acks its reader, then sends to every queue the
    # publish is routed to (NET-TAKE's order): after each ack, as many sends as queues
    # (a channel is what acks and sends with the default spec: readers only send, queues
    # send to msg_store with its bound; short-lived channels are in no cut)
    acks = {e[2] for e in ev if e[3] == "ack" and [e[5], e[6]] == [400, 200]}
    sends = {e[2] for e in ev if e[3] == "send" and [e[5], e[6]] == [400, 200]}
    channels = acks & sends
    assert {p for p, r in roles.items() if r == "rabbit_channel"} & channels
    first_cut = {p["pid"] for p in doc["first"]["processes"]}
    per: dict = {}
    for e in ev:
        if e[2] in channels and e[3] in ("ack", "send"):
            per.setdefault(e[2], []).append(e[3])
    fanouts = set()
    for pid, seq in per.items():
        if pid not in first_cut:
            assert seq[0] == "ack", (pid, seq[:5])  # born in the window: ack comes first
        seq = seq[seq.index("ack") :] if "ack" in seq else []  # the window may cut a step
        groups = []
        for kind in seq:
            if kind == "ack":
                groups.append(0)
            else:
                groups[-1] += 1
        assert len(set(groups[:-1])) <= 1 and set(groups[:-1]) <= {1, 2}, groups[:20]
        fanouts |= set(groups[:-1])
    assert fanouts == {1, 2}  # the plain queues and the fan-out exchange
    # OBS-DIFF-INTERLEAVING: another process's event falls between a channel's ack and
    # the send of the same handling
    pos = {id(e): i for i, e in enumerate(ev)}
    gaps = 0
    for pid in per:
        mine = [e for e in ev if e[2] == pid and e[3] in ("ack", "send")]
        gaps += sum(
            1
            for a, b in zip(mine, mine[1:], strict=False)
            if a[3] == "ack" and b[3] == "send" and pos[id(b)] - pos[id(a)] > 1
        )
    assert gaps > 0


def test_in_flight_classification_on_the_node(agent):
    """OBS-IN-FLIGHT, OBS-DIFF-MIRROR, OBS-DIFF-BUFFER: the node-side classifier counts a
    delivery published with mirrors (SlaveWhenPublished) as two debits, a plain one as
    one, a bump_credit by its amount, and ignores other messages."""
    got = agent.eval(
        "Me = self(), D = fun(SWP) -> {'$gen_cast', {deliver, {delivery, false, false, Me, "
        "m, 1, flow}, SWP}} end, cf_observe:classify([D(true), D(false), "
        "{bump_credit, {Me, 200}}, hello], buffer, #{})."
    )
    kinds = {(k, where): n for k, _peer, where, n in got}
    assert kinds == {("data", "buffer"): 3, ("grant", "buffer"): 200}


def test_client_death_leaves_nothing_suspended_or_traced(private_broker, agent):
    """OBS-WATCHDOG: a client that dies while processes are suspended (a held snapshot)
    or while tracing leaves no process suspended and no trace pattern behind."""
    victim = ObserveAgent(NodeTarget.of_broker(private_broker)).start()
    victim.trace_start(victim.workdir / "ev.jsonl")
    holder = threading.Thread(
        target=lambda: pytest.raises(ObserveError, victim.snapshot, 60_000, 30_000), daemon=True
    )
    holder.start()
    assert _wait(lambda: agent.suspended(), timeout=10), "the held snapshot suspended nothing"
    victim.kill()
    assert _wait(lambda: agent.suspended() == [], timeout=10)
    traced = agent.eval("erlang:trace_info({credit_flow, send, 2}, traced).")
    assert _wait(
        lambda: (
            agent.eval("erlang:trace_info({credit_flow, send, 2}, traced).") == ["traced", False]
        ),
        timeout=10,
    ), traced
    holder.join(timeout=10)


def test_connection_failures_exit_3(private_broker, tmp_path):
    """OBS-CONNECT: bad node name, wrong cookie: one line, exit 3."""
    env_port = private_broker.erl_environment()["ERL_EPMD_PORT"]
    cookie = Path(private_broker.erl_environment()["HOME"]) / ".erlang.cookie"
    bad = tmp_path / "cookie"
    bad.write_text("wrongcookie")
    cases = [
        (["--node", "nosuch@localhost", "--cookie-file", str(cookie)], "registered"),
        (["--node", private_broker.node, "--cookie-file", str(bad)], "cookie"),
        (["--node", "no-at-sign", "--cookie-file", str(cookie)], "NAME@HOST"),
    ]
    for args, word in cases:
        done = subprocess.run(
            [*CLI, "observe", "snapshot", *args, "--epmd-port", env_port],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 3, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and word in lines[0], lines


def test_broker_stopped_mid_recording_exit_3(private_broker, tmp_path):
    """OBS-CONNECT: the broker stopping mid-recording ends `record` with one line and
    exit 3. (Runs last: it stops the module's broker.)"""
    env_port = private_broker.erl_environment()["ERL_EPMD_PORT"]
    cookie = Path(private_broker.erl_environment()["HOME"]) / ".erlang.cookie"
    proc = subprocess.Popen(
        [
            *CLI,
            "observe",
            "record",
            "--node",
            private_broker.node,
            "--cookie-file",
            str(cookie),
            "--epmd-port",
            env_port,
            "--seconds",
            "30",
            "--out",
            str(tmp_path / "t.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)
    private_broker.stop()
    _out, err = proc.communicate(timeout=90)
    assert proc.returncode == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("creditflow: error:"), lines
    assert not (tmp_path / "t.json").exists()


def test_snapshot_with_a_workload_feeds_check(tmp_path):
    """OBS-SNAPSHOT-WORKLOAD: `observe snapshot --workload N` starts its own private
    broker, makes flow happen there (the OBS-WORKLOAD publishers, a suspended queue) and
    reports the cut taken during the stall, so the snapshot -> --graph-out -> check loop
    runs without one's own node: the graph has credit pairs and `check` answers it."""
    graph = tmp_path / "live.json"
    cli = [sys.executable, "-m", "creditflow.conformance.cli"]
    done = subprocess.run(
        [*cli, "observe", "snapshot", "--workload", "3000", "--graph-out", str(graph), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, 12), done.stderr
    analysis = json.loads(done.stdout)
    assert analysis["edges"] and any(p["blocked"] for p in analysis["processes"])
    live = json.loads(graph.read_text())
    assert live["edges"]
    checked = subprocess.run(
        [*cli, "check", str(graph), "--graph-supply", "--max-states", "20000", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert json.loads(checked.stdout)["exit_code"] == checked.returncode in (0, 4, 10, 12)
