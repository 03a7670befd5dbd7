"""Faults on a real RabbitMQ 3.10.8 broker (issue 19): a queue process killed while its
publisher is in flow, and a connection closed while its channel is blocked (server side
and client side), observed before and after, against what the fault model of that
topology predicts (NET-CRASH, NET-DOWN, PROP-RECOVERY, PROP-FAULT-LIVE-PAIRS).
Figures: docs/observe.md, "Faults on the live broker"."""

from __future__ import annotations

import contextlib
import threading
import time

import networkx as nx
import pika
import pytest

from creditflow.adapters.rabbitmq.observe import NodeTarget, ObserveAgent, queue_pid_expr
from creditflow.conformance.observe.faults import predict_close
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


# -- a connection closed while its channels are blocked ----------------------------------


def _predict_close(reader_spec, queue_spec, publishes: int, graceful: bool) -> dict:
    """The figures of :func:`predict_close` (OBS-DIFF-CLOSE) the test compares."""
    model = predict_close(reader_spec, queue_spec, publishes, client_side=graceful)
    before, held, after = model.before, model.held, model.after
    return {
        "blocked_before": model.blocked(before),
        "backlog": before.data[("channel_a", "queue")],
        "blocked_while_held": model.blocked(held),
        "dead_while_held": set(held.dead),
        "queue_data_while_held": {s: held.data[(f"channel_{s}", "queue")] for s in "ab"},
        "blocked_after": model.blocked(after),
        "dead_after": set(after.dead),
        "queue_length": after.consumed["queue"],
        "queue_forgot_a": "channel_a" not in after.processes["queue"].credit_to,
        "live_pairs": model.live_pairs(after),
    }


def _connection_pid(broker, reader_pid: str) -> str:
    """The `rabbitmqctl list_connections` pid of the connection whose reader is
    ``reader_pid`` (observe's local form ``<0.N.0>``)."""
    suffix = "." + reader_pid.strip("<>").split(".", 1)[1] + ">"
    listed = broker.ctl("list_connections", "pid", "--no-table-headers", "--silent")
    return next(line.strip() for line in listed.splitlines() if line.strip().endswith(suffix))


@pytest.mark.parametrize("how", ["rabbitmqctl close_connection", "client close"])
def test_closed_connection_while_its_channel_is_blocked(private_broker, how):
    """OBS-DIFF-CLOSE, NET-CRASH, NET-DOWN, NET-READ, PROP-FAULT-LIVE-PAIRS,
    PROP-FAULT-FORGET, PROP-RECOVERY: two connections blocked on one suspended queue;
    connection a is closed, observed, the queue resumed, observed again — against what
    the model of that topology predicts (conformance/observe/faults.py): who is blocked
    and who is gone at each cut, the backlog, the queue's length, the queue forgetting
    the dead channel, and conservation on every remaining live pair."""
    graceful = how == "client close"
    queue = f"faults.closed.{'client' if graceful else 'ctl'}"
    params = private_broker.connection_parameters
    conns = {side: pika.BlockingConnection(params()) for side in ("a", "b")}
    chans = {side: c.channel() for side, c in conns.items()}
    chans["b"].queue_declare(queue)
    publishes = 1500
    with ObserveAgent(NodeTarget.of_broker(private_broker)) as agent:
        qpid = agent.eval(f"{queue_pid_expr(queue)}, sys:suspend(P), P.")
        for side in ("a", "b"):
            for _ in range(publishes):
                chans[side].basic_publish("", queue, b"m" * 32)
            conns[side].process_data_events(0.5)

        def both_blocked() -> Analysis | None:
            a = analyse(agent.snapshot())
            ends = [c for c in a.chains if c["chain"][-1]["pid"] == qpid]
            return a if len(ends) == 2 else None

        before = _wait(both_blocked)
        assert before is not None, "the two connections are not both blocked on the queue"
        ends = [c["chain"] for c in before.chains if c["chain"][-1]["pid"] == qpid]
        # connection a: the one opened first (its reader has the lower pid number)
        ends.sort(key=lambda chain: int(chain[0]["pid"].split(".")[1]))
        pids = {
            f"{role}_{side}": chain[i]["pid"]
            for side, chain in zip("ab", ends, strict=True)
            for i, role in enumerate(("reader", "channel"))
        }
        to_queue = next(e for e in before.edges if e.sender == pids["channel_a"])
        to_channel = next(e for e in before.edges if e.sender == pids["reader_a"])
        model = _predict_close(to_channel.spec, to_queue.spec, publishes, graceful)
        assert model["blocked_before"] == set(pids)
        assert all(before.processes[p].blocked for p in pids.values())
        assert to_queue.data == model["backlog"]

        started = time.monotonic()
        closer = None
        if graceful:
            closer = threading.Thread(target=conns["a"].close, daemon=True)
            closer.start()
        else:
            private_broker.ctl(
                "close_connection", _connection_pid(private_broker, pids["reader_a"]), "test"
            )
            # the client answers the broker's close, after which a's reader exits
            with contextlib.suppress(pika.exceptions.AMQPError):
                conns["a"].process_data_events(1.0)

        def held_as_predicted() -> Analysis | None:
            a = analyse(agent.snapshot())
            gone = {n for n, p in pids.items() if p not in a.processes}
            return a if gone == model["dead_while_held"] else None

        close_s = time.monotonic() - started  # the close call (rabbitmqctl's start-up)
        time.sleep(2.0)  # time for a close that could get through to do so
        held = _wait(held_as_predicted)
        assert held is not None, "the processes gone while the queue is held differ"
        held_blocked = {
            n for n, p in pids.items() if p in held.processes and held.processes[p].blocked
        }
        assert held_blocked == model["blocked_while_held"]
        flight = held.processes[qpid].in_flight
        data = {side: flight.get(("data", pids[f"channel_{side}"]), 0) for side in "ab"}
        assert data == model["queue_data_while_held"]

        resumed = time.monotonic()
        agent.eval(f'sys:resume(list_to_pid("{qpid}")), ok.')
        if closer is not None:
            closer.join(30)
            assert not closer.is_alive(), "the client close did not complete after the resume"

        def settled() -> Analysis | None:
            a = analyse(agent.snapshot())
            gone = {n for n, p in pids.items() if p not in a.processes}
            free = not any(a.processes[p].blocked for n, p in pids.items() if n not in gone)
            quiet = a.processes[qpid].mailbox_len == 0
            return a if gone == model["dead_after"] and free and quiet else None

        after = _wait(settled)
        settle_s = time.monotonic() - resumed
        assert after is not None, "not settled as the model predicts"
    assert model["blocked_after"] == set()
    dead = {pids[n] for n in model["dead_after"]}
    assert not any(e.sender in dead or e.receiver in dead for e in after.edges)
    assert model["queue_forgot_a"] and pids["channel_a"] not in after.processes[qpid].credit_to
    live = [e for e in after.edges if e.complete]
    assert len(live) == model["live_pairs"]
    assert live and all(e.holds for e in live), [e.to_json() for e in live]
    assert after.violations == []
    length = chans["b"].queue_declare(queue, passive=True).method.message_count
    assert length == model["queue_length"]
    released = sorted(
        n for n in pids if n not in model["dead_after"] and before.processes[pids[n]].blocked
    )
    mine = {*pids.values(), qpid}
    print(
        f"closed connection ({how}): scenario processes "
        + "/".join(str(len(mine & set(a.processes))) for a in (before, held, after))
        + " before/held/after (node: "
        + "/".join(str(len(a.processes)) for a in (before, held, after))
        + f"); gone "
        f"{sorted(model['dead_after'])}; released {released}; backlog {to_queue.data} "
        f"(model {model['backlog']}); queue length {length} (model {model['queue_length']}); "
        f"{len(live)} live pairs conserved; close call {close_s:.1f} s, "
        f"resume to settled {settle_s:.1f} s"
    )
    conns["b"].close()
