"""AD-BATCHED: conform's batched-ops phase — whole examples written at once, compared
after, with the exact first diverging op and a 1-minimal shrunk trace."""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from creditflow.adapters.registry import adapter_factory, command_factory
from creditflow.conformance.differential import batched
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.batched import (
    SPECS,
    examples,
    generate_example,
    run_batched,
)
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.protocol import OP_KINDS
from creditflow.conformance.differential.session import check_examples, check_trace

FAULTY = f"{sys.executable} {Path(__file__).parent / 'faulty_adapter.py'}"
EVERY_OP = frozenset(OP_KINDS)


def test_examples_are_reproducible_and_use_only_offered_ops():
    """AD-BATCHED, AD-REPRODUCE, AD-CAPABILITIES: example k depends only on the seed
    and k; an implementation without block/unblock/peer_down is sent none."""
    first = [next(examples(5, EVERY_OP, 40)) for _ in range(2)]
    assert first[0] == first[1]
    some = examples(5, EVERY_OP, 40)
    drawn = [next(some) for _ in range(50)]
    assert len({tuple(ops) for _, ops in drawn}) > 40  # not the same example again
    kinds = {op.kind for _, ops in drawn for op in ops}
    assert kinds == EVERY_OP
    narrow = frozenset({"send", "ack", "bump", "state"})
    limited = examples(5, narrow, 40)
    assert {op.kind for _ in range(50) for op in next(limited)[1]} <= narrow


def test_delivered_grants_are_the_models_own():
    """AD-BATCHED: a deliver step is a bump of a grant the model emitted before and that
    was not delivered yet (the op machine's ``consumes(grants)``)."""
    rng = random.Random(11)
    delivered = 0
    for _ in range(30):
        spec, ops = generate_example(rng, EVERY_OP, 60)
        model = ProcessModel(spec)
        pending: list[tuple[str, str, int]] = []
        for op in ops:
            grant = (op.peer, op.proc, op.amount)
            if op.kind == "bump" and grant in pending:
                pending.remove(grant)
                delivered += 1
            _, emitted = model.apply(op)
            pending += [(op.proc, to, amount) for to, amount in emitted]
    assert delivered > 20


@pytest.mark.parametrize("adapter", ["mutant:grants-not-deferred", "mutant:blockers-as-set"])
def test_written_at_once_the_first_divergence_is_the_one_of_lockstep(adapter):
    """AD-BATCHED: every example of a chunk written before any answer is read gives the
    same first diverging op as the example run on its own, and the session stays in
    step after a diverging example."""
    generated = examples(3, EVERY_OP, 30)
    chunk = [next(generated) for _ in range(40)]
    with adapter_factory(adapter)() as impl:
        together = [(d, run.trace()) for d, run in check_examples(impl, chunk)]
        alone = [check_trace(impl, spec, ops) for spec, ops in chunk]
    assert sum(d is not None for d, _ in together) >= 3  # the mutant is caught, often
    for (d1, t1), (d2, t2) in zip(together, alone, strict=True):
        assert (d1 is None) == (d2 is None)
        if d1 is not None and d2 is not None:
            assert (d1.index, d1.op, d1.diffs) == (d2.index, d2.op, d2.diffs)
            assert t1 == t2


def test_a_divergence_is_shrunk_to_a_one_minimal_trace():
    """AD-BATCHED: the phase stops at the first example that diverges, names it and
    its diverging op, and shrinks it: the trace diverges at its last op, and without
    any one op it no longer diverges; the spec overrides it keeps and its reset spec are
    needed (none simpler diverges)."""
    with adapter_factory("mutant:flush-oldest-first")() as impl:
        outcome = run_batched(impl, 1, 500, 100, lambda d, spec, ops: None, {})
        assert outcome.divergence is not None and outcome.trace is not None
        assert outcome.found_in is not None and outcome.examples == outcome.found_in[0]
        ops = list(outcome.trace.ops)
        spec = outcome.trace.spec
        assert outcome.divergence.index == len(ops) - 1
        again, _ = check_trace(impl, spec, ops)
        assert again is not None and again.index == len(ops) - 1
        for k in range(len(ops)):
            assert check_trace(impl, spec, ops[:k] + ops[k + 1 :])[0] is None
            if ops[k].spec is not None:  # an override the divergence needs
                plain = [*ops[:k], replace(ops[k], spec=None), *ops[k + 1 :]]
                found, _ = check_trace(impl, spec, plain)
                assert found is None or found.index < len(ops) - 1
        for simpler in SPECS[: SPECS.index(spec)]:  # no simpler reset spec diverges
            found, _ = check_trace(impl, simpler, ops)
            assert found is None or found.index < len(ops) - 1


def test_known_divergences_are_counted_and_skipped():
    """AD-BATCHED with AD-EXPECTATIONS-CONFORM: a divergence the expectations cover ends
    its example, is counted, and the phase goes on."""
    hits: dict[str, int] = {}
    with adapter_factory("mutant:blockers-as-set")() as impl:
        outcome = run_batched(impl, 2, 60, 50, lambda d, spec, ops: "known", hits)
    assert outcome.divergence is None and outcome.failure is None
    assert outcome.examples == 60
    assert hits["known"] > 0


def test_conformant_implementations_pass():
    """AD-BATCHED, AD-COMPARE: the template and the model as a subprocess agree on every
    example (no false divergence)."""
    for name in ("python-template", "reference-process", "reference"):
        with adapter_factory(name)() as impl:
            outcome = run_batched(impl, 4, 120, 80, lambda d, spec, ops: None, {})
        assert outcome.divergence is None and outcome.failure is None, name
        assert outcome.examples == 120 and outcome.ops > 120


def test_an_adapter_crash_ends_the_phase_with_the_running_example():
    """AD-BATCHED, AD-FAILURE: a crash while a chunk's answers are read is reported with
    the trace of the example whose answers were being read."""
    with command_factory(f"{FAULTY} crash 300")() as impl:
        outcome = run_batched(impl, 1, 200, 100, lambda d, spec, ops: None, {})
    assert isinstance(outcome.failure, AdapterFailure)
    assert outcome.trace is not None and outcome.trace.steps
    assert outcome.divergence is None


def test_the_next_chunk_is_drawn_while_answering_and_written_after(monkeypatch):
    """AD-BATCHED-OVERLAP: after a chunk is written, the next one is drawn before the
    written one's answers are read, and written only after all of them are; the phase
    reports the same divergence, example and shrunk trace whatever the chunks."""
    events: list[tuple[str, int]] = []
    drawn = 0
    real_answered = batched.answered_examples
    real_submit, real_collect = batched.submit_examples, batched.collect_examples

    def counting(*args):
        nonlocal drawn
        for example in real_answered(*args):
            drawn += 1
            yield example

    def submit(adapter, pairs):
        events.append(("write", drawn))
        return real_submit(adapter, pairs)

    def collect(adapter, pairs, written, answers=None):
        events.append(("read", drawn))
        yield from real_collect(adapter, pairs, written, answers)
        events.append(("all read", drawn))

    monkeypatch.setattr(batched, "CHUNK_OPS", 150)
    monkeypatch.setattr(batched, "answered_examples", counting)
    monkeypatch.setattr(batched, "submit_examples", submit)
    monkeypatch.setattr(batched, "collect_examples", collect)

    def after_ten_known(hits: dict[str, int]):  # the first ten divergences are known
        return lambda d, spec, ops: "early" if hits.get("early", 0) < 10 else None

    with adapter_factory("mutant:flush-oldest-first")() as impl:
        hits: dict[str, int] = {}
        ahead = run_batched(impl, 1, 500, 100, after_ten_known(hits), hits)
    kinds = [kind for kind, _ in events]
    assert kinds.count("write") >= 3  # several chunks before the divergence
    assert kinds == ["write", "read", "all read"] * (len(kinds) // 3)
    for (_, at_write), (_, at_read) in zip(events[0::3], events[1::3], strict=True):
        assert at_read > at_write  # the next chunk drawn while the implementation answers
    # one example a chunk finds and shrinks the same divergence in the same example
    monkeypatch.setattr(batched, "CHUNK_OPS", 1)
    with adapter_factory("mutant:flush-oldest-first")() as impl:
        hits = {}
        alone = run_batched(impl, 1, 500, 100, after_ten_known(hits), hits)
    assert ahead.divergence is not None and ahead.examples > 10
    assert (ahead.found_in, ahead.trace, ahead.examples) == (
        alone.found_in,
        alone.trace,
        alone.examples,
    )
