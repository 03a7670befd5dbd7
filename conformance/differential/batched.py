"""``conform``'s ``batched-ops`` phase (AD-BATCHED): whole examples of random protocol
ops, generated against the model alone, each sent to the implementation in one write
(AD-PIPELINE) and compared op by op after.

An example is drawn as :class:`~creditflow.conformance.differential.machines.ProcessOpsMachine`
draws its steps — the same credit specs, the same (process, peer) pairs with their
focus on ``A``, the same rules, grants the model sent delivered in any order — but with
a seeded :class:`random.Random` instead of Hypothesis, so the driver spends a few
microseconds per op instead of a Hypothesis step. The generated ops depend only on the
model's answers, never on the implementation's, so nothing is lost by comparing after:
the first op whose answer differs is found exactly, and the example is then shrunk by
delta debugging (every op sequence is a valid input) to a 1-minimal diverging trace,
then simplified: spec overrides it does not need dropped, the simplest reset spec that
still diverges.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from creditflow.conformance.differential.adapter import Adapter, AdapterFailure
from creditflow.conformance.differential.machines import PROCESSES, PSEUDO_PEERS, SPECS
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import (
    Answer,
    Divergence,
    ProcessTrace,
    check_trace,
    collect_examples,
    model_trace,
    submit_examples,
)
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.model.credit.spec import CreditSpec

#: AD-BATCHED: the credit specs of an example's reset, weighted as the op machine's
SPEC_CHOICES = SPECS[:1] * 3 + SPECS[1:2] * 2 + SPECS[2:]
#: AD-BATCHED: the amounts of an arbitrary bump (CF-BUMP-UNKNOWN included)
BUMP_AMOUNTS = range(-2, 7)
#: AD-BATCHED: examples are written to the implementation in chunks of this many ops
CHUNK_OPS = 2_000


def pair_choices(peers: tuple[str, ...]) -> list[tuple[str, str]]:
    """(process, peer) pairs of distinct names, three in four acting in ``A``, as the op
    machine draws them (most faults need several ops in one process)."""
    focus = [("A", q) for q in peers if q != "A"]
    others = [(p, q) for p in PROCESSES[1:] for q in peers if p != q]
    return focus * 3 * max(1, len(others) // len(focus)) + others


PAIRS = pair_choices(PROCESSES)
ANY_PAIRS = pair_choices(PROCESSES + PSEUDO_PEERS)


#: AD-BATCHED: an example with the model's answer to each of its ops
AnsweredExample = tuple[CreditSpec, list[Op], list[Answer]]
RULES = ("send", "ack", "deliver", "bump", "block", "unblock", "peer_down", "state")


def generate_example(
    rng: random.Random, offered: frozenset[str], steps: int
) -> tuple[CreditSpec, list[Op]]:
    """AD-BATCHED: one example, a reset spec and 1 to ``steps`` ops, drawn with ``rng``
    from the ops the implementation offers (AD-CAPABILITIES). A ``deliver`` step
    sends a grant the model emitted earlier and not yet delivered, as a bump."""
    spec, ops, _ = generate_answered(rng, offered, steps)
    return spec, ops


def generate_answered(rng: random.Random, offered: frozenset[str], steps: int) -> AnsweredExample:
    """:func:`generate_example` with the model's answer to each op, computed while
    drawing (the draws need them), so comparing the implementation's answers does not
    run the model a second time."""
    spec = rng.choice(SPEC_CHOICES)
    apply = ProcessModel(spec).apply
    grants: list[tuple[str, str, int]] = []
    rules = [r for r in RULES if (r if r != "deliver" else "bump") in offered or r == "state"]
    no_deliver = [r for r in rules if r != "deliver"]  # drawn from while no grant is pending
    ops: list[Op] = []
    answers: list[Answer] = []
    for _ in range(rng.randint(1, steps)):
        rule = rng.choice(rules if grants else no_deliver)
        if rule in ("send", "ack"):
            proc, peer = rng.choice(PAIRS)
            override = rng.choice(SPECS) if rng.random() < 0.5 else None
            op = Op(rule, proc, peer, spec=override)
        elif rule == "deliver":
            sender, recipient, amount = grants.pop(rng.randrange(len(grants)))
            op = Op("bump", recipient, sender, amount=amount)
        elif rule == "bump":
            proc, peer = rng.choice(ANY_PAIRS)
            op = Op("bump", proc, peer, amount=rng.choice(BUMP_AMOUNTS))
        elif rule == "state":
            op = Op("state", rng.choice(PROCESSES))
        else:
            op = Op(rule, *rng.choice(ANY_PAIRS))
        answer = apply(op)
        if answer[1]:
            grants += [(op.proc, to, amount) for to, amount in answer[1]]
        ops.append(op)
        answers.append(answer)
    return spec, ops, answers


def examples(
    run_seed: int, offered: frozenset[str], steps: int
) -> Iterator[tuple[CreditSpec, list[Op]]]:
    """AD-BATCHED: the examples of a run, endless; example ``k`` depends only on the
    run's seed and ``k`` (AD-REPRODUCE)."""
    for spec, ops, _ in answered_examples(run_seed, offered, steps):
        yield spec, ops


def answered_examples(
    run_seed: int, offered: frozenset[str], steps: int
) -> Iterator[AnsweredExample]:
    """:func:`examples` with the model's answers (:func:`generate_answered`)."""
    k = 0
    while True:
        yield generate_answered(random.Random(f"{run_seed}:{k}"), offered, steps)
        k += 1


@dataclass
class BatchedOutcome:
    """How the phase ended: ``divergence`` with its shrunk ``trace``, or ``failure``
    with the trace of the example that was running, or neither (conformant)."""

    examples: int = 0
    ops: int = 0
    divergence: Divergence | None = None
    trace: ProcessTrace | None = None
    failure: AdapterFailure | None = None
    #: the example (1-based) and its length before shrinking
    found_in: tuple[int, int] | None = None


def run_batched(
    adapter: Adapter,
    run_seed: int,
    n_examples: int,
    steps: int,
    known: Callable[[Divergence, CreditSpec, list[Op]], str | None],
    hits: dict[str, int],
) -> BatchedOutcome:
    """AD-BATCHED: run ``n_examples`` examples, written in chunks of about
    :data:`CHUNK_OPS` ops; stop at the first divergence that is not a known one
    (``known(divergence, spec, ops)`` names the known divergence it is an instance of,
    counted in ``hits``: AD-EXPECTATIONS-CONFORM; it may run ops of its own, as every
    answer of the chunk has been read by then), shrunk, or at an adapter failure.

    The next chunk is generated while the implementation answers the one just written
    (AD-BATCHED-OVERLAP); it is written only after every answer of that one is read."""
    outcome = BatchedOutcome()
    generated = answered_examples(run_seed, frozenset(adapter.supported_ops), steps)
    left = n_examples

    def next_chunk() -> list[AnsweredExample]:
        nonlocal left
        chunk: list[AnsweredExample] = []
        size = 0
        while left and size < CHUNK_OPS:
            example = next(generated)
            chunk.append(example)
            size += len(example[1])
            left -= 1
        return chunk

    chunk = next_chunk()
    while chunk:
        pairs = [(spec, ops) for spec, ops, _ in chunk]
        written = submit_examples(adapter, pairs)
        following = next_chunk()  # AD-BATCHED-OVERLAP: while the adapter answers
        results: list[Divergence | None] = []
        try:
            answers = [a for _, _, a in chunk]
            for found, _ in collect_examples(adapter, pairs, written, answers):
                results.append(found)  # every answer of the chunk read: in step
        except AdapterFailure as exc:
            spec, ops, _ = chunk[len(results)]
            outcome.examples += len(results) + 1
            outcome.ops += sum(len(o) for _, o, _ in chunk[: len(results) + 1])
            outcome.failure, outcome.trace = exc, model_trace(spec, ops)
            return outcome
        for (spec, ops, _), found in zip(chunk, results, strict=True):
            outcome.examples += 1
            outcome.ops += len(ops)
            if found is None:
                continue
            name = known(found, spec, ops)
            if name is not None:
                hits[name] = hits.get(name, 0) + 1
                continue
            outcome.found_in = (outcome.examples, found.index + 1)
            try:
                shrunk = shrink_ops(adapter, spec, ops, outcome, known)
            except AdapterFailure as exc:
                outcome.failure = exc
                outcome.trace = model_trace(spec, ops[: found.index + 1])
                return outcome
            if shrunk is None:  # not reproducible: keep the example as it diverged
                shrunk = found, model_trace(spec, ops[: found.index + 1])
            outcome.divergence, outcome.trace = shrunk
            return outcome
        chunk = following
    return outcome


def shrink_ops(
    adapter: Adapter,
    spec: CreditSpec,
    ops: list[Op],
    outcome: BatchedOutcome,
    known: Callable[[Divergence, CreditSpec, list[Op]], str | None] | None = None,
) -> tuple[Divergence, ProcessTrace] | None:
    """A 1-minimal diverging subsequence of ``ops`` (delta debugging), with its
    divergence (at its last op) and trace; ``None`` if ``ops`` no longer diverge (a
    nondeterministic implementation). A candidate fails only with a divergence that
    ``known`` names no known divergence of (AD-EXPECTATIONS-CONFORM: shrinking never
    turns a new divergence into a known one). The ops it runs count in ``outcome``."""

    current = spec

    def new(divergence: Divergence | None, spec: CreditSpec, candidate: list[Op]) -> bool:
        return divergence is not None and (
            known is None or known(divergence, spec, candidate) is None
        )

    def fails(candidate: list[Op]) -> int | None:
        outcome.ops += len(candidate)
        divergence, _ = check_trace(adapter, current, candidate)
        if divergence is None or not new(divergence, current, candidate):
            return None
        return divergence.index + 1

    try:
        shrunk = shrink_sequence(ops, fails)
    except ValueError:
        return None
    while True:  # shrink and simplify until neither changes the trace
        simpler, plainer = _simplify(adapter, current, shrunk, outcome, new)
        if (simpler, plainer) == (current, shrunk):
            break
        current = simpler
        shrunk = shrink_sequence(plainer, fails)
    divergence, trace = check_trace(adapter, current, shrunk)
    return None if divergence is None else (divergence, trace)


def _simplify(
    adapter: Adapter,
    spec: CreditSpec,
    ops: list[Op],
    outcome: BatchedOutcome,
    new: Callable[[Divergence | None, CreditSpec, list[Op]], bool],
) -> tuple[CreditSpec, list[Op]]:
    """AD-BATCHED: a simpler trace of the same length that still diverges at its last
    op: each op's spec override dropped where it is not needed, then the first reset
    spec of :data:`SPECS` (simplest first) that still diverges."""

    def diverges(spec: CreditSpec, ops: list[Op]) -> bool:
        outcome.ops += len(ops)
        divergence, _ = check_trace(adapter, spec, ops)
        return (
            new(divergence, spec, ops)
            and divergence is not None
            and (divergence.index == len(ops) - 1)
        )

    for k, op in enumerate(ops):
        if op.spec is not None:
            plain = [*ops[:k], replace(op, spec=None), *ops[k + 1 :]]
            if diverges(spec, plain):
                ops = plain
    for simpler in SPECS:
        if simpler == spec:
            break
        if diverges(simpler, ops):
            return simpler, ops
    return spec, ops
