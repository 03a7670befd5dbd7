"""The search both AMQP conform drivers run (AD-AMQ-CONFORM-EXPLORE,
AD-AMQ-CONFORM-HYPOTHESIS, AD-AMQ-FIFO-CONFORM): the explorer's runs — every op sequence
the model allows, shortest first, under each choice of settings — then Hypothesis's —
settings and each op drawn among those the model allows, the shortest failing run
shrunk further by delta debugging.

The drivers differ only in their ops, model and runs, passed in as functions.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from creditflow.conformance.differential.hypothesis_home import private_hypothesis_storage
from creditflow.conformance.differential.shrink import shrink_sequence


class FailingRun(Protocol):
    """What the search reads of a run: the ops it executed and whether it failed."""

    @property
    def ops(self) -> Sequence[Any]: ...

    @property
    def failed(self) -> bool: ...

    @property
    def verdict(self) -> str: ...


class OpModel(Protocol):
    def possible(self, op: Any) -> bool: ...


class SteppedModel(OpModel, Protocol):
    """A model that takes the ops it finds possible."""

    def apply(self, op: Any) -> Any: ...


C = TypeVar("C")
Op = TypeVar("Op")
R = TypeVar("R", bound=FailingRun)
M = TypeVar("M", bound=OpModel)


def allows_in_order(model: SteppedModel, seq: Sequence[Any]) -> bool:
    """Whether ``model`` allows every op of ``seq`` in order, applying each (no run
    skips an op); decided on the model alone."""
    for op in seq:
        if not model.possible(op):
            return False
        model.apply(op)
    return True


def ops_in_turn(
    model: M, ops: Sequence[Op] | Callable[[M, int], Op | None], steps: int
) -> Iterator[Op]:
    """The ops of one run, each asked for after ``model`` took the one before: a fixed
    sequence with every op ``model`` does not allow at its turn skipped, or drawn by
    ``ops(model, i)`` for ``i`` below ``steps`` until it gives ``None``."""
    if callable(ops):
        for i in range(steps):
            op = ops(model, i)
            if op is None:
                return
            yield op
        return
    for op in list(ops):
        if model.possible(op):
            yield op


#: A known failure masked (AD-AMQ-EXPECTATIONS-MASK): the choice, the ops, the failing
#: run -> the run to report (not failed when the failure is a known one).
Mask = Callable[[C, Sequence[Op], R], R]


def executed_prefix(candidate: Sequence[Any], run: FailingRun) -> int | None:
    """The length of the prefix of ``candidate`` that ``run`` executed (ops the model
    does not allow were skipped, or masked, so the failing prefix is found by counting
    ``run``'s ops as a subsequence)."""
    done = list(run.ops)
    k = 0
    for j, op in enumerate(candidate):
        if k < len(done) and op == done[k]:
            k += 1
            if k == len(done):
                return j + 1
    return None


def explore_all(
    choices: Sequence[C],
    alphabet: Sequence[Op],
    depth: int,
    allows: Callable[[C, Sequence[Op]], bool],
    run: Callable[[C, Sequence[Op]], R],
    mask: Mask[C, Op, R] | None = None,
    stats: dict[str, int] | None = None,
) -> Iterator[R]:
    """FIND-EVERY: every sequence of 1 … ``depth`` ops of ``alphabet`` the model
    ``allows``, shortest first, under each choice, yielding each failing run (failures
    ``mask`` finds known masked; ``mask`` is consulted afresh at every run, so a finding
    masked after it is yielded is not met again) and going on from where it was.
    ``stats`` counts ``runs`` and ``ops``."""
    stats = {} if stats is None else stats
    stats.setdefault("runs", 0)
    stats.setdefault("ops", 0)
    for n in range(1, depth + 1):
        for choice in choices:
            for seq in itertools.product(alphabet, repeat=n):
                if not allows(choice, seq):
                    continue
                result = run(choice, seq)
                stats["runs"] += 1
                stats["ops"] += len(result.ops)
                if result.failed and mask is not None:
                    result = mask(choice, seq, result)
                if result.failed:
                    yield result


def explore(
    choices: Sequence[C],
    alphabet: Sequence[Op],
    depth: int,
    allows: Callable[[C, Sequence[Op]], bool],
    run: Callable[[C, Sequence[Op]], R],
    mask: Mask[C, Op, R] | None = None,
) -> tuple[R | None, int, int]:
    """Every sequence of 1 … ``depth`` ops of ``alphabet`` the model ``allows``, shortest
    first, under each choice: the first failing run (a shortest one; failures ``mask``
    finds known masked), runs, ops."""
    stats: dict[str, int] = {}
    first = next(explore_all(choices, alphabet, depth, allows, run, mask, stats), None)
    return first, stats["runs"], stats["ops"]


def hypothesis_search(
    choices: Sequence[C],
    label: str,
    alphabet: Sequence[Op],
    drawn: Callable[[C, Callable[[Any, int], Op | None]], R],
    replay: Callable[[C, list[Op]], R],
    choice_of: Callable[[R], C],
    seed_: int,
    max_examples: int,
    mask: Mask[C, Op, R] | None = None,
) -> tuple[R | None, int, int]:
    """Hypothesis draws a choice (``label``) and, through ``drawn``'s ``choose(model, i)``,
    each op of ``alphabet`` the model finds possible; the shortest failing run is shrunk
    by delta debugging with ``replay`` as the oracle (failures ``mask`` finds known
    masked throughout). The failing run, runs, ops."""
    # deferred: Hypothesis is loaded by the runs that draw, not by the explorer's runs
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st

    stats = {"runs": 0, "ops": 0}
    found: list[R] = []

    class Failed(Exception):
        pass

    @seed(seed_)
    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        chosen = data.draw(st.sampled_from(choices), label=label)

        def choose(model: OpModel, _i: int) -> Op | None:
            allowed = [o for o in alphabet if model.possible(o)]
            return data.draw(st.sampled_from(allowed)) if allowed else None

        run = drawn(chosen, choose)
        stats["runs"] += 1
        stats["ops"] += len(run.ops)
        if run.failed and mask is not None:
            run = mask(chosen, run.ops, run)
        if run.failed:
            found.append(run)
            raise Failed(run.verdict)

    with private_hypothesis_storage(), contextlib.suppress(Failed):  # OUT-HYPOTHESIS
        check()
    if not found:
        return None, stats["runs"], stats["ops"]
    best = min(found, key=lambda r: len(r.ops))
    where = choice_of(best)

    def replayed(seq: list[Op]) -> R:
        run = replay(where, seq)
        return mask(where, seq, run) if run.failed and mask is not None else run

    def fails(candidate: list[Op]) -> int | None:
        """``shrink_sequence``'s oracle: the failing prefix's length, or None."""
        run = replayed(candidate)
        return executed_prefix(candidate, run) if run.failed else None

    final = replayed(shrink_sequence(list(best.ops), fails))
    return (final if final.failed else best), stats["runs"], stats["ops"]
