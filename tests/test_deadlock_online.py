"""EXP-FINITE, EXP-ONLINE, EXP-CERTIFICATE and the step form of PROP-NOTHING-LOST."""

from __future__ import annotations

from collections import deque

import networkx as nx
import pytest
from hypothesis import assume, given, settings

from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.explorer import NO_DEADLOCK, _unblocking_search, explore
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import NOTHING_LOST
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.conformance.inputs.graphs import load_preset, preset_names
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network import rules
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx
from creditflow.model.network.system import ReadableNetwork
from tests.strategies import process_graphs


def cycle_feeding_a_sink(publishes: int = 2, credit: tuple[int, int] = (2, 1)) -> FlowGraph:
    """A ⇄ B, B → C: every lap of a message around the cycle sends a copy to the sink."""
    g = nx.DiGraph(name="cycle-sink", credit=list(credit))
    g.add_node("A", source=True, publishes=publishes)
    g.add_edges_from([("A", "B"), ("B", "A"), ("B", "C")])
    return flow_graph_from_networkx(g)


def readable_states_without_counters(graph: FlowGraph, limit: int = 200_000) -> int:
    """An independent count: breadth-first over the readable model (model/network),
    states compared by their count form (:func:`rules.counts`, the decoding the readable
    model and the flat encoding are cross-checked with) without the consumed counts —
    no rule reads them, so leaving them out is exact."""
    system = ReadableNetwork(graph)

    def key(state):
        counts = rules.counts(graph, state)
        return repr(sorted((k, sorted(v.items())) for k, v in counts.items() if k != "consumed"))

    first = system.initial()
    seen = {key(first)}
    queue = deque([first])
    while queue:
        for _, nxt in system.successors(queue.popleft()):
            k = key(nxt)
            if k not in seen:
                seen.add(k)
                queue.append(nxt)
                assert len(seen) <= limit, "not finite within the limit"
    return len(seen)


@pytest.mark.parametrize("publishes,credit", [(1, (1, 1)), (2, (2, 1)), (3, (2, 2))])
def test_a_cycle_feeding_a_sink_is_decided(publishes, credit):
    """EXP-FINITE: with the consumed counters the search never ends (EXP-BUDGET); without
    them it completes, with exactly as many states as the readable model has once its
    counters are erased."""
    graph = cycle_feeding_a_sink(publishes, credit)
    counted = explore(CheckedNetwork(graph), reduce=False, max_states=20_000)
    assert not counted.complete
    free = explore(CompiledNetwork(graph, count_consumed=False), reduce=False)
    assert free.complete
    assert free.n_states == readable_states_without_counters(graph)
    _, result = check_graph(graph, CheckOptions(stop_at_deadlock=False))
    assert result.complete
    assert summary(*check_graph(graph, CheckOptions(stop_at_deadlock=True))).exit_code != 4


@settings(max_examples=30, deadline=None, derandomize=True)
@given(graph=process_graphs(max_nodes=3, max_publishes=2))
def test_counter_free_states_match_the_readable_model(graph):
    """EXP-FINITE: the counter-free search reaches as many states as the readable model
    with its consumed counts erased, and finds the same violations at the same depths
    as the counting search whenever that one completes."""
    free = explore(CompiledNetwork(graph, count_consumed=False), reduce=False, max_states=3_000)
    assume(free.complete)  # a fan-out inside a cycle copies messages forever
    assert free.n_states == readable_states_without_counters(graph)
    counted = explore(CheckedNetwork(graph), reduce=False, max_states=5_000)
    if counted.complete:
        assert {p: f.length for p, f in free.findings.items()} == {
            p: f.length for p, f in counted.findings.items()
        }


def _all_states(graph: FlowGraph):
    system = CompiledNetwork(graph, count_consumed=False)
    return system, explore(system, reduce=False, max_states=5_000)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(graph=process_graphs(max_nodes=4, max_publishes=2))
def test_the_certificate_is_sound(graph):
    """EXP-CERTIFICATE: every process certified in a state is blocked forever there
    (EXP-DEADLOCK over the whole state graph)."""
    system, result = _all_states(graph)
    if not result.complete:
        return
    for state, stuck in zip(result.graph.states, result.graph.stuck, strict=True):
        certified = system.stuck_certificate(state)
        assert certified & ~stuck == 0


def test_the_certificate_fires():
    """EXP-CERTIFICATE is not vacuous: the stalled queue's channel and reader."""
    graph = load_preset("stalled-queue")
    system, result = _all_states(graph)
    certified = [system.stuck_certificate(s) for s in result.graph.states]
    assert sum(1 for c in certified if c) > 0
    names = set()
    for c in certified:
        names.update(n for i, n in enumerate(system.process_names) if c >> i & 1)
    assert names == {"reader", "channel"}


def _verdict(result):
    d = result.deadlock
    return None if d is None else (d.kind, d.length, d.processes)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(graph=process_graphs(max_nodes=4, max_publishes=2))
def test_online_deadlocks_are_the_full_searchs(graph):
    """EXP-ONLINE: stopping at the first certain deadlock reports the same kind, length
    and processes as the full search, with and without EXP-SAFE and EXP-SYMMETRY."""
    for reduce in (False, True):
        for sym in (False, True):
            runs = []
            for online in (False, True):
                system = CompiledNetwork(graph, count_consumed=False)
                symmetry = network_symmetry(system.network) if sym else None
                runs.append(
                    explore(
                        system,
                        reduce=reduce,
                        symmetry=symmetry,
                        stop_at_deadlock=online,
                        max_states=5_000,
                    )
                )
            full, online = runs
            if not full.complete:
                continue
            assert _verdict(online) == _verdict(full), (reduce, sym)
            if online.stopped_at_deadlock:
                assert online.n_states <= full.n_states or reduce


def test_online_stops_early_on_a_big_deadlock():
    """EXP-ONLINE: the stalled queue with large credits deadlocks within a few steps; the
    full search explores more states for the same counterexample."""
    graph = load_preset("stalled-queue").with_credit(CreditSpec(20, 10)).with_publishes(60)
    runs = [
        explore(CompiledNetwork(graph, count_consumed=False), reduce=False, stop_at_deadlock=online)
        for online in (True, False)
    ]
    online, full = runs
    assert online.stopped_at_deadlock and not full.stopped_at_deadlock
    assert _verdict(online) == _verdict(full)
    assert online.n_states < full.n_states
    _, checked = check_graph(graph, CheckOptions(stop_at_deadlock=True))
    assert checked.stopped_at_deadlock and _verdict(checked) == _verdict(full)


def _dropping(system: CheckedNetwork, node: str) -> CheckedNetwork:
    """A broken model: ``node`` loses every message it takes instead of forwarding it."""
    net = system.network
    taker = net.node_index[node]
    original = system.successors

    def successors(state):
        out = []
        for a, nxt in original(state):
            if (a >> 20) == 1 and net.edge_ends[a & 0xFFFFF][1] == taker:
                lst = list(nxt)
                for e in net.out_edges[taker]:
                    lst[5 * e + 2] -= 1  # the forwarded copies vanish
                nxt = tuple(lst)
            out.append((a, nxt))
        return out

    system.successors = successors  # type: ignore[method-assign]  # the method, replaced
    return system


@pytest.mark.parametrize("preset,node", [("rabbitmq-publish", "channel"), ("fanout", "queue1")])
def test_nothing_lost_step_form_catches_a_loss_like_the_count_form(preset, node):
    """PROP-NOTHING-LOST: on a DAG the step form (no counters) and the count form (with
    the counters) find a message-losing model at the same shortest depth."""
    graph = load_preset(preset).with_credit(CreditSpec(2, 1)).with_publishes(2)
    step = explore(_dropping(CheckedNetwork(graph, count_consumed=False), node), reduce=False)
    count = explore(_dropping(CheckedNetwork(graph), node), reduce=False)
    assert NOTHING_LOST in step.findings and NOTHING_LOST in count.findings
    assert step.findings[NOTHING_LOST].kind == "step"
    assert step.findings[NOTHING_LOST].length == count.findings[NOTHING_LOST].length


def test_nothing_lost_step_form_catches_a_loss_in_a_cycle():
    """PROP-NOTHING-LOST on a graph with a cycle, where the count form says nothing."""
    graph = cycle_feeding_a_sink()
    result = explore(_dropping(CheckedNetwork(graph, count_consumed=False), "B"), reduce=False)
    assert result.findings[NOTHING_LOST].length == 2  # A reads, B takes and loses


def test_compiled_successors_check_nothing_lost(monkeypatch):
    """PROP-NOTHING-LOST (step form) in the compiled hot loop: generated code whose
    forwarding forgets the sink-bound copy is caught, at the same depth as the readable
    model's step check on the same broken rule finds it."""
    import creditflow.conformance.explore.compiled as compiled

    real = compiled._forward

    def forgetful(src, depth, checked, node):
        real(src, depth, checked, node)
        if checked.network.graph.node_names[node] == "channel":
            src.lines.pop()  # drop the last line: one FIFO's `+= 1`

    monkeypatch.setattr(compiled, "_forward", forgetful)
    graph = load_preset("rabbitmq-publish").with_credit(CreditSpec(2, 1)).with_publishes(2)
    for reduce in (False, True):
        result = explore(CompiledNetwork(graph, count_consumed=False), reduce=reduce)
        assert result.findings[NOTHING_LOST].kind == "step"
        assert result.findings[NOTHING_LOST].length == 2  # read, then channel takes


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_gets_a_verdict(name):
    """EXP-FINITE, EXP-ONLINE: every shipped graph, with its own settings, is decided."""
    _, result = check_graph(load_preset(name), CheckOptions(stop_at_deadlock=True))
    assert result.complete or NO_DEADLOCK in result.findings


def test_check_stops_at_the_deadlock_unless_full_search(tmp_path, monkeypatch):
    """EXP-ONLINE in the CLI: `check` stops at the certain deadlock, `--full-search`
    explores everything; same exit code, kind and length, the trace written either way
    with the consumed counters (EXP-FINITE)."""
    import json

    from click.testing import CliRunner

    from creditflow.conformance.cli import main
    from creditflow.conformance.inputs.itf import read_document

    monkeypatch.chdir(tmp_path)
    rows = []
    for extra in ([], ["--full-search"]):
        out = CliRunner().invoke(
            main,
            ["check", "stalled-queue", "--credit", "20,10", "--publishes", "60", "--json", *extra],
        )
        assert out.exit_code == 10
        rows.append(json.loads(out.output))
    online, full = rows
    assert online["stopped_at_deadlock"] and not full["stopped_at_deadlock"]
    assert online["states"] < full["states"]
    for key in ("deadlock_kind", "blocked_forever", "shortest_counterexample_length"):
        assert online[key] == full[key]
    assert online["properties"]["PROP-CONSERVATION"] is None
    assert full["properties"]["PROP-CONSERVATION"] is True
    doc = read_document(tmp_path / "counterexamples" / "stalled-queue.itf.json")
    assert "consumed" in doc["vars"]


def test_message_moves_are_read_off_the_generated_body():
    """PROP-NOTHING-LOST (step form), compiled: each action's change of the message slots
    is read off its generated body once; it is state-independent because message slots
    change only unconditionally, and any other write to one is refused."""
    from creditflow.conformance.explore.compiled import moves_of_body

    body = [
        "l[2] -= 1",
        "c = l[1]",
        "if c == 1:",
        "    l[1] = 2",
        "    l[4 if b4 else 3] += 1",
        "else:",
        "    l[1] = c - 1",
        "l[25] -= 1",
        "l[27] += 1",
    ]
    assert moves_of_body(body, frozenset({2, 27, 12})) == {2: -1, 27: 1}
    for bad in (["if c == 1:", "    l[2] += 1"], ["l[2] = 0"], ["l[2 if b1 else 7] += 1"]):
        with pytest.raises(RuntimeError, match="conditionally"):
            moves_of_body(bad, frozenset({2}))


def test_bounded_return_certifies_what_the_other_rules_cannot():
    """EXP-CERTIFICATE's bounded return: on A ⇄ B ({2,1}, 3 publishes) it certifies
    states the closed-wait and no-supply rules leave open, and only processes that
    EXP-DEADLOCK finds blocked forever over the whole state graph."""
    g = nx.DiGraph(name="a-b", credit=[2, 1])
    g.add_node("A", source=True, publishes=3)
    g.add_edges_from([("A", "B"), ("B", "A")])
    system, result = _all_states(flow_graph_from_networkx(g))
    assert result.complete
    certificate = system.certificate
    with_return = certificate.edges
    without_return = tuple(e._replace(back_credit_from=-1) for e in with_return)
    beyond = 0
    for state, stuck in zip(result.graph.states, result.graph.stuck, strict=True):
        certified = certificate.certified(state)
        assert certified & ~stuck == 0
        certificate.edges = without_return
        try:
            beyond += bool(certified & ~certificate.certified(state))
        finally:
            certificate.edges = with_return
    assert beyond > 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(graph=process_graphs(max_nodes=4, max_publishes=2))
def test_the_unblocking_search_is_sound(graph):
    """EXP-UNBLOCK: a process the guided search unblocks from a state is not blocked
    forever there (EXP-DEADLOCK over the whole state graph)."""
    system, result = _all_states(graph)
    if not result.complete:
        return
    for state, stuck in zip(result.graph.states, result.graph.stuck, strict=True):
        blocked = system.blocked_mask(state)
        if blocked:
            freed = blocked & ~_unblocking_search(system, state, blocked)
            assert freed & stuck == 0


def test_the_unblocking_search_finds_runs():
    """EXP-UNBLOCK is not vacuous: on the fan-out preset it unblocks, from every state
    where somebody is blocked, everybody (nothing deadlocks there)."""
    system, result = _all_states(load_preset("fanout").with_credit(CreditSpec(1, 1)))
    assert result.complete and not any(result.graph.stuck)
    blocked_states = 0
    for state in result.graph.states:
        blocked = system.blocked_mask(state)
        if blocked:
            blocked_states += 1
            assert _unblocking_search(system, state, blocked) == 0
    assert blocked_states > 0


def broker_with_a_loop() -> FlowGraph:
    """Issue 21's cyclic broker (SW-BROKER, 2 readers × 2 channels × 3 queues, one
    mirror of queue0 with 3.10.8's double debit, one msg_store) with one shovel-like
    loop: queue1 republishes into channel1.0."""
    import random

    from creditflow.conformance.sweep.families import FAMILY_KINDS

    kind = FAMILY_KINDS["broker"]
    params = {**kind.defaults(), "readers": 2, "channels_per_reader": 2, "queues": 3}
    g = kind.build(params, random.Random(0))
    g.add_node("queue0.mirror0", role="rabbit_mirror_queue_slave")
    g.add_edge("channel0.0", "queue0.mirror0", sends_per_message=2)
    g.add_edge("queue1", "channel1.0")
    g.graph.update(name="broker-loop", credit=[1, 1])
    return flow_graph_from_networkx(g, name="broker-loop")


def test_the_broker_loop_deadlock_is_certified_shortest():
    """EXP-ONLINE with EXP-UNBLOCK and the bounded return of EXP-CERTIFICATE: the loop's
    first blocked-forever state in breadth-first order, 7 steps from the start (every
    earlier state shown free by a run, this one certified), with a small prefix of a
    state space the search cannot finish."""
    options = CheckOptions(credit=CreditSpec(2, 1), publishes=3, stop_at_deadlock=True)
    system, result = check_graph(broker_with_a_loop(), options)
    report = summary(system, result)
    assert report.stopped_at_deadlock and report.deadlock_kind == "blocked-forever"
    assert report.shortest_counterexample_length == 7
    assert report.shortest_certified is True
    assert "channel1.0" in report.blocked_forever
    assert report.states < 100_000
    # the violating state is certified; the step before it is not
    path = result.deadlock.path
    assert system.stuck_certificate(path[-1][1]) and not system.stuck_certificate(path[-2][1])
