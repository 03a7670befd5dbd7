"""Every shipped mutant is killed by ``creditflow conform`` within 60 s, and the kill is
a real divergence on a short trace (the correct implementations never diverge: see
test_conform.py and test_regressions.py). The README's kill table comes from
``benchmarks/mutant_kill_table.py``."""

from __future__ import annotations

import time

import pytest

from creditflow.adapters.mutants import MODULES, mutants
from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential.conform import ConformOptions, run_conform
from creditflow.conformance.differential.session import check_trace
from creditflow.conformance.differential.traces import load_trace

KILL_SECONDS = 60


def test_at_least_ten_mutants_each_with_its_own_fault():
    found = mutants()
    assert len(found) == len(MODULES) >= 10
    assert len({m.fault for m in found.values()}) == len(found)
    for m in found.values():
        assert "CF-" in m.fault  # the rule each one breaks


@pytest.mark.parametrize("name", sorted(mutants()))
def test_conform_kills_the_mutant(name, tmp_path):
    """AD-DIVERGENCE on every mutant: a divergence (not a crash) within the time cap,
    whose minimal trace replays to the same divergence and passes on the model."""
    started = time.monotonic()
    result = run_conform(
        adapter_factory(f"mutant:{name}"),
        ConformOptions(seed=20261122, out_dir=tmp_path),
    )
    seconds = time.monotonic() - started
    assert result.verdict == "divergence", (name, result.failure)
    assert seconds < KILL_SECONDS, (name, seconds)
    assert result.trace_path is not None and result.trace_path.is_file()
    loaded = load_trace(result.trace_path)
    assert 1 <= len(loaded.trace.steps) <= 12
    with adapter_factory(f"mutant:{name}")() as mutant:
        divergence, _ = check_trace(mutant, loaded.trace.spec, loaded.trace.ops)
    assert divergence is not None and divergence.index == len(loaded.trace.steps) - 1
    with adapter_factory("reference")() as reference:
        assert check_trace(reference, loaded.trace.spec, loaded.trace.ops)[0] is None
