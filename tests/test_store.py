"""EXP-STORE: the packed state store keeps every value and every number as the unpacked
search did; only the integer types and the table change."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import creditflow.conformance.explore.deadlock as deadlock
import creditflow.conformance.explore.explorer as explorer
import creditflow.conformance.explore.store as store
from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.explorer import RowStates, explore
from creditflow.conformance.explore.store import (
    PackedRows,
    index_typecode,
    mask_typecode,
    offset_typecode,
)
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec


def _hashes(rows: np.ndarray) -> np.ndarray:
    """A deliberately poor hash (the row sum): many different rows share one."""
    return np.asarray(rows, dtype=np.int64).sum(axis=1).astype(np.uint64)


def test_rows_are_found_by_value_and_numbered_in_order():
    """EXP-STORE: a row's number is the order it was added; a row not stored is -1;
    equal hashes of different rows are told apart by comparing the rows."""
    packed = PackedRows(3, _hashes)
    rng = np.random.default_rng(7)
    rows = np.unique(rng.integers(-60, 60, size=(5000, 3)), axis=0)
    rows = rows[rng.permutation(len(rows))].astype(np.int32)
    half = len(rows) // 2
    for lo in range(0, half, 97):  # blocks, so that the table is rebuilt several times
        packed.add(rows[lo : min(lo + 97, half)], _hashes(rows[lo : min(lo + 97, half)]))
    assert packed.n == half
    assert len(packed._table) > 1024  # grown
    found = packed.lookup(rows, _hashes(rows))
    assert found[:half].tolist() == list(range(half))
    assert (found[half:] == -1).all()
    assert packed.array.tolist() == rows[:half].tolist()


def test_rows_widen_when_a_value_does_not_fit():
    """EXP-STORE: int8 until a value needs int16, then int32; no value changes."""
    packed = PackedRows(2, _hashes)
    first = np.array([[1, -2], [127, -128]], dtype=np.int32)
    packed.add(first, _hashes(first))
    assert packed.dtype is np.int8
    wide = np.array([[300, 0]], dtype=np.int32)
    packed.add(wide, _hashes(wide))
    assert packed.dtype is np.int16
    wider = np.array([[-70000, 5]], dtype=np.int32)
    packed.add(wider, _hashes(wider))
    assert packed.dtype is np.int32
    everything = np.concatenate([first, wide, wider])
    assert packed.array.tolist() == everything.tolist()
    assert packed.lookup(everything, _hashes(everything)).tolist() == [0, 1, 2, 3]


def test_typecodes_follow_the_bounds():
    """EXP-STORE: 32-bit state numbers below 2**31 states, 32-bit offsets while the
    budget times the actions fits, the narrowest mask word that holds every process."""
    assert index_typecode(2**31 - 2) == "i"
    assert index_typecode(2**31 - 1) == "q"
    assert offset_typecode(1_000_000, 9) == "i"
    assert offset_typecode(1_000_000, 5_000) == "q"
    assert offset_typecode(10, None) == "q"
    assert [mask_typecode(n) for n in (1, 8, 9, 16, 17, 32, 33, 64)] == [
        "B",
        "B",
        "H",
        "H",
        "I",
        "I",
        "Q",
        "Q",
    ]


def test_the_vectorized_search_stores_packed_rows(monkeypatch):
    """EXP-STORE within EXP-VECTOR: the fanout's rows are stored as int8, the graph's
    numbers as 32-bit, the blocked masks in one byte, and the verdicts are those of the
    one-state engine."""
    graph = load_preset("fanout").with_credit(CreditSpec(3, 1)).with_publishes(8)
    monkeypatch.setattr(explorer, "VECTOR_AFTER", 0)
    monkeypatch.setattr(explorer, "VECTOR_FRONTIER", 1)
    result = explore(CompiledNetwork(graph, count_consumed=False), reduce=False)
    assert isinstance(result.graph.states, RowStates)
    assert result.graph.states._rows.dtype is np.int8
    assert {result.graph.parent.typecode, result.graph.targets.typecode} == {"i"}
    assert result.graph.blocked.typecode == "B"
    assert result.graph.stuck.typecode == "B"
    monkeypatch.setattr(explorer, "VECTOR_AFTER", 10**12)
    one = explore(CompiledNetwork(graph, count_consumed=False), reduce=False)
    assert list(one.graph.states) == list(result.graph.states)
    assert list(one.graph.stuck) == list(result.graph.stuck)
    assert one.holds == result.holds


@pytest.mark.parametrize("symmetric", [False, True])
def test_deadlock_sweep_in_pieces_gives_the_same_fixpoint(monkeypatch, symmetric):
    """EXP-DEADLOCK swept in pieces of one state (EXP-STORE bounds the sweep's memory
    that way) finds who is blocked forever exactly as level by level."""
    graph = load_preset("stalled-queue").with_credit(CreditSpec(2, 1)).with_publishes(6)

    def run() -> Any:
        system = CompiledNetwork(graph, count_consumed=False)
        symmetry = network_symmetry(system.network) if symmetric else None
        return explore(system, symmetry=symmetry, reduce=False)

    whole = run()
    assert any(whole.graph.stuck)  # a graph with processes blocked forever
    monkeypatch.setattr(deadlock, "SWEEP_STATES", 1)
    pieces = run()
    assert list(pieces.graph.stuck) == list(whole.graph.stuck)
    assert pieces.findings.keys() == whole.findings.keys()


def test_deadlock_sweep_in_pieces_on_a_cyclic_state_graph(monkeypatch):
    """EXP-DEADLOCK's least fixpoint, swept one state at a time, on a state graph with a
    cycle (0 -> 1 -> 2 -> 1, process 0 blocked in 1 and 2; 0 -> 3 free)."""
    monkeypatch.setattr(deadlock, "SWEEP_STATES", 1)
    blocked, depth = [0b00, 0b01, 0b01, 0b00], [0, 1, 2, 1]
    stuck = deadlock.blocked_forever(blocked, [0, 2, 3, 4, 4], [1, 3, 2, 1], depth, 2)
    assert list(stuck) == [0, 1, 1, 0]
    free = deadlock.blocked_forever(blocked, [0, 2, 3, 5, 5], [1, 3, 2, 1, 3], depth, 2)
    assert list(free) == [0, 0, 0, 0]


def test_table_load_stays_below_the_limit():
    """EXP-STORE: at most MAX_LOAD of the table's slots are used."""
    packed = PackedRows(1, _hashes)
    rows = np.arange(10_000, dtype=np.int32)[:, None]
    for lo in range(0, len(rows), 1000):
        packed.add(rows[lo : lo + 1000], _hashes(rows[lo : lo + 1000]))
        assert packed.n <= store.MAX_LOAD * len(packed._table)
    assert (packed._table >= 0).sum() == packed.n
