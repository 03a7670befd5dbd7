"""Sweep files, graph families, credits and case identity (no Spark needed)."""

from __future__ import annotations

import random
import textwrap

import networkx as nx
import pytest

from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.sweep.cases import case_id, expand, family_graphs, graph_digest
from creditflow.conformance.sweep.checkers import CheckerError, resolve_checker
from creditflow.conformance.sweep.families import FAMILY_KINDS
from creditflow.conformance.sweep.features import CYCLE_CAP, graph_features
from creditflow.conformance.sweep.sweepfile import (
    SweepFileError,
    load_sweep,
    parse_sweep,
    shipped_sweep_names,
)
from creditflow.conformance.sweep.worker import case_graph

BASE = """
name = "t"
seed = 11
[budget]
max_states = 1000
max_seconds = 5
[settings]
credits = { grid = { initial = [1, 2], more_after = [1] } }
variants = ["faithful", "all-check"]
publishes = [2]
"""


def sweep(extra: str, base: str = BASE):
    return parse_sweep(textwrap.dedent(base) + textwrap.dedent(extra), "t.toml")


def test_shipped_sweep_files_load():
    """SW-FILE: the shipped sweep files are valid and expand to cases."""
    assert {"smoke", "example"} <= set(shipped_sweep_names())
    for name in shipped_sweep_names():
        cases, graphs = expand(load_sweep(name))
        assert cases and graphs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[family]]\nkind = 'ring'\n", "family[0]: kind must be one of"),
        ("[[family]]\nkind = 'random-dag'\nnode = 3\n", "unknown key 'node'"),
        (
            "[[family]]\nkind = 'random-dag'\nnodes = [1]\n",
            "family[0] (random-dag).nodes must be in 2..1000",
        ),
        ("[[family]]\nkind = 'random-cyclic'\nnodes = 3\nedges = 7\n", "exceeds nodes*(nodes-1)"),
        ("[[family]]\nkind = 'broker'\nqueues = 1\nstalled_queues = 2\n", "stalled_queues (2)"),
        ("[[family]]\nkind = 'broker'\nvariants = ['lazy']\n", "unknown value 'lazy'"),
        ("[[family]]\nkind = 'broker'\ncheckers = ['magic']\n", "unknown checker 'magic'"),
        ("[[family]]\nkind = 'broker'\n[[family]]\nkind = 'broker'\n", "already exists"),
        ("", "no families"),
        (
            "[[family]]\nkind = 'broker'\ncredits = { grid = { initial = [1] } }\n",
            "grid needs initial and more_after",
        ),
        ("[[family]\n", "not valid TOML"),
    ],
)
def test_bad_sweep_files_are_one_line_errors(text, message):
    """SW-FILE: every problem is one line naming the file and the place."""
    with pytest.raises(SweepFileError) as err:
        sweep(text)
    assert str(err.value).startswith("t.toml: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_and_yaml_files(tmp_path):
    """SW-FILE: a missing file, an unknown shipped name and a YAML file are one-line errors."""
    with pytest.raises(SweepFileError, match="no such file"):
        load_sweep(tmp_path / "none.toml")
    with pytest.raises(SweepFileError, match="shipped: .*smoke"):
        load_sweep("nonexistent")
    (tmp_path / "s.yaml").write_text("name: x\n")
    with pytest.raises(SweepFileError, match="sweep files are TOML"):
        load_sweep(tmp_path / "s.yaml")


def test_checker_names():
    """SW-CHECKER: built-in names, plug-ins by module:function, one-line errors."""
    assert resolve_checker("explore").__name__ == "explore_checker"
    assert resolve_checker("prove").__name__ == "prove_checker"
    assert resolve_checker("tests.sweep_plugins:spin").__name__ == "spin"
    with pytest.raises(CheckerError, match="cannot load no.such:thing"):
        resolve_checker("no.such:thing")
    with pytest.raises(SweepFileError, match="checker 'tests.sweep_plugins:nope'"):
        parse_sweep(
            "[[family]]\nkind = 'broker'\ncheckers = ['tests.sweep_plugins:nope']\n",
            "t.toml",
            plugins=["tests.sweep_plugins"],
        )


def test_broker_topology_double_debits_mirrors():
    """SW-BROKER, NET-DEBITS: readers -> channels -> queues -> one msg_store; every mirror
    edge has sends_per_message = 2 and starts at a channel routing to its queue."""
    kind = FAMILY_KINDS["broker"]
    params = {
        **kind.defaults(),
        "readers": 2,
        "queues": 3,
        "mirrors": 2,
        "routes": 2,
        "stalled_queues": 1,
    }
    g = kind.build(params, random.Random(5))
    stores = [n for n, d in g.nodes(data=True) if d.get("role") == "rabbit_msg_store"]
    assert stores == ["msg_store"]
    mirror_edges = [(u, v) for u, v, d in g.edges(data=True) if d.get("sends_per_message") == 2]
    assert mirror_edges
    for u, v in mirror_edges:
        assert g.nodes[u]["role"] == "rabbit_channel"
        assert g.nodes[v]["role"] == "rabbit_mirror_queue_slave"
        assert g.has_edge(u, v.split(".mirror")[0])  # the channel routes to the master too
    for queue in (f"queue{q}" for q in range(3)):
        assert g.in_degree(queue) >= 1 and g.has_edge(queue, "msg_store")
    assert g.nodes["queue0"]["stalled"] and not g.nodes["queue1"]["stalled"]
    assert sorted(n for n, d in g.nodes(data=True) if d.get("source")) == ["reader0", "reader1"]
    for ch in ("channel0", "channel1"):  # routes = 2 of 3 queues (plus coverage)
        assert 2 <= sum(1 for q in g.successors(ch) if ".mirror" not in q) <= 3


@pytest.mark.parametrize("kind", ["random-dag", "random-cyclic", "layered"])
def test_random_families_are_valid_and_have_their_shape(kind):
    """SW-FAMILIES: DAGs are acyclic, cyclic graphs have a cycle, all are weakly connected
    with a source; layered graphs connect only consecutive layers."""
    family = FAMILY_KINDS[kind]
    for seed in range(30):
        params = family.defaults()
        if kind == "random-cyclic":
            params = {**params, "nodes": 5, "edges": 4, "sources": 2}
        if kind == "layered":
            params = {**params, "widths": (2, 3, 2), "edge_probability": 0.3}
        g = family.build(params, random.Random(seed))
        assert nx.is_weakly_connected(g)
        assert any(d.get("source") for _, d in g.nodes(data=True))
        if kind == "random-dag":
            assert nx.is_directed_acyclic_graph(g)
            assert {n for n in g if g.in_degree(n) == 0} == {
                n for n, d in g.nodes(data=True) if d.get("source")
            }
        if kind == "random-cyclic":
            assert not nx.is_directed_acyclic_graph(g)
            assert sum(1 for _, d in g.nodes(data=True) if d.get("source")) >= 2
        if kind == "layered":
            for u, v in g.edges:
                assert int(v[1]) == int(u[1]) + 1
            for n in g:
                layer = int(n[1])
                assert layer == 0 or g.in_degree(n) >= 1
                assert layer == 2 or g.out_degree(n) >= 1


def test_expansion_is_deterministic_and_families_independent():
    """SW-SEED, SW-CASE-ID: the same file gives the same cases and ids; adding a family
    changes no other family's graphs or ids."""
    one = "[[family]]\nkind = 'random-dag'\nname = 'dag'\nnodes = [4, 5]\ninstances = 3\n"
    two = one + "[[family]]\nkind = 'random-cyclic'\nname = 'cyc'\ninstances = 2\n"
    first, _ = expand(sweep(one))
    again, _ = expand(sweep(one))
    more, _ = expand(sweep(two))
    ids = [c.case_id for c in first]
    assert ids == [c.case_id for c in again]
    assert len(set(ids)) == len(ids)
    assert ids == [c.case_id for c in more if c.graph.family == "dag"]
    reseeded, _ = expand(sweep(one, BASE.replace("seed = 11", "seed = 12")))
    assert {c.graph.digest for c in reseeded} != {c.graph.digest for c in first}


def test_case_count_and_dimensions():
    """SW-CASE: graphs x credits x variants x publishes x checkers, in file order."""
    spec = sweep("[[family]]\nkind = 'broker'\nqueues = [1, 2]\npublishes = [1, 3]\n")
    cases, graphs = expand(spec)
    assert len(graphs) == 2
    assert len(cases) == 2 * 2 * 2 * 2  # graphs x credits x variants x publishes
    first = cases[0].static_fields()
    assert (first["graph_id"], first["credit_label"], first["variant"], first["publishes"]) == (
        "broker/queues=1#0",
        "{1,1}",
        "faithful",
        1,
    )
    assert {c.task.publishes for c in cases} == {1, 3}


def test_identity_excludes_budget_but_includes_content():
    """SW-CASE-ID: raising the budget keeps ids; a different graph or setting changes them."""
    text = "[[family]]\nkind = 'layered'\n"
    low, _ = expand(sweep(text))
    high, _ = expand(sweep(text, BASE.replace("max_states = 1000", "max_states = 9000")))
    assert [c.case_id for c in low] == [c.case_id for c in high]
    assert high[0].task.max_states == 9000
    g = low[0].graph
    base = case_id(g, (1, 1), None, "faithful", 2, "explore")
    assert base == low[0].case_id
    assert case_id(g, (1, 1), None, "faithful", 3, "explore") != base
    assert case_id(g, (1, 1), None, "all-check", 2, "explore") != base
    assert case_id(g, (2, 1), None, "faithful", 2, "explore") != base
    assert case_id(g, (1, 1), None, "faithful", 2, "tests.sweep_plugins:spin") != base
    assert graph_digest(load_preset("cycle2")) != graph_digest(load_preset("cycle3"))
    renamed = load_preset("cycle2")
    assert graph_digest(renamed) == graph_digest(renamed.with_credit(renamed.edges[0].credit))


def test_duplicate_instances_are_dropped():
    """SW-FAMILIES: a deterministic generator with instances > 1 yields one graph."""
    spec = sweep("[[family]]\nkind = 'layered'\ninstances = 5\n")
    assert len(list(family_graphs(spec, spec.families[0]))) == 1


def test_random_and_per_edge_credits():
    """SW-CREDITS: random draws within their ranges (M <= I), shared by a family;
    per-edge draws give each edge its own spec and a 'per-edge' label."""
    spec = sweep(
        "[[family]]\nkind = 'random-dag'\nname = 'dag'\nnodes = 4\ninstances = 2\n"
        "credits = { random = { count = 5, initial = [2, 6], more_after = [1, 9] } }\n"
        "[[family]]\nkind = 'broker'\nname = 'b'\nmirrors = 1\n"
        "credits = { random = { count = 3, initial = [1, 4], more_after = [1, 2], "
        "per_edge = true } }\n"
    )
    cases, _ = expand(spec)
    dag = [c for c in cases if c.graph.family == "dag"]
    specs_by_graph: dict[str, set] = {}
    for c in dag:
        i, m = c.task.credit
        assert 2 <= i <= 6 and 1 <= m <= i
        specs_by_graph.setdefault(c.graph.graph_id, set()).add(c.task.credit)
    assert len({frozenset(s) for s in specs_by_graph.values()}) == 1
    broker = [c for c in cases if c.graph.family == "b"]
    assert broker and all(c.task.credit is None for c in broker)
    fields = broker[0].static_fields()
    assert fields["credit_label"] == "per-edge"
    edge_credits = broker[0].task.edge_credits
    assert len(edge_credits) == fields["edges"]
    assert fields["credit_initial"] == min(c[0] for c in edge_credits)
    graph = case_graph(broker[0].graph.graph, broker[0].task)
    assert [tuple(e.credit) for e in graph.edges] == list(edge_credits)


def test_case_graph_applies_settings():
    """SW-VARIANT, SW-CASE: the case's graph has its credit, supply and variant."""
    spec = sweep("[[family]]\nkind = 'broker'\n")
    cases, _ = expand(spec)
    all_check = next(c for c in cases if c.task.variant == "all-check")
    graph = case_graph(all_check.graph.graph, all_check.task)
    assert all(n.checks_blocked for n in graph.nodes)
    assert all(tuple(e.credit) == all_check.task.credit for e in graph.edges)
    assert [n.publishes for n in graph.sources] == [2]
    faithful = next(c for c in cases if c.task.variant == "faithful")
    graph = case_graph(faithful.graph.graph, faithful.task)
    assert [n.name for n in graph.nodes if n.checks_blocked] == ["reader0"]


def test_features_of_presets():
    """SW-FEATURES: known values on the presets, the cycle cap, depth over the
    condensation."""
    f = graph_features(load_preset("fanout"))
    assert (f["nodes"], f["edges"], f["max_fan_out"], f["max_fan_in"], f["depth"]) == (
        4,
        4,
        2,
        2,
        2,
    )
    assert (f["cycles"], f["has_cycle"], f["sources"], f["sinks"]) == (0, False, 1, 1)
    f = graph_features(load_preset("cycle2"))
    assert (f["cycles"], f["largest_scc"], f["depth"], f["sinks"]) == (1, 2, 0, 0)
    f = graph_features(load_preset("stalled-queue"))
    assert (f["stalled"], f["depth"]) == (1, 2)
    complete = nx.complete_graph(7, nx.DiGraph)
    nx.set_node_attributes(complete, {0: True}, "source")
    from creditflow.model.network.graph import flow_graph_from_networkx

    complete.graph["credit"] = [1, 1]
    assert graph_features(flow_graph_from_networkx(complete))["cycles"] == CYCLE_CAP
