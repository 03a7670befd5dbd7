"""CF-ENTRY, PROP-FAULT-FORGET against Erlang: the network model holds a credit entry
exactly when RabbitMQ 3.10.8's ``credit_flow`` has it in the process dictionary (an
entry appears at the first send, ack or bump), so a DOWN ignored before any exchange
leaks nothing, and PROP-FAULT-FORGET is violated exactly when the real dictionary keeps
an entry for the dead peer. Drives the installed module through the ``--adapter
rabbitmq`` Erlang driver (an Erlang VM, no broker)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

from creditflow.adapters.rabbitmq.module import RabbitMQAdapter
from creditflow.conformance.differential.projection import step_ops
from creditflow.conformance.differential.protocol import ProcessView
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.inputs.graphs import load_graph_file
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network import properties, rules
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx
from creditflow.model.network.rules import NetworkState, Step

BUGS = Path(__file__).resolve().parent.parent / "spec" / "graphs" / "bugs"
SPEC = CreditSpec(2, 1)


def random_fault_graph(rng: random.Random, index: int) -> FlowGraph:
    """A small DAG (1 source, 2-4 more processes) whose DOWN handlers mostly ignore the
    DOWN; one or two processes may crash."""
    n = rng.randint(3, 5)
    names = [f"p{i}" for i in range(n)]
    g = nx.DiGraph(name=f"entries-{index}", credit=[SPEC.initial, SPEC.more_after])
    g.add_node(names[0], source=True, publishes=rng.randint(1, 3))
    for name in names[1:]:
        g.add_node(name)
    for j in range(1, n):
        g.add_edge(names[rng.randrange(j)], names[j])
    for _ in range(rng.randint(0, 2)):
        i, j = sorted(rng.sample(range(n), 2))
        if j > 0 and not g.has_edge(names[i], names[j]):
            g.add_edge(names[i], names[j])
    for name in rng.sample(names, rng.randint(1, 2)):
        g.nodes[name]["may_crash"] = True
    for name in names:
        if rng.random() < 0.7:
            g.nodes[name]["on_peer_down"] = "ignore"
    return flow_graph_from_networkx(g)


def random_run(graph: FlowGraph, rng: random.Random, length: int = 30) -> list[Step]:
    state, steps = rules.initial_state(graph), []
    for _ in range(length):
        enabled = rules.enabled_steps(graph, state)
        if not enabled:
            break
        # crashes early and often: the interesting case is a crash before any exchange
        crashes = [s for s in enabled if s.kind == "crash"]
        step = rng.choice(crashes if crashes and rng.random() < 0.3 else enabled)
        steps.append(step)
        state = rules.apply(graph, state, step)
    return steps


def runs(count: int) -> Iterator[tuple[FlowGraph, list[Step]]]:
    for seed in range(count):
        rng = random.Random(seed)
        graph = random_fault_graph(rng, seed)
        yield graph, random_run(graph, rng)


def erlang_leaks(
    state: NetworkState, dictionary: dict[str, ProcessView]
) -> set[tuple[str, str, str]]:
    """PROP-FAULT-FORGET read off Erlang's dictionaries: live watchers that handled a
    DOWN and still hold ``{credit_from, d}`` or ``{credit_to, d}``."""
    found = set()
    for watcher, dead in state.handled:
        view = dictionary[watcher]
        if watcher in state.dead:
            continue
        if dead in view.credit_from:
            found.add((watcher, dead, "credit_from"))
        if dead in view.credit_to:
            found.add((watcher, dead, "credit_to"))
    return found


def model_leaks(state: NetworkState) -> set[tuple[str, str, str]]:
    found = set()
    for watcher, dead in state.handled:
        ps = state.processes[watcher]
        if watcher in state.dead:
            continue
        if dead in ps.credit_from:
            found.add((watcher, dead, "credit_from"))
        if dead in ps.credit_to:
            found.add((watcher, dead, "credit_to"))
    return found


@pytest.fixture(scope="module")
def erlang() -> Iterator[RabbitMQAdapter]:
    adapter = RabbitMQAdapter(None)
    try:
        assert adapter.info["implementation"]["app_version"] == "3.10.8"
        yield adapter
    finally:
        adapter.close()


def test_the_model_holds_the_entries_erlangs_dictionary_holds(erlang: RabbitMQAdapter) -> None:
    """CF-ENTRY, PROP-FAULT-FORGET: 60 random fault graphs, a random run each, projected
    to per-process ops (TRACE-PROJECTION) and run in Erlang; after every op the acting
    process's credit maps are Erlang's (keys and values), and after every step the model
    violates PROP-FAULT-FORGET exactly where Erlang's dictionary keeps an entry for a
    dead peer whose DOWN was handled. Both kinds of ignored DOWN occur: with an entry
    (a leak) and before any exchange (no leak)."""
    leaks = clean_ignored = 0
    for graph, steps in runs(60):
        erlang.reset(SPEC)
        state = rules.initial_state(graph)
        dictionary = {name: ProcessView() for name in graph.node_names}
        for step in steps:
            ops = step_ops(graph, step, frozenset(state.handled))
            state = rules.apply(graph, state, step)
            for op, seen in zip(ops, erlang.run(ops), strict=True):
                dictionary[op.proc] = seen.state
            for name in graph.node_names:
                if name in state.dead:
                    continue
                ps, view = state.processes[name], dictionary[name]
                where = (graph.name, steps.index(step), name)
                assert dict(ps.credit_from) == dict(view.credit_from), where
                assert dict(ps.credit_to) == dict(view.credit_to), where
            expected = erlang_leaks(state, dictionary)
            assert model_leaks(state) == expected, (graph.name, step)
            assert properties.dead_peers_forgotten(state) == (not expected)
            if step.kind == "down" and not graph.node(step.node).calls_peer_down:
                if expected & {
                    (step.node, str(step.peer), k) for k in ("credit_from", "credit_to")
                }:
                    leaks += 1
                else:
                    clean_ignored += 1
    assert leaks > 0 and clean_ignored > 0, (leaks, clean_ignored)


def test_the_explorer_encoding_reads_the_same_leaks() -> None:
    """CF-ENTRY: the explorer's flat encoding holds the same entries as the readable
    model on every step of the same random runs (counts ``held`` and ``forgotten``)."""
    for graph, steps in runs(60):
        net = CreditNetwork(graph)
        state, flat = rules.initial_state(graph), net.initial()
        for step in steps:
            state = rules.apply(graph, state, step)
            flat = net.apply(flat, net.encode(step))
            assert rules.counts(graph, state)["faults"] == net.counts(flat)["faults"], (
                graph.name,
                step,
            )


def test_the_leak_message_names_the_entry() -> None:
    """PROP-FAULT-FORGET: the counterexample says which dictionary entry leaked, as
    Erlang names it; the shipped bug corpus moves from 2 steps to 4 and 5 (CF-ENTRY)."""
    for scenario, length, entry in (
        (
            "dead-mirror-3.8.10-bug",
            4,
            "channel keeps {credit_from, mirror} for dead mirror",
        ),
        ("msg-store-dead-client-3.3.0-bug", 5, "msg_store keeps {credit_to, queue} for dead queue"),
    ):
        _, result = check_graph(
            load_graph_file(BUGS / f"{scenario}.json"), CheckOptions(stop_at_deadlock=False)
        )
        finding = result.findings["PROP-FAULT-FORGET"]
        assert finding.length == length, scenario
        assert finding.detail.startswith(entry), finding.detail
        assert "does not call CF-PEER-DOWN" in finding.detail
