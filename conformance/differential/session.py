"""Differential checking: every op goes to the model and to the adapter, and the two
answers are compared after every op (AD-COMPARE).

:class:`DifferentialRun` is one run from a ``reset``: it keeps the history of ops with
the model's answers (the trace to write if the run diverges) and returns the first
:class:`Divergence`. Ops are sent to the adapter in batches when the caller gives
several at once (AD-PIPELINE); comparing stays per op.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from creditflow.conformance.differential.adapter import Adapter
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.protocol import (
    FieldDiff,
    Grant,
    Observation,
    Op,
    canonical_body,
    compare,
    view_of,
)
from creditflow.conformance.differential.subprocess import SubprocessAdapter
from creditflow.model.credit import flow as cf
from creditflow.model.credit.spec import CreditSpec

#: a model's answer to one op: the acting process's new state and the grants it sent
Answer = tuple[cf.ProcessCredit, tuple[Grant, ...]]


@dataclass(frozen=True)
class Divergence:
    """The first op at which the implementation's answer differs from the model's."""

    index: int  #: 0-based position of the op in the run
    op: Op
    model: Observation
    implementation: Observation
    diffs: tuple[FieldDiff, ...]


@dataclass(frozen=True)
class ProcessTrace:
    """A per-process trace: the default spec of its ``reset`` and every op with the
    model's answer (TRACE-PROCESS-VARS)."""

    spec: CreditSpec
    steps: tuple[tuple[Op, Observation], ...]

    @property
    def ops(self) -> tuple[Op, ...]:
        return tuple(op for op, _ in self.steps)


class DifferentialRun:
    """One run: ``reset`` both sides with ``spec``, then :meth:`check` ops."""

    def __init__(self, adapter: Adapter, spec: CreditSpec, reset: bool = True) -> None:
        """``reset``: reset the adapter now (else the caller has, AD-BATCHED)."""
        self.adapter = adapter
        self.spec = spec
        self.model = ProcessModel(spec)
        self._history: list[tuple[Op, cf.ProcessCredit, tuple[Grant, ...]]] = []
        self._raw = isinstance(adapter, SubprocessAdapter)
        if reset:
            adapter.reset(spec)

    def __len__(self) -> int:
        return len(self._history)

    def check(self, ops: Sequence[Op]) -> Divergence | None:
        """Run ``ops`` (one batch) on both sides; the first divergence, or ``None``.
        Raises :class:`~creditflow.conformance.differential.adapter.AdapterFailure`."""
        if not ops:
            return None
        if self._raw:
            return self._check_raw(ops)
        actual = self.adapter.run(ops)
        for op, got in zip(ops, actual, strict=True):
            ps, emitted = self.model.apply(op)
            self._history.append((op, ps, emitted))
            expected = Observation(view_of(ps), emitted)
            diffs = compare(expected, got)
            if diffs:
                return Divergence(len(self._history) - 1, op, expected, got, tuple(diffs))
        return None

    def _check_raw(self, ops: Sequence[Op]) -> Divergence | None:
        adapter = self.adapter
        assert isinstance(adapter, SubprocessAdapter)
        first, raws = adapter.run_raw(ops)
        return self._compare_raw(ops, first, raws)

    def _compare_raw(
        self,
        ops: Sequence[Op],
        first: int,
        raws: list[bytes],
        answers: Sequence[Answer] | None = None,
    ) -> Divergence | None:
        """The subprocess path: a response byte-identical to the model's canonical
        response needs no parsing; any other is parsed and compared field by field.
        ``answers``: the model's answers to ``ops`` from this run's ``reset``, already
        computed (AD-BATCHED); the run's model is then not advanced."""
        adapter = self.adapter
        assert isinstance(adapter, SubprocessAdapter)
        apply = self.model.apply
        history = self._history
        for i, op in enumerate(ops):
            ps, emitted = apply(op) if answers is None else answers[i]
            history.append((op, ps, emitted))
            raw = raws[i]
            if raw == f'{{"id":{first + i},"ok":true,{canonical_body(ps, emitted)}}}'.encode():
                continue
            got = adapter.observation(raw, op, first + i)
            expected = Observation(view_of(ps), emitted)
            diffs = compare(expected, got)
            if diffs:
                return Divergence(len(history) - 1, op, expected, got, tuple(diffs))
        return None

    def check_stream(self, ops: Sequence[Op], batch: int = 1000) -> Divergence | None:
        """Like :meth:`check` over many batches, with the next batch already sent while
        this one is compared, so the implementation and the model work at the same time
        (AD-PIPELINE). Responses still in flight after a divergence are read and dropped,
        so the session stays in step."""
        adapter = self.adapter
        if not isinstance(adapter, SubprocessAdapter):
            for start in range(0, len(ops), batch):
                found = self.check(ops[start : start + batch])
                if found is not None:
                    return found
            return None
        batches = [ops[i : i + batch] for i in range(0, len(ops), batch)]
        if not batches:
            return None
        firsts = [adapter.submit_ops(batches[0])]
        for k, current in enumerate(batches):
            if k + 1 < len(batches):
                firsts.append(adapter.submit_ops(batches[k + 1]))
            raws = adapter.collect(len(current))
            found = self._compare_raw(current, firsts[k], raws)
            if found is not None:
                if k + 1 < len(batches):
                    adapter.collect(len(batches[k + 1]))
                return found
        return None

    def last_emitted(self) -> tuple[Grant, ...]:
        """The grants the model says the last op sent."""
        return self._history[-1][2] if self._history else ()

    def trace(self) -> ProcessTrace:
        """Every op run so far with the model's answers."""
        return ProcessTrace(
            self.spec,
            tuple((op, Observation(view_of(ps), emitted)) for op, ps, emitted in self._history),
        )


def check_trace(
    adapter: Adapter, spec: CreditSpec, ops: Sequence[Op], batch: int = 1000
) -> tuple[Divergence | None, ProcessTrace]:
    """Run ``ops`` from a fresh ``reset``, ``batch`` ops per write; the first divergence
    (or ``None``) and the trace up to it."""
    run = DifferentialRun(adapter, spec)
    return run.check_stream(ops, batch), run.trace()


def check_examples(
    adapter: Adapter, examples: Sequence[tuple[CreditSpec, Sequence[Op]]]
) -> Iterator[tuple[Divergence | None, DifferentialRun]]:
    """AD-BATCHED: each example (a reset spec and ops) run from its own ``reset``, as
    :func:`check_trace` does, but every example's requests written at once (AD-PIPELINE)
    and the answers compared after; yields each example's first divergence (or
    ``None``) and its run (``run.trace()``: the ops up to the divergence), in order. An
    adapter failure is raised while the example it happened in is being compared (the
    number of results yielded so far tells which)."""
    return collect_examples(adapter, examples, submit_examples(adapter, examples))


def submit_examples(
    adapter: Adapter, examples: Sequence[tuple[CreditSpec, Sequence[Op]]]
) -> list[tuple[int, int]]:
    """AD-BATCHED: write every example's ``reset`` and ops (AD-PIPELINE), reading
    nothing; the ids of each example's ``reset`` and first op, for
    :func:`collect_examples` (none for an adapter that is not a subprocess: its examples
    run when collected)."""
    if not isinstance(adapter, SubprocessAdapter):
        return []
    return adapter.submit_examples(examples)


def collect_examples(
    adapter: Adapter,
    examples: Sequence[tuple[CreditSpec, Sequence[Op]]],
    written: Sequence[tuple[int, int]],
    answers: Sequence[Sequence[Answer]] | None = None,
) -> Iterator[tuple[Divergence | None, DifferentialRun]]:
    """The second half of :func:`check_examples`: read and compare the answers to the
    ``examples`` :func:`submit_examples` wrote (``written``). ``answers``: the model's
    answers to each example's ops, if the caller computed them already (AD-BATCHED)."""
    if not isinstance(adapter, SubprocessAdapter):
        for spec, ops in examples:
            run = DifferentialRun(adapter, spec)
            yield run.check_stream(ops), run
        return
    for k, ((spec, ops), (reset_id, first)) in enumerate(zip(examples, written, strict=True)):
        (raw,) = adapter.collect(1)
        adapter.reset_answered(raw, reset_id, spec)
        raws = adapter.collect(len(ops))
        run = DifferentialRun(adapter, spec, reset=False)
        known = None if answers is None else answers[k]
        yield (run._compare_raw(ops, first, raws, known) if ops else None), run


def model_trace(spec: CreditSpec, ops: Sequence[Op]) -> ProcessTrace:
    """``ops`` with the model's answers, from a fresh ``reset`` to ``spec``."""
    model = ProcessModel(spec)
    return ProcessTrace(spec, tuple((op, model.observe(op)) for op in ops))
