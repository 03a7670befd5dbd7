"""EXP-VECTOR: the block-at-a-time search gives the one-state-at-a-time search's states,
numbered the same, the same state graph and the same verdicts and counterexamples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import creditflow.conformance.explore.explorer as explorer
from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.conformance.inputs.graphs import load_preset, preset_names
from creditflow.model.credit.spec import CreditSpec
from tests.strategies import process_graphs


def both(monkeypatch, graph, block: int, after: int = 0, **options):
    """The same exploration on each engine (the vectorized one in blocks of ``block``,
    taking over once more than ``after`` states are stored)."""
    count_consumed = options.pop("count_consumed", False)
    symmetric = options.pop("symmetry", False)

    def run():
        system = CompiledNetwork(graph, count_consumed=count_consumed)
        symmetry = network_symmetry(system.network) if symmetric else None
        return explore(system, symmetry=symmetry, **options)

    monkeypatch.setattr(explorer, "VECTOR_AFTER", 10**12)
    one = run()
    monkeypatch.setattr(explorer, "VECTOR_AFTER", after)
    monkeypatch.setattr(explorer, "VECTOR_FRONTIER", 1)
    monkeypatch.setattr(explorer, "VECTOR_BLOCK", block)
    return one, run()


def assert_same(one, many) -> None:
    assert (one.n_states, one.transitions, one.complete, one.stopped_at_deadlock) == (
        many.n_states,
        many.transitions,
        many.complete,
        many.stopped_at_deadlock,
    )
    assert one.symmetry_order == many.symmetry_order
    assert (one.graph.perm_ids is None) == (many.graph.perm_ids is None)
    if one.graph.perm_ids is not None:
        assert list(one.graph.perm_ids) == list(many.graph.perm_ids)
    for name in ("parent", "action", "depth", "offsets", "targets"):
        assert list(getattr(one.graph, name)) == list(getattr(many.graph, name)), name
    assert list(one.graph.states) == list(many.graph.states)
    assert one.graph.stuck == many.graph.stuck
    assert one.graph.step_witness == many.graph.step_witness
    assert one.findings.keys() == many.findings.keys()
    for pid, finding in one.findings.items():
        other = many.findings[pid]
        assert (finding.kind, finding.length, finding.processes, finding.path, finding.detail) == (
            other.kind,
            other.length,
            other.processes,
            other.path,
            other.detail,
        ), pid


@settings(max_examples=60, deadline=None)
@given(
    graph=process_graphs(max_nodes=4),
    block=st.sampled_from([1, 3, 64, 1 << 16]),
    after=st.sampled_from([0, 1, 25]),
    online=st.booleans(),
    reduce=st.booleans(),
    budget=st.sampled_from([40, 300, 3000]),
    count_consumed=st.booleans(),
    symmetry=st.booleans(),
)
def test_same_search_on_random_graphs(
    graph, block, after, online, reduce, budget, count_consumed, symmetry
):
    """EXP-VECTOR, EXP-BFS, EXP-BUDGET, EXP-ONLINE, EXP-SAFE, EXP-SYMMETRY: same
    numbering, same cut."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        one, many = both(
            monkeypatch,
            graph,
            block,
            after,
            stop_at_deadlock=online,
            reduce=reduce,
            max_states=budget,
            count_consumed=count_consumed,
            symmetry=symmetry,
        )
    assert_same(one, many)


@pytest.mark.parametrize("name", preset_names())
@pytest.mark.parametrize("online", [False, True])
@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("after", [0, 7])
def test_same_search_on_presets(monkeypatch, name, online, symmetry, after):
    """EXP-VECTOR taking over after the first expansion or after 7 states."""
    graph = load_preset(name).with_credit(CreditSpec(2, 1)).with_publishes(4)
    one, many = both(monkeypatch, graph, 5, after, stop_at_deadlock=online, symmetry=symmetry)
    assert isinstance(many.graph.states, explorer.RowStates)  # the engine under test ran
    assert_same(one, many)


def test_same_search_on_a_deadlocking_all_check_graph(monkeypatch):
    """EXP-ONLINE resolutions inside blocks: cycle3 with every process checking."""
    graph = load_preset("cycle3").with_all_checking().with_credit(CreditSpec(2, 1))
    for block in (1, 2, 17, 1 << 16):
        assert_same(*both(monkeypatch, graph.with_publishes(6), block, stop_at_deadlock=True))


@settings(max_examples=40, deadline=None)
@given(graph=process_graphs(max_nodes=4), data=st.data())
def test_block_rules_agree_with_the_compiled_ones(graph, data):
    """NET-BLOCKED, EXP-CERTIFICATE, PROP-* on arbitrary rows: the numpy versions say
    what the compiled and the certificate's own code say."""
    system = CompiledNetwork(graph, count_consumed=False)
    vector = system.vectorized
    size = vector.width
    rows = np.array(
        [data.draw(st.lists(st.integers(-3, 4), min_size=size, max_size=size)) for _ in range(30)],
        dtype=np.int32,
    )
    found = vector.violations(rows)
    certified = vector.certified(rows)
    maybe = vector.maybe_certified(rows)
    for k, row in enumerate(rows.tolist()):
        state = tuple(row)
        assert {pid for pid, mask in found.items() if mask[k]} == set(system.violations(state))
        assert vector.blocked_masks(rows[k : k + 1])[0] == system.blocked_mask(state)
        assert certified[k] == system.stuck_certificate(state)
        assert maybe[k] or not certified[k]
    for rank, mask in enumerate(vector.enabled(rows)):
        action = vector.actions[rank]
        for k, row in enumerate(rows.tolist()):
            assert bool(mask[k]) == system.network.is_enabled(tuple(row), action)
            if mask[k]:
                assert tuple(vector.apply(rows[k : k + 1], action)[0].tolist()) == (
                    system.network.apply(tuple(row), action)
                )


@pytest.mark.parametrize("when", ["at the hand-over", "in a later block"])
def test_a_hash_collision_falls_back(monkeypatch, when):
    """EXP-VECTOR: equal hashes of different states, among the states handed over or
    between a new state and a stored one later, are caught by comparing the rows, and
    the search runs one state at a time instead, with the same result."""
    graph = load_preset("fanout").with_credit(CreditSpec(2, 1)).with_publishes(6)
    monkeypatch.setattr(explorer, "VECTOR_AFTER", 10**12)
    expected = explore(CompiledNetwork(graph, count_consumed=False))
    monkeypatch.setattr(explorer, "VECTOR_AFTER", 0)
    monkeypatch.setattr(explorer, "VECTOR_FRONTIER", 1)
    system = CompiledNetwork(graph, count_consumed=False)
    real = system.vectorized.hashes
    calls = []

    def colliding(rows):
        calls.append(len(rows))
        if when == "in a later block" and len(calls) == 1:
            return real(rows)
        return real(rows) & np.uint64(0xF)  # 16 buckets

    monkeypatch.setattr(system.vectorized, "hashes", colliding)
    got = explore(system)
    assert calls  # the vectorized engine was tried, and gave up
    assert not isinstance(got.graph.states, explorer.RowStates)
    assert_same(expected, got)


def test_same_search_under_symmetry(monkeypatch):
    """EXP-SYMMETRY in blocks: fanout (an automorphism swaps its two queues), canonical
    rows and automorphism ids as one state at a time."""
    graph = load_preset("fanout").with_credit(CreditSpec(2, 1)).with_publishes(5)
    for block in (3, 1 << 16):
        one, many = both(monkeypatch, graph, block, symmetry=True)
        assert one.symmetry_order > 1
        assert_same(one, many)


def test_same_search_when_the_stored_rows_widen(monkeypatch):
    """EXP-STORE within EXP-VECTOR: credits and supplies above 127 need int16 rows
    (the store widens from int8); states, numbers and verdicts do not change."""
    graph = load_preset("stalled-queue").with_credit(CreditSpec(130, 20)).with_publishes(140)
    one, many = both(monkeypatch, graph, 1 << 10, after=7)
    assert many.graph.states._rows.dtype is np.int16
    assert_same(one, many)
