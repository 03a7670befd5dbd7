"""Known divergences, one mechanism for ``conform``, ``replay`` and the pytest plugin
(AD-EXPECTATIONS-MATCH, AD-EXPECTATIONS-MASK).

An expectations file names traces; :func:`resolve` replays each one (its *witness*)
and keeps its divergence's :class:`~creditflow.conformance.inputs.expectations.Signature`.
:func:`known_divergence` says which known divergence a divergence is an instance of
(the signature matched exactly, directly or in the op's minimal context), and
:func:`judge` runs an op sequence with every known divergence masked: the op at which
one occurs is taken out and the rest run again, so that a second, different divergence
anywhere in the sequence still fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from creditflow.conformance.differential.adapter import Adapter
from creditflow.conformance.differential.corpus import corpus_dir
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import Divergence, ProcessTrace, check_trace
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.conformance.differential.traces import SUFFIX, LoadedTrace, load_trace
from creditflow.conformance.inputs.expectations import (
    Expectations,
    ExpectationsError,
    Signature,
    match,
    signature,
)
from creditflow.conformance.inputs.itf import TraceFormatError
from creditflow.model.credit.spec import CreditSpec


@dataclass(frozen=True)
class KnownDivergence:
    """A divergence listed in the expectations (AD-EXPECTATIONS-MATCH): the trace that
    shows it, why, and its signature."""

    name: str
    reason: str
    signature: Signature

    @property
    def op(self) -> str:
        return self.signature.op

    @property
    def fields(self) -> frozenset[str]:
        return self.signature.fields

    def covers(self, divergence: Divergence) -> bool:
        """AD-EXPECTATIONS-MATCH: ``divergence`` has exactly this signature."""
        return divergence_signature(divergence) == self.signature


@dataclass(frozen=True)
class ResolvedExpectations:
    """An expectations file with each listed trace replayed (AD-EXPECTATIONS-MATCH)."""

    known: tuple[KnownDivergence, ...] = ()
    #: listed traces that no longer diverge (exit 1)
    unexpected_passes: tuple[str, ...] = ()
    #: AD-CAPABILITIES: listed traces not replayed, with the ops they need
    not_run: dict[str, tuple[str, ...]] = field(default_factory=dict)
    source: Expectations | None = None

    def reason(self, name: str) -> str | None:
        return self.source.reason(name) if self.source is not None else None


def divergence_signature(divergence: Divergence) -> Signature:
    """AD-EXPECTATIONS-MATCH: the signature of a divergence."""
    return signature(
        divergence.op.kind,
        divergence.op.peer,
        [(d.field, d.model, d.implementation) for d in divergence.diffs],
    )


def find_witness(
    name: str, expectations: Expectations, folders: Iterable[Path] = ()
) -> Path | None:
    """AD-EXPECTATIONS-CONFORM: the listed trace ``name``, looked up in the expectations
    file's folder, then ``folders`` in order, then the shipped corpus; the name is
    compared with file names, never used as a pattern (AD-EXPECTATIONS-NAME)."""
    search: list[Path] = []
    if expectations.path is not None:
        search.append(expectations.path.parent)
    search += [*folders, corpus_dir()]
    file_name = f"{name}{SUFFIX}"
    for folder in search:
        if folder.is_file():
            if folder.name == file_name:
                return folder
            continue
        direct = folder / file_name
        if direct.is_file():
            return direct
        for candidate in sorted(folder.rglob(f"*{SUFFIX}")):
            if candidate.name == file_name and candidate.is_file():
                return candidate
    return None


def resolve(
    adapter: Adapter,
    expectations: Expectations,
    folders: Iterable[Path] = (),
    loaded: Mapping[str, LoadedTrace] | None = None,
) -> ResolvedExpectations:
    """AD-EXPECTATIONS-MATCH: replay every listed trace (``loaded`` first, else found by
    :func:`find_witness`): one that diverges gives its known divergence's signature, one
    that passes is an unexpected pass, one that needs an op the implementation does not
    offer is not sent (AD-CAPABILITIES). Raises :class:`ExpectationsError` for a trace
    that cannot be found or read, and ``AdapterFailure``."""
    folders = tuple(folders)
    known: list[KnownDivergence] = []
    passes: list[str] = []
    not_run: dict[str, tuple[str, ...]] = {}
    for name, reason in expectations.known.items():
        trace = (loaded or {}).get(name)
        if trace is None:
            path = find_witness(name, expectations, folders)
            if path is None:
                raise ExpectationsError(
                    f"{expectations.path}: no trace {name}{SUFFIX} in the expectations' "
                    f"folder, the traces given or the shipped corpus"
                )
            try:
                trace = load_trace(path)
            except TraceFormatError as exc:
                raise ExpectationsError(str(exc)) from None
        ops = trace.trace.ops
        missing = tuple(sorted({op.kind for op in ops} - set(adapter.supported_ops)))
        if missing:
            not_run[name] = missing
            continue
        divergence, _ = check_trace(adapter, trace.trace.spec, ops)
        if divergence is None:
            passes.append(name)
        else:
            known.append(KnownDivergence(name, reason, divergence_signature(divergence)))
    return ResolvedExpectations(tuple(known), tuple(passes), not_run, expectations)


def minimal_context(adapter: Adapter, spec: CreditSpec, ops: list[Op]) -> Divergence | None:
    """AD-EXPECTATIONS-CONFORM: the divergence of the last op of ``ops`` in the smallest
    context in which that op still diverges (delta debugging of the ops before it, the
    op itself kept); ``None`` if it no longer diverges there (a nondeterministic
    implementation)."""
    *before, last = ops

    def diverges_at_last(candidate: list[Op]) -> int | None:
        divergence, _ = check_trace(adapter, spec, [*candidate, last])
        return len(candidate) if divergence and divergence.index == len(candidate) else None

    if diverges_at_last([]) is not None:
        context: list[Op] = []  # ddmin never tries the empty sequence
    else:
        try:
            context = shrink_sequence(before, diverges_at_last)
        except ValueError:
            return None
    divergence, _ = check_trace(adapter, spec, [*context, last])
    return divergence


def known_divergence(
    known: Iterable[KnownDivergence],
    adapter: Adapter,
    spec: CreditSpec,
    ops: list[Op],
    divergence: Divergence,
) -> str | None:
    """AD-EXPECTATIONS-MATCH: the known divergence ``divergence`` (at op
    ``divergence.index`` of ``ops``) is an instance of: the one whose signature is
    exactly its own, or exactly that of the same op's divergence in its minimal context
    (one bug met in a larger state: a late grant held back rather than sent, an
    off-by-one counter past its first wrap), else ``None``."""
    signatures = {k.name: k.signature for k in known}
    if not signatures:
        return None
    found = match(divergence_signature(divergence), signatures)
    if found is not None:
        return found
    minimal = minimal_context(adapter, spec, ops[: divergence.index + 1])
    if minimal is None:
        return None
    return match(divergence_signature(minimal), signatures)


@dataclass(frozen=True)
class Judgement:
    """AD-EXPECTATIONS-MASK: an op sequence run with its known divergences masked."""

    divergence: Divergence | None  #: the first divergence that is no known one
    executed: ProcessTrace  #: the ops run last (the masked ones taken out), up to it
    met: tuple[str, ...] = ()  #: the known divergences met, in order
    #: how many ops of the sequence given it takes to reach ``divergence`` (for
    #: delta debugging: the ops after it never matter)
    cut: int | None = None

    @property
    def ops(self) -> tuple[Op, ...]:
        return self.executed.ops


def judge(
    adapter: Adapter, spec: CreditSpec, ops: Iterable[Op], known: Iterable[KnownDivergence]
) -> Judgement:
    """AD-EXPECTATIONS-MASK: run ``ops``; at a divergence that is a known one, take that
    op out and run the sequence again from a fresh ``reset``, until it runs through or
    diverges in a way no expectation lists. Raises ``AdapterFailure``."""
    known = tuple(known)
    current = list(ops)
    positions = list(range(len(current)))  #: where each op of ``current`` was given
    met: list[str] = []
    while True:
        divergence, executed = check_trace(adapter, spec, current)
        if divergence is None:
            return Judgement(None, executed, tuple(met))
        name = known_divergence(known, adapter, spec, current, divergence)
        if name is None:
            return Judgement(divergence, executed, tuple(met), positions[divergence.index] + 1)
        met.append(name)
        del current[divergence.index]
        del positions[divergence.index]
