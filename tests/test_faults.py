"""Faults (issue 19): processes that die, the DOWN that follows, CF-PEER-DOWN or not.

The readable NET-CRASH / NET-DOWN rules (model/network/rules.py) against the flat
encoding (conformance/explore/encoding.py) on random fault graphs, as
tests/test_network_rules.py does for the fault-free rules; then the properties with
faults (PROP-FAULT-*, PROP-RECOVERY) on small graphs whose verdicts are known.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.adapters.rabbitmq.module import RabbitMQAdapter
from creditflow.adapters.reference.credit_flow import ReferenceAdapter
from creditflow.conformance.differential.projection import run_ops
from creditflow.conformance.differential.protocol import Op, compare
from creditflow.conformance.differential.traces import load_trace
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.explore.explorer import NO_DEADLOCK, RECOVERY, explore
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import MessageMoves, NetworkProperties
from creditflow.conformance.inputs.graphs import load_graph_file
from creditflow.conformance.observe.faults import predict_close
from creditflow.conformance.traces.network import replay_network_trace
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network import properties, rules
from creditflow.model.network.graph import GraphError, flow_graph_from_networkx
from creditflow.model.network.rules import Step
from creditflow.model.network.system import ReadableNetwork
from tests.cli_runs import run
from tests.credit_flow_builds import OLD_MODULE, build_pre38_ebin
from tests.strategies import fault_graphs, with_tight_credit

BUGS = Path(__file__).resolve().parent.parent / "spec" / "graphs" / "bugs"

graphs = with_tight_credit(fault_graphs)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(graph=graphs, data=st.data())
def test_readable_fault_rules_and_flat_encoding_agree_step_by_step(graph, data):
    """NET-CRASH, NET-DEAD, NET-DOWN, NET-LOST-TO-CRASH, NET-FAULT-BOUND,
    PROP-FAULT-LIVE-PAIRS, PROP-FAULT-LOST: random runs of random fault graphs, every
    step compared (state counts, enabled steps in order, every state property, and the
    step form of nothing-lost agreeing with the count form)."""
    net = CreditNetwork(graph)
    flat_properties = NetworkProperties(net)
    moves = MessageMoves(net)
    flat, readable = net.initial(), rules.initial_state(graph)
    for _ in range(data.draw(st.integers(0, 40), label="steps")):
        assert net.counts(flat) == rules.counts(graph, readable)
        readable_found = properties.violations(graph, readable)
        assert set(flat_properties.violations(flat)) == set(readable_found)
        assert properties.NOTHING_LOST not in readable_found
        assert net.pending_work(flat) == rules.pending_work(graph, readable)
        assert net.quiet(flat) == rules.quiet(graph, readable)
        flat_steps = [net.decode(a) for a in net.enabled(flat)]
        assert flat_steps == rules.enabled_steps(graph, readable)
        if not flat_steps:
            break
        i = data.draw(st.integers(0, len(flat_steps) - 1), label="step")
        before = flat
        flat = net.apply(flat, net.encode(flat_steps[i]))
        assert moves.violations(before, net.encode(flat_steps[i]), flat) == ()
        readable = rules.apply(graph, readable, flat_steps[i])
    assert net.counts(flat) == rules.counts(graph, readable)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(graph=fault_graphs(max_nodes=3, max_publishes=2, acyclic=True))
def test_readable_fault_rules_and_flat_encoding_give_the_same_verdicts(graph):
    """PROP-FAULT-BLOCKED, EXP-FAULTS: exploring the readable fault rules and the flat
    encoding gives the same states, violated properties and shortest lengths (acyclic
    graphs: with the consumed and lost counters every one is finite).

    The readable states keep CF's ``blocked_at``, a history NET never reads (it has no
    clock); once CF-PEER-DOWN has erased a pair, two runs may reach the same NET state
    with different ``blocked_at``, so the readable states are compared by their counts."""
    fast = explore(CheckedNetwork(graph), reduce=False, max_states=20_000)
    spec = explore(ReadableNetwork(graph), reduce=False, max_states=20_000)
    assert fast.complete == spec.complete
    assert fast.n_states == len({repr(rules.counts(graph, s)) for s in spec.graph.states})
    assert {p: (f.length, f.kind) for p, f in fast.findings.items()} == {
        p: (f.length, f.kind) for p, f in spec.findings.items()
    }


@settings(max_examples=60, deadline=None, derandomize=True)
@given(graph=fault_graphs(max_nodes=3, max_publishes=2, acyclic=True))
def test_recovery_and_no_deadlock_are_violated_together(graph):
    """PROP-RECOVERY, PROP-FAULT-BLOCKED: under the reading of PROP-FAULT-BLOCKED the
    two verdicts agree (spec/properties.md), and PROP-RECOVERY's counterexample ends in
    a quiet state, never before PROP-NO-DEADLOCK's."""
    system = CheckedNetwork(graph, count_consumed=False)
    result = explore(system, reduce=False, max_states=20_000)
    assert result.complete
    deadlock, recovery = result.findings.get(NO_DEADLOCK), result.findings.get(RECOVERY)
    if graph.has_faults:
        assert (deadlock is None) == (recovery is None)
    else:
        assert RECOVERY not in result.property_ids
    if recovery is not None:
        assert system.quiet(recovery.path[-1][1])
        assert recovery.length >= deadlock.length


def _graph(nodes: dict, edges: list, **graph_attrs) -> nx.DiGraph:
    g = nx.DiGraph(credit=[2, 1], **graph_attrs)
    for name, attrs in nodes.items():
        g.add_node(name, **attrs)
    g.add_edges_from(edges)
    return g


@pytest.mark.parametrize(
    ("nodes", "graph_attrs", "message"),
    [
        ({"c": {"may_crash": True}}, {}, "node 'c': may_crash on a process with no credit pair"),
        ({"b": {"on_peer_down": "later"}}, {}, "node 'b' on_peer_down must be one of"),
        ({"b": {"may_crash": "sometimes"}}, {}, "node 'b' may_crash must be true or false"),
        ({}, {"max_crashes": -1}, "graph max_crashes (NET-FAULT-BOUND) must be >= 0"),
    ],
)
def test_bad_fault_attributes_are_refused_naming_the_node(nodes, graph_attrs, message):
    """NET-FAULT-NODE, NET-FAULT-BOUND: ill-typed or misplaced fault attributes."""
    base = {"a": {"source": True}, "b": {}, "c": {}}
    for name, attrs in nodes.items():
        base[name] = {**base[name], **attrs}
    with pytest.raises(GraphError, match=message.replace("(", r"\(").replace(")", r"\)")):
        flow_graph_from_networkx(_graph(base, [("a", "b")], **graph_attrs))


def test_cli_bad_fault_input_is_one_line_exit_2(tmp_path):
    """NET-FAULT-NODE, NET-FAULT-BOUND: one line naming the file and the node, exit 2;
    a negative --max-crashes likewise (check, prove, synth); prove --symbolic refuses
    fault graphs with the reason (Z3-FAULTS-REFUSED)."""
    bad = tmp_path / "bad.json"
    doc = json.loads((BUGS / "dead-mirror-3.8.10-fixed.json").read_text())
    doc["nodes"][1]["on_peer_down"] = "sometimes"
    bad.write_text(json.dumps(doc))
    result = run("check", str(bad))
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert str(bad) in result.output and "'channel'" in result.output
    fixed = str(BUGS / "dead-mirror-3.8.10-fixed.json")
    result = run("prove", fixed, "--symbolic")
    assert result.exit_code == 2, result.output
    assert "Z3-FAULTS-REFUSED" in result.output and "'mirror'" in result.output
    assert result.output.strip().count("\n") == 0
    for command in ("check", "prove", "synth"):  # IN-BOUNDS: the same flag type
        result = run(command, fixed, "--max-crashes", "-1")
        assert result.exit_code == 2 and "'--max-crashes': '-1'" in result.output
        assert result.output.strip().count("\n") == 0


def test_max_crashes_zero_is_the_fault_free_graph():
    """NET-FAULT-BOUND, EXP-FAULTS: with no crash allowed the state has no fault slot,
    every reduction is on, and the verdicts and state count are the fault-free ones."""
    graph = load_graph_file(BUGS / "dead-mirror-3.8.10-bug.json")
    bounded_system, bounded = check_graph(graph, CheckOptions(max_crashes=0))
    free_graph = graph.to_networkx()
    for name in free_graph.nodes:
        free_graph.nodes[name].pop("may_crash", None)
        free_graph.nodes[name].pop("on_peer_down", None)
    _, free = check_graph(flow_graph_from_networkx(free_graph, "free"))
    _, faulty = check_graph(graph)
    assert not bounded_system.network.crashable
    assert bounded.n_states == free.n_states < faulty.n_states
    assert set(bounded.findings) == set(free.findings) == set()
    assert NO_DEADLOCK in faulty.findings


def test_down_waits_for_what_the_dead_process_sent():
    """NET-DOWN, NET-CRASH, NET-LOST-TO-CRASH: the DOWN of a crashed relay reaches each
    peer only after what the relay sent it (data to its receiver, a grant to its
    sender); its mailbox is lost to the crash."""
    graph = flow_graph_from_networkx(
        _graph(
            {"a": {"source": True, "publishes": 2}, "b": {"may_crash": True}, "c": {}},
            [("a", "b"), ("b", "c")],
        ),
        "relay",
    )
    state = rules.initial_state(graph)
    for step in (Step("read", "a"), Step("take", "b", "a"), Step("read", "a")):
        state = rules.apply(graph, state, step)
    state = rules.apply(graph, state, Step("crash", "b"))
    assert state.lost["b"] == 1 and state.data[("a", "b")] == 0
    enabled = rules.enabled_steps(graph, state)
    # b's data to c and b's grant to a are still in flight: neither DOWN yet
    assert Step("down", "c", "b") not in enabled and Step("down", "a", "b") not in enabled
    state = rules.apply(graph, state, Step("take", "c", "b"))
    assert Step("down", "c", "b") in rules.enabled_steps(graph, state)
    assert Step("down", "a", "b") not in rules.enabled_steps(graph, state)
    state = rules.apply(graph, state, Step("bump", "a", "b"))
    assert Step("down", "a", "b") in rules.enabled_steps(graph, state)


@pytest.mark.parametrize(
    ("scenario", "lengths"),
    [
        # CF-ENTRY: a leak needs an entry the watcher used (a send, an ack) before the crash
        ("dead-mirror-3.8.10-bug", {NO_DEADLOCK: 5, RECOVERY: 5, "PROP-FAULT-FORGET": 4}),
        ("dead-mirror-3.8.10-fixed", {}),
        ("msg-store-dead-client-3.3.0-bug", {"PROP-FAULT-FORGET": 5}),
        ("msg-store-dead-client-3.3.0-fixed", {}),
        ("mirror-sender-death-3.1.0-bug", {"PROP-FAULT-FORGET": 4}),
        ("mirror-sender-death-3.1.0-fixed", {}),
    ],
)
def test_historical_bug_corpus(scenario, lengths, tmp_path):
    """PROP-FAULT-FORGET, PROP-FAULT-BLOCKED, PROP-FAULT-LIVE-PAIRS, PROP-FAULT-LOST: the
    buggy variant of each RabbitMQ bug gives its shortest counterexamples, the fixed one
    holds everywhere; the trace replays through the model (TRACE-REPLAY), projects to
    per-process ops with the crash and DOWN steps (NET-DEAD: no send after the DOWN),
    and the picture draws the dead process as dead. Asked for the scenario's own supply
    (--graph-supply), as the corpus README runs them."""
    trace = tmp_path / f"{scenario}.itf.json"
    result = run(
        "check",
        str(BUGS / f"{scenario}.json"),
        "--json",
        "--graph-supply",
        "--full-search",
        "--trace-out",
        str(trace),
    )
    report = json.loads(result.output)
    assert report["complete"]
    assert report["counterexample_lengths"] == lengths
    assert report["exit_code"] == (10 if NO_DEADLOCK in lengths else 12 if lengths else 0)
    if not lengths:
        assert not trace.exists()
        return
    replayed = replay_network_trace(trace)  # every variable, dead and DOWNs included
    last = json.loads(trace.read_text())["states"][-1]
    assert last["dead"] == {"#set": [next(n.name for n in replayed.system.graph.crashable)]}
    steps = [replayed.system.network.decode(a) for a in replayed.actions if a is not None]
    assert any(step.kind == "crash" for step in steps)
    ops = run_ops(replayed.system.graph, steps)
    assert [op for op, _ in load_trace(trace).trace.steps] == ops
    if scenario.startswith("dead-mirror"):  # the channel keeps sending to the dead mirror
        crash = next(i for i, step in enumerate(steps) if step.kind == "crash")
        assert any(
            op.kind == "send" and op.peer == "mirror"
            for op in run_ops(replayed.system.graph, steps[crash:])
        )
    assert "DEAD (crashed)" in trace.with_name(f"{scenario}.dot").read_text()


def test_fixed_mirror_releases_the_channel_after_the_crash():
    """NET-DOWN, NET-DEAD, CF-PEER-DOWN: blocked on the mirror that dies, the channel
    keeps sending to it until the DOWN (the copies are lost to the crash), is unblocked
    by the DOWN and its deferred grant then reaches the reader (CF-FLUSH)."""
    graph = load_graph_file(BUGS / "dead-mirror-3.8.10-fixed.json")
    state = rules.initial_state(graph)
    for step in [
        Step("read", "reader"),
        Step("read", "reader"),
        Step("take", "channel", "reader"),
        Step("take", "channel", "reader"),
        Step("crash", "mirror"),
        Step("bump", "reader", "channel"),
        Step("read", "reader"),
        Step("take", "channel", "reader"),
        Step("take", "master", "channel"),
        Step("take", "master", "channel"),
        Step("bump", "channel", "master"),
        Step("bump", "channel", "master"),
    ]:
        state = rules.apply(graph, state, step)
    channel = state.processes["channel"]
    assert channel.blocked == ("mirror",) and channel.deferred == (("reader", 1),)
    assert state.lost["mirror"] == 3 and state.processes["channel"].credit_from["mirror"] == -1
    assert properties.violations(graph, state) == ()
    in_flight = state.grants[("channel", "reader")]
    state = rules.apply(graph, state, Step("down", "channel", "mirror"))
    channel = state.processes["channel"]
    assert channel.blocked == () and channel.deferred == ()
    assert "mirror" not in channel.credit_from
    assert state.grants[("channel", "reader")] == (*in_flight, 1)
    assert properties.violations(graph, state) == ()


def _random_fault_runs(seeds: range, length: int = 60) -> list[tuple[str, list[Op]]]:
    """Random runs of corpus graphs whose DOWN handlers call peer_down (NET-DOWN,
    NET-DOWN-EARLY), projected to per-process ops (TRACE-PROJECTION)."""
    runs = []
    for scenario in (
        "dead-mirror-3.8.10-fixed",
        "msg-store-dead-client-3.3.0-fixed",
        "mirror-sender-death-3.1.0-bug",  # peer_down, then acks toward the dead channel
    ):
        graph = load_graph_file(BUGS / f"{scenario}.json")
        for seed in seeds:
            rng = random.Random(seed)
            state, steps = rules.initial_state(graph), []
            for _ in range(length):
                enabled = rules.enabled_steps(graph, state)
                if not enabled:
                    break
                step = rng.choice(enabled)
                steps.append(step)
                state = rules.apply(graph, state, step)
            runs.append((f"{scenario} seed {seed}", run_ops(graph, steps)))
    return runs


@pytest.fixture(scope="module", params=["3.10.8", "pre-3.8-like"])
def credit_flow_build(request: pytest.FixtureRequest, tmp_path_factory) -> Path | None:
    """Every build of ``credit_flow`` the tests drive (tests/credit_flow_builds.py):
    the installed module (``None``: the adapter locates it) and the pre-3.8-like one."""
    if request.param == "3.10.8":
        return None
    return build_pre38_ebin(tmp_path_factory.mktemp("ebin"))


def test_fault_runs_replay_against_every_credit_flow_build(credit_flow_build):
    """NET-DOWN, TRACE-PROJECTION, AD-OPS: the per-process ops of random fault runs —
    sends, acks, bumps and the peer_down of each DOWN — give the same answers on the
    model and on every real ``credit_flow`` build the tests drive (Debian's 3.10.8 and
    the pre-3.8-like build; a missing RabbitMQ or erlc fails). The ops use neither
    block nor unblock, which the pre-3.8-like build does not export."""
    reference, rabbitmq = ReferenceAdapter(), RabbitMQAdapter(credit_flow_build)
    peer_downs = blocked_peer_downs = 0
    try:
        if credit_flow_build is None:
            assert rabbitmq.info["implementation"]["app_version"] == "3.10.8"
        else:
            assert rabbitmq.missing_ops == ("block", "unblock")
        for name, ops in _random_fault_runs(range(12)):
            assert {op.kind for op in ops} <= set(rabbitmq.supported_ops), name
            answers = []
            for adapter in (reference, rabbitmq):
                adapter.reset(CreditSpec(2, 1))
                answers.append(adapter.run(ops))
            for i, op in enumerate(ops):
                assert compare(answers[0][i], answers[1][i]) == [], (name, i, op)
                if op.kind == "peer_down":
                    peer_downs += 1
                    before = answers[0][i - 1].state if i else None
                    blocked_peer_downs += bool(before is not None and op.peer in before.blocked)
    finally:
        rabbitmq.close()
    assert peer_downs > 0 and blocked_peer_downs > 0  # some DOWN unblocks a blocked process


def _replay_disagreements(ebin: Path | None) -> list[tuple[str, int, Op]]:
    """The first op of each random fault run where ``ebin``'s credit_flow and the
    model answer differently."""
    reference, rabbitmq = ReferenceAdapter(), RabbitMQAdapter(ebin)
    found = []
    try:
        for name, ops in _random_fault_runs(range(12)):
            answers = []
            for adapter in (reference, rabbitmq):
                adapter.reset(CreditSpec(2, 1))
                answers.append(adapter.run(ops))
            found += [
                (name, i, op) for i, op in enumerate(ops) if compare(answers[0][i], answers[1][i])
            ][:1]
    finally:
        rabbitmq.close()
    return found


def test_a_build_whose_peer_down_keeps_the_block_is_caught(tmp_path):
    """CF-PEER-DOWN, AD-OPS: the fault replay can fail: a pre-3.8-like build whose
    peer_down forgets the pair but leaves the peer among the blockers (the shape of
    a DOWN handler that never unblocks) disagrees with the model on some run, at a
    peer_down."""
    broken = OLD_MODULE.replace("peer_down(Peer) ->\n    unblock(Peer),\n", "peer_down(Peer) ->\n")
    assert broken != OLD_MODULE
    found = _replay_disagreements(build_pre38_ebin(tmp_path, broken))
    assert found and all(op.kind == "peer_down" for _, _, op in found)


def test_reductions_are_off_on_fault_graphs_and_verdicts_unchanged():
    """EXP-FAULTS: on a symmetric fault graph (two crashable queues behind one channel)
    `check` uses neither symmetry nor safe actions nor the certificate, and its verdicts
    are those of the unreduced exploration; stopping at the first certain deadlock
    (EXP-ONLINE) still gives the shortest one."""
    g = _graph(
        {
            "reader": {"source": True, "publishes": 3},
            "channel": {"on_peer_down": "ignore"},
            "q1": {"may_crash": True},
            "q2": {"may_crash": True},
        },
        [("reader", "channel"), ("channel", "q1"), ("channel", "q2")],
    )
    graph = flow_graph_from_networkx(g, "two-queues")
    system, checked = check_graph(graph, CheckOptions(stop_at_deadlock=False))
    assert system.safe_actions == frozenset() and checked.symmetry_order == 1
    assert not checked.reduced and system.stuck_certificate(system.initial()) == 0
    plain = explore(CheckedNetwork(graph, count_consumed=False), reduce=False)
    assert checked.n_states == plain.n_states
    lengths = {p: f.length for p, f in checked.findings.items()}
    assert lengths == {p: f.length for p, f in plain.findings.items()}
    _, online = check_graph(graph, CheckOptions(stop_at_deadlock=True))
    assert online.findings[NO_DEADLOCK].length == lengths[NO_DEADLOCK]
    without_faults = check_graph(graph, CheckOptions(max_crashes=0))[1]
    assert without_faults.symmetry_order == 2  # the same graph reduces without faults


def test_fault_attributes_read_from_dot_and_round_trip(tmp_path):
    """NET-FAULT-NODE, NET-FAULT-BOUND, NET-FILE: DOT gives attribute values as strings;
    the fault attributes and the crash bound survive a trip through node-link JSON."""
    dot = tmp_path / "g.dot"
    dot.write_text(
        'digraph g { credit="2,1"; max_crashes="1";\n'
        '  r [publishes="2"]; c [on_peer_down="ignore"]; q [may_crash="true"];\n'
        "  r -> c; c -> q; }\n"
    )
    graph = load_graph_file(dot)
    assert graph.node("q").may_crash and graph.node("c").on_peer_down == "ignore"
    assert graph.max_crashes == 1 and graph.crash_bound == 1 and graph.has_faults
    again = flow_graph_from_networkx(graph.to_networkx(), "again")
    assert again.nodes == graph.nodes and again.max_crashes == 1


def test_a_fault_graph_holds_for_every_supply_by_proof_else_for_its_example():
    """SCOPE-ORDER, SCOPE-EXIT with faults (Z3-FAULTS): the fixed scenario is proved for
    every supply without exploring (the invariant, and k-induction over Z3-FAULT-RANK),
    exit 0; without the proof (--no-prove) only its example supply is explored, which
    is exit 4, and the claim says what was established."""
    fixed = str(BUGS / "dead-mirror-3.8.10-fixed.json")
    result = run("check", fixed, "--json")
    report = json.loads(result.output)
    assert result.exit_code == report["exit_code"] == 0
    assert report["claim"] == "holds for every supply" and report["states"] == 0
    assert report["decided_by"][NO_DEADLOCK].endswith("-induction")
    assert report["decided_by"][RECOVERY].endswith("-induction")
    result = run("check", fixed, "--json", "--no-prove")
    report = json.loads(result.output)
    assert result.exit_code == report["exit_code"] == 4
    assert report["scope"]["supply"] == "every"
    assert "for every supply: not established" in report["claim"]


@pytest.mark.parametrize("client_side", [False, True])
def test_a_closed_connections_prediction(client_side):
    """OBS-DIFF-CLOSE, NET-CRASH, NET-DOWN, NET-READ, PROP-FAULT-LIVE-PAIRS: the model
    the broker pass compares with. Server side, a's channel and reader are gone at once
    and b stays blocked while the queue is held; client side nothing changes until the
    queue moves. Either way b is released after the resume, the queue has forgotten a's
    channel, and no property is violated at any cut (the 800-message backlog of a's
    channel is delivered, not lost)."""
    model = predict_close((400, 200), (400, 200), 1500, client_side=client_side)
    everybody = {"reader_a", "channel_a", "reader_b", "channel_b"}
    assert model.blocked(model.before) == everybody
    assert model.before.data[("channel_a", "queue")] == 800
    if client_side:
        assert model.held.dead == frozenset() and model.blocked(model.held) == everybody
    else:
        assert model.held.dead == {"reader_a", "channel_a"}
        assert model.blocked(model.held) == {"reader_b", "channel_b"}
        assert model.held.data[("channel_a", "queue")] == 800  # still in flight (NET-CRASH)
    after = model.after
    assert after.dead == {"reader_a", "channel_a"} and model.blocked(after) == set()
    assert "channel_a" not in after.processes["queue"].credit_to
    assert model.live_pairs(after) == 2 and sum(after.lost.values()) == 0
    assert after.consumed["queue"] == (3000 if client_side else 2300)
    for state in (model.before, model.held, after):
        assert properties.violations(model.graph, state) == ()
