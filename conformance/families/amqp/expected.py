"""Known divergences of an AMQP implementation, one mechanism for ``conform``,
``replay`` and the pytest plugin (AD-AMQ-EXPECTATIONS-MATCH, AD-AMQ-EXPECTATIONS-MASK).

The expectations file is the NET family's (AD-EXPECTATIONS: ``known_divergences``
naming traces, here AMQP run traces, TRACE-AMQP-RUN). :func:`resolve_amqp` replays each
listed trace against the adapter and keeps its failure's :class:`Signature`: the op,
the verdict, how each compared field differs (higher / lower) and the monitor rules
broken. A failure is a known one when its signature is exactly a listed one's, directly
or in the failing op's minimal context (:func:`known_failure`); :func:`judge_amqp` masks
it (the op taken out, the run again from ``reset``) so that a second bug still fails.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from creditflow.conformance.differential.expected import find_witness
from creditflow.conformance.differential.op_search import executed_prefix
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.conformance.differential.traces import SUFFIX
from creditflow.conformance.families.amqp.conform import (
    AmqpOp,
    AmqpRun,
    model_allows,
    model_policy,
    run_ops,
)
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.conformance.families.amqp.run_traces import LoadedAmqpTrace, load_amqp_trace
from creditflow.conformance.inputs.expectations import (
    Expectations,
    ExpectationsError,
    Signature,
    match,
)
from creditflow.conformance.inputs.itf import TraceFormatError


def amqp_corpus_dir() -> Path:
    """The shipped AMQP run traces (package data): witnesses of the shipped
    expectations (AD-AMQ-EXPECTATIONS-MATCH)."""
    return Path(str(resources.files("creditflow.conformance") / "corpus" / "amqp"))


def run_signature(run: AmqpRun) -> Signature:
    """AD-AMQ-EXPECTATIONS-MATCH: a failed run's signature: the failing op's name, the
    verdict, each compared field that differs (``higher``/``lower`` than the model's,
    ``differs`` when one side has none) and each monitor rule broken."""
    assert run.index is not None, "a passing run has no signature"
    out = {f"verdict: {run.verdict}"}
    for d in run.diffs:
        if d.field.startswith("property "):
            continue  # the rule is listed with the violations
        if isinstance(d.model, int) and isinstance(d.implementation, int):
            how = "higher" if d.implementation > d.model else "lower"
        else:
            how = "differs"
        out.add(f"{d.field}: {how}")
    out |= {f"property: {v.rule}" for v in run.violations}
    return Signature(run.ops[run.index].op, frozenset(out))


@dataclass(frozen=True)
class KnownAmqpFailure:
    """A failure listed in the expectations: the trace that shows it, why, its signature."""

    name: str
    reason: str
    signature: Signature


@dataclass(frozen=True)
class ResolvedAmqpExpectations:
    """An expectations file with each listed trace replayed (AD-AMQ-EXPECTATIONS-MATCH)."""

    known: tuple[KnownAmqpFailure, ...] = ()
    unexpected_passes: tuple[str, ...] = ()  #: listed traces that no longer fail
    #: listed traces the implementation cannot run, and why (AD-AMQ-REPLAY)
    not_run: dict[str, str] = field(default_factory=dict)
    source: Expectations | None = None

    def reason(self, name: str) -> str | None:
        return self.source.reason(name) if self.source is not None else None


def cannot_run(adapter: AmqpAdapter, trace: LoadedAmqpTrace) -> str | None:
    """AD-AMQ-REPLAY: why the adapter cannot run ``trace`` as recorded (sizes it does not
    offer; an op its declared policy does not allow there, e.g. a hand grant under a
    credit window), else ``None``. Raises ``AdapterFailure``, ``PolicyError``."""
    t = trace.trace
    offered = set(dict(adapter.info.get("settings") or {}))
    missing = sorted(set(t.settings) - offered)
    if missing:
        return f"needs the sizes {', '.join(missing)}, which the implementation does not offer"
    reply = adapter.step({"op": "reset", "settings": dict(t.settings)})
    declared = reply.extra.get("policy") or adapter.info["policy"]
    if not model_allows(model_policy(declared, t.settings), t.ops):
        return "has ops the model does not allow under the implementation's declared policy"
    return None


def resolve_amqp(
    adapter: AmqpAdapter,
    expectations: Expectations,
    folders: Iterable[Path] = (),
    loaded: Mapping[str, LoadedAmqpTrace] | None = None,
) -> ResolvedAmqpExpectations:
    """AD-AMQ-EXPECTATIONS-MATCH: replay every listed trace (``loaded`` first, else
    looked up as AD-EXPECTATIONS-CONFORM says, then in the shipped AMQP corpus): one
    that fails gives its signature, one that passes is an unexpected pass, one the
    implementation cannot run is not run. Raises :class:`ExpectationsError` for a trace
    that cannot be found or read, and ``AdapterFailure``."""
    known: list[KnownAmqpFailure] = []
    passes: list[str] = []
    not_run: dict[str, str] = {}
    for name, reason in expectations.known.items():
        trace = (loaded or {}).get(name)
        if trace is None:
            path = find_witness(name, expectations, [*folders, amqp_corpus_dir()])
            if path is None:
                raise ExpectationsError(
                    f"{expectations.path}: no trace {name}{SUFFIX} in the expectations' "
                    f"folder, the traces given or the shipped corpus"
                )
            try:
                trace = load_amqp_trace(path)
            except TraceFormatError as exc:
                raise ExpectationsError(str(exc)) from None
        why = cannot_run(adapter, trace)
        if why is not None:
            not_run[name] = why
            continue
        run = run_ops(adapter, trace.trace.settings, trace.trace.ops)
        if run.failed:
            known.append(KnownAmqpFailure(name, reason, run_signature(run)))
        else:
            passes.append(name)
    return ResolvedAmqpExpectations(tuple(known), tuple(passes), not_run, expectations)


def minimal_context(
    adapter: AmqpAdapter, settings: Mapping[str, int], ops: Sequence[AmqpOp]
) -> AmqpRun | None:
    """AD-AMQ-EXPECTATIONS-MATCH: the failure of the last op of ``ops`` in the smallest
    context in which that op still fails (delta debugging of the ops before it), or
    ``None`` if it no longer fails there."""
    *before, last = ops

    def fails_at_last(candidate: list[AmqpOp]) -> int | None:
        whole = [*candidate, last]
        run = run_ops(adapter, settings, whole)
        return len(candidate) if run.failed and executed_prefix(whole, run) == len(whole) else None

    if fails_at_last([]) is not None:
        context: list[AmqpOp] = []
    else:
        try:
            context = shrink_sequence(before, fails_at_last)
        except ValueError:
            return None
    run = run_ops(adapter, settings, [*context, last])
    return run if run.failed else None


def known_failure(
    known: Iterable[KnownAmqpFailure],
    adapter: AmqpAdapter,
    settings: Mapping[str, int],
    ops: Sequence[AmqpOp],
    run: AmqpRun,
) -> str | None:
    """AD-AMQ-EXPECTATIONS-MATCH: the known failure ``run`` (of ``ops``) is an instance
    of: the one whose signature is exactly its own, or exactly that of the failing op in
    its minimal context; else ``None``."""
    signatures = {k.name: k.signature for k in known}
    if not signatures:
        return None
    found = match(run_signature(run), signatures)
    if found is not None:
        return found
    cut = executed_prefix(ops, run)
    if cut is None:
        return None
    minimal = minimal_context(adapter, settings, ops[:cut])
    return None if minimal is None else match(run_signature(minimal), signatures)


@dataclass(frozen=True)
class AmqpJudgement:
    """AD-AMQ-EXPECTATIONS-MASK: a run with its known failures masked."""

    run: AmqpRun  #: the last run: failing in no known way, or passing
    met: tuple[str, ...] = ()  #: the known failures met, in order


def judge_amqp(
    adapter: AmqpAdapter,
    settings: Mapping[str, int],
    ops: Sequence[AmqpOp],
    known: Iterable[KnownAmqpFailure],
    first: AmqpRun | None = None,
) -> AmqpJudgement:
    """AD-AMQ-EXPECTATIONS-MASK: run ``ops`` (``first`` is their run if already made);
    at a failure that is a known one, take the failing op out and run again from
    ``reset``, until the run passes or fails in a way no expectation lists. The last
    run's ops are a subsequence of ``ops``. Raises ``AdapterFailure``."""
    known = tuple(known)
    current = list(ops)
    met: list[str] = []
    run = first if first is not None else run_ops(adapter, settings, current)
    while run.failed:
        name = known_failure(known, adapter, settings, current, run)
        cut = executed_prefix(current, run)
        if name is None or cut is None:
            break
        met.append(name)
        del current[cut - 1]
        run = run_ops(adapter, settings, current)
    return AmqpJudgement(run, tuple(met))


class Masker:
    """AD-AMQ-EXPECTATIONS-MASK for ``conform`` (``AmqpConformOptions.mask``): every
    failed run judged, the known failures met counted."""

    def __init__(self, known: Iterable[KnownAmqpFailure]) -> None:
        self.known = tuple(known)
        self.hits: Counter[str] = Counter()

    def __call__(
        self,
        adapter: AmqpAdapter,
        settings: Mapping[str, int],
        ops: Sequence[AmqpOp],
        run: AmqpRun,
    ) -> AmqpRun:
        judged = judge_amqp(adapter, settings, ops, self.known, run)
        self.hits.update(judged.met)
        return judged.run
