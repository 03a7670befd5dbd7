"""Issue 20, class 7: ``max_hops`` 10**6 made AC-OVERSHOOT's bounds walk 2·10**6 (actor,
hop) places (45 s, 1.4 GB). IN-OVERSHOOT-WORK refuses such a graph in the input layer, in
one line and before any work; these tests attack the limit and its estimates."""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance import exit_codes
from creditflow.conformance.inputs import actor_graphs
from creditflow.conformance.inputs.actor_graphs import (
    ActorGraphFileError,
    load_actor_graph,
    overshoot_places,
    potential_bits,
)
from creditflow.conformance.inputs.bounds import MAX_OVERSHOOT_PLACES, MAX_POTENTIAL_BITS
from creditflow.model.accounts import properties
from creditflow.model.accounts.graph import ActorGraph, actor_graph_from_networkx
from creditflow.model.accounts.properties import overshoot_bounds
from creditflow.model.accounts.rules import AccountsModel
from tests.hardening.helpers import invoke, one_error_line


def two_cycle(max_hops: int, events: int = 1) -> nx.DiGraph:
    """Reader ``a`` and ``b`` sending to each other; ``a -> b`` sends ``events``."""
    g = nx.DiGraph(name="hops", limit=2, max_hops=max_hops)
    g.add_node("a", reads=1)
    g.add_node("b")
    g.add_edge("a", "b", events=events)
    g.add_edge("b", "a")
    return g


def write(path: Path, g: nx.DiGraph) -> Path:
    path.write_text(json.dumps(nx.node_link_data(g, edges="edges")))
    return path


def test_a_million_hops_is_refused_in_one_line_before_any_work(tmp_path, monkeypatch):
    """IN-OVERSHOOT-WORK: ``max_hops`` 10**6 round a 2-cycle is refused with one line naming
    the file, the limit and max_hops, exit 2; the bounds are never computed."""

    def no_work(model):
        raise AssertionError("the overshoot bounds were computed")

    monkeypatch.setattr(properties, "overshoot_bounds", no_work)
    path = write(tmp_path / "hops.json", two_cycle(10**6))
    code, _, err = invoke("accounts", "check", str(path), "--max-states", "1000")
    line = one_error_line(err)
    assert code == exit_codes.USAGE
    assert str(path) in line and "IN-OVERSHOOT-WORK" in line and "max_hops" in line


def test_the_place_limit_is_exact(tmp_path):
    """IN-OVERSHOOT-WORK: round a 2-cycle one actor is at each hop, ``max_hops + 1`` places:
    exactly :data:`MAX_OVERSHOOT_PLACES` is read, one more refused."""
    at_limit = write(tmp_path / "at.json", two_cycle(MAX_OVERSHOOT_PLACES - 1))
    assert load_actor_graph(at_limit).max_hops == MAX_OVERSHOOT_PLACES - 1
    over = write(tmp_path / "over.json", two_cycle(MAX_OVERSHOOT_PLACES))
    with pytest.raises(ActorGraphFileError, match="100,000 .actor, hop. places"):
        load_actor_graph(over)


def test_places_are_counted_per_account_and_with_timers():
    """IN-OVERSHOOT-WORK: a second account walks its own places; a timer reachable from a
    reader adds the places its firings reach (as AC-OVERSHOOT's ``T`` walks them)."""
    g = two_cycle(10)
    assert overshoot_places(AccountsModel(actor_graph_from_networkx(g)), 10**6) == 11
    g.add_node("b", reads=1)  # b reads on its own account, from hop 0
    assert overshoot_places(AccountsModel(actor_graph_from_networkx(g)), 10**6) == 22
    t = nx.DiGraph(name="t", limit=2, max_hops=3)
    t.add_node("r", reads=1)
    t.add_node("c", timer=2)
    t.add_edge("r", "c")
    t.add_edge("c", "s")
    # reads: (r,0) (c,1) (s,2); the timer fires at (c,0), its events reach (s,1)
    assert overshoot_places(AccountsModel(actor_graph_from_networkx(t)), 10**6) == 5
    assert overshoot_places(AccountsModel(actor_graph_from_networkx(t)), 5) == 5
    assert overshoot_places(AccountsModel(actor_graph_from_networkx(t)), 3) > 3  # stops early


def test_a_multiplying_cycle_is_refused_for_its_values(tmp_path):
    """IN-OVERSHOOT-WORK: ``a -> b`` sending 2 events round a 5,000-hop cycle makes potentials
    of about 2**2,500 (few places, huge values): refused in one line, exit 2."""
    path = write(tmp_path / "mult.json", two_cycle(5_000, events=2))
    code, _, err = invoke("accounts", "check", str(path))
    line = one_error_line(err)
    assert code == exit_codes.USAGE and str(path) in line and "IN-OVERSHOOT-WORK" in line
    assert potential_bits(AccountsModel(load_actor_graph_unchecked(path))) > MAX_POTENTIAL_BITS


def load_actor_graph_unchecked(path: Path) -> ActorGraph:
    """The graph in ``path`` validated (AC-GRAPH) without IN-OVERSHOOT-WORK's check."""
    return actor_graph_from_networkx(
        nx.node_link_graph(json.loads(path.read_text()), edges="edges"), name=path.stem
    )


@st.composite
def small_actor_graphs(draw: st.DrawFn) -> nx.DiGraph:
    """Small actor graphs, cyclic ones with a small ``max_hops``, with events 1..4."""
    n = draw(st.integers(2, 6))
    pairs = draw(
        st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=12)
    )
    g = nx.DiGraph(name="g", limit=draw(st.integers(0, 3)))
    for i in range(n):
        g.add_node(f"x{i}")
    g.nodes["x0"]["reads"] = 1
    g.nodes["x0"]["batch"] = draw(st.integers(1, 3))
    for a, b in pairs:
        g.add_edge(f"x{a}", f"x{b}", events=draw(st.integers(1, 4)))
    if not nx.is_directed_acyclic_graph(g) or draw(st.booleans()):
        g.graph["max_hops"] = draw(st.integers(1, 6))
    return g


@settings(max_examples=150, deadline=None)
@given(small_actor_graphs())
def test_the_potential_estimate_bounds_the_potentials(g: nx.DiGraph) -> None:
    """IN-OVERSHOOT-WORK: :func:`potential_bits` is an upper bound: every potential the
    bounds use (the peak ``P*`` and one read's ``R / batch``) is at most 2**bits."""
    model = AccountsModel(actor_graph_from_networkx(g))
    bits = potential_bits(model)
    for bound in overshoot_bounds(model):
        assert math.log2(bound.peak_potential) <= bits + 1e-9
        per_event = bound.read_potential / g.nodes["x0"]["batch"]
        assert per_event <= 1 or math.log2(per_event) <= bits + 1e-9


def test_the_check_runs_where_actor_graphs_are_read(monkeypatch, tmp_path):
    """IN-OVERSHOOT-WORK: :func:`load_actor_graph` calls the check for every file it reads."""
    seen: list[str] = []
    monkeypatch.setattr(actor_graphs, "check_overshoot_work", lambda g, where: seen.append(where))
    path = write(tmp_path / "ok.json", two_cycle(3))
    load_actor_graph(path)
    assert seen == [str(path)]
