"""Faults on a real RabbitMQ 3.10.8 broker (issue 19): a queue process killed while its
publisher is in flow, observed before and after, against what the fault model of that
topology predicts (NET-CRASH, NET-DOWN, PROP-RECOVERY, PROP-FAULT-LIVE-PAIRS)."""

from __future__ import annotations

import time

import networkx as nx
import pika
import pytest

from creditflow.adapters.rabbitmq.observe import NodeTarget, ObserveAgent, queue_pid_expr
from creditflow.conformance.observe.snapshot import Analysis, analyse
from creditflow.model.network import rules
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx

pytestmark = pytest.mark.xdist_group("broker")


def _wait(pred, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.2)
    return pred()


def _settle(graph: FlowGraph, state: rules.NetworkState) -> rules.NetworkState:
    """Every step but crashes, in the rules' order, until none is left (the stalled
    queue never acts, so this ends)."""
    while steps := [s for s in rules.enabled_steps(graph, state) if s.kind != "crash"]:
        state = rules.apply(graph, state, steps[0])
    return state


def _predict(reader_spec, queue_spec, publishes: int) -> dict:
    """The model's run of reader -> channel -> stalled, crashable queue: blocked, then
    the queue killed, its DOWN handled (CF-PEER-DOWN), and everything that can still
    happen."""
    g = nx.DiGraph()
    g.add_node("reader", source=True, publishes=publishes)
    g.add_node("channel")
    g.add_node("queue", stalled=True, may_crash=True)
    g.add_edge("reader", "channel", credit=list(reader_spec))
    g.add_edge("channel", "queue", credit=list(queue_spec))
    graph = flow_graph_from_networkx(g, "killed-queue")
    before = _settle(graph, rules.initial_state(graph))
    crashed = rules.apply(graph, before, rules.Step("crash", "queue"))
    after = _settle(graph, crashed)
    return {
        "blocked_before": {n for n in ("reader", "channel") if rules.is_blocked(before, n)},
        "backlog": before.data[("channel", "queue")],
        "lost_to_crash": crashed.lost["queue"],
        "blocked_after": {n for n in ("reader", "channel") if rules.is_blocked(after, n)},
    }


def test_killed_queue_releases_channel_and_reader_as_the_model_predicts(private_broker):
    """NET-CRASH, NET-DOWN, PROP-RECOVERY, PROP-FAULT-LIVE-PAIRS: a suspended queue
    blocks its channel and reader; kill it and the broker releases both, with
    conservation on every remaining pair — what the fault model of that topology,
    with the broker's own credit specs, predicts."""
    params = private_broker.connection_parameters()
    conn = pika.BlockingConnection(params)
    ch = conn.channel()
    ch.queue_declare("faults.killed")
    with ObserveAgent(NodeTarget.of_broker(private_broker)) as agent:
        qpid = agent.eval(f"{queue_pid_expr('faults.killed')}, sys:suspend(P), P.")
        for _ in range(1500):
            ch.basic_publish("", "faults.killed", b"m" * 32)
        conn.process_data_events(0.5)

        def blocked_chain() -> Analysis | None:
            a = analyse(agent.snapshot())
            return a if any(c["chain"][-1]["pid"] == qpid for c in a.chains) else None

        before = _wait(blocked_chain)
        assert before is not None, "no chain down to the suspended queue"
        chain = next(c for c in before.chains if c["chain"][-1]["pid"] == qpid)
        reader, channel = chain["chain"][0]["pid"], chain["chain"][1]["pid"]
        to_queue = next(e for e in before.edges if e.receiver == qpid)
        to_channel = next(e for e in before.edges if e.sender == reader and e.receiver == channel)
        prediction = _predict(to_channel.spec, to_queue.spec, publishes=1500)
        assert prediction["blocked_before"] == {"reader", "channel"}
        assert to_queue.data == prediction["backlog"]
        assert before.processes[reader].blocked and before.processes[channel].blocked

        agent.eval(f'exit(list_to_pid("{qpid}"), kill), ok.')

        def released() -> Analysis | None:
            a = analyse(agent.snapshot())
            procs = a.processes
            free = reader in procs and channel in procs
            free = free and not procs[reader].blocked and not procs[channel].blocked
            return a if free else None

        after = _wait(released)
        assert after is not None, "the channel or the reader is still blocked"
    assert prediction["blocked_after"] == set()  # the model releases both too
    assert prediction["lost_to_crash"] == prediction["backlog"]
    assert qpid not in after.processes
    live = [e for e in after.edges if e.complete]
    assert live and all(e.holds for e in live), [e.to_json() for e in live]
    assert after.violations == []
    print(
        f"killed-queue: backlog {to_queue.data} (model {prediction['backlog']}), "
        f"released reader and channel (model: blocked after = "
        f"{sorted(prediction['blocked_after'])}), {len(live)} live pairs conserved"
    )
    conn.close()
