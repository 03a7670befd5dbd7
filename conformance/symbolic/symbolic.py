"""Running the model's own Python code on Z3 terms (Z3-ENCODING).

The Z3 transition relation is not written a second time: :func:`all_paths` runs a
function of the model (``CreditNetwork.apply``, ``is_enabled``, ``is_blocked``, …) on
:class:`Sym` values that wrap Z3 integer terms. Arithmetic builds terms; every time the
code needs a concrete truth value (``if``, ``and``, ``any``, a chained comparison) the
run *forks*: :func:`all_paths` re-runs the function once per feasible sequence of
decisions and returns each path's condition with its result. Because the paths of a
deterministic function partition its inputs, ``ite`` over the paths is exactly the
function.

Anything else that would need a concrete value (``int()``, indexing, hashing,
``range()``) raises :class:`SymbolicUseError`, so an unsupported construct in the
model fails loudly instead of being mis-encoded.

Example::

    >>> import z3
    >>> x = Sym(z3.Int("x"))
    >>> paths = all_paths(lambda: 1 if x <= 0 else x - 1)
    >>> [(str(p.condition), str(to_term(p.result))) for p in paths]
    [('0 >= x', '1'), ('Not(0 >= x)', 'x - 1')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import z3

#: Paths one function may have before the encoding gives up (a guard against loops
#: whose bound depends on a symbolic value).
MAX_PATHS = 4096


class SymbolicUseError(TypeError):
    """Model code used a symbolic value where a concrete one is needed."""


Value = Any  # int | Sym


def symbol(name: str) -> str:
    """OUT-TEXT: a Z3 symbol name made from process names: Z3 takes UTF-8, so a lone
    surrogate (from a JSON ``\\ud800`` in a node id) becomes its backslash escape."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def term(value: Value) -> z3.ArithRef:
    """The Z3 integer term of an int or a :class:`Sym`."""
    if isinstance(value, Sym):
        return value.expr
    if isinstance(value, bool) or not isinstance(value, int):
        raise SymbolicUseError(f"expected an integer, got {value!r}")
    return z3.IntVal(value)


def to_term(value: Value) -> z3.ExprRef:
    """The Z3 term of a path result: ints and Syms as integers, truth values as Booleans."""
    if isinstance(value, SymBool):
        return value.expr
    if isinstance(value, bool):
        return z3.BoolVal(value)
    return term(value)


class Sym:
    """A symbolic integer: Python arithmetic and comparisons on it build Z3 terms."""

    __slots__ = ("expr",)

    def __init__(self, expr: z3.ArithRef) -> None:
        self.expr = expr

    def __repr__(self) -> str:
        return f"Sym({self.expr})"

    def __add__(self, other: Value) -> Sym:
        return Sym(self.expr + term(other))

    def __radd__(self, other: Value) -> Sym:
        return Sym(term(other) + self.expr)

    def __sub__(self, other: Value) -> Sym:
        return Sym(self.expr - term(other))

    def __rsub__(self, other: Value) -> Sym:
        return Sym(term(other) - self.expr)

    def __mul__(self, other: Value) -> Sym:
        return Sym(self.expr * term(other))

    def __rmul__(self, other: Value) -> Sym:
        return Sym(term(other) * self.expr)

    def __neg__(self) -> Sym:
        return Sym(-self.expr)

    def __le__(self, other: Value) -> SymBool:
        return SymBool(self.expr <= term(other))

    def __lt__(self, other: Value) -> SymBool:
        return SymBool(self.expr < term(other))

    def __ge__(self, other: Value) -> SymBool:
        return SymBool(self.expr >= term(other))

    def __gt__(self, other: Value) -> SymBool:
        return SymBool(self.expr > term(other))

    # == and != build terms, as numpy's build arrays (and make Sym unhashable, like SymBool)
    def __eq__(self, other: object) -> SymBool:  # type: ignore[override]  # a term, not a bool
        return SymBool(self.expr == term(other))

    def __ne__(self, other: object) -> SymBool:  # type: ignore[override]  # a term, not a bool
        return SymBool(self.expr != term(other))

    def __bool__(self) -> bool:
        """Python's truth of an int: non-zero (a fork)."""
        return _decide(self.expr != 0)

    def __int__(self) -> int:
        raise SymbolicUseError(f"int() of a symbolic value {self.expr}")

    def __index__(self) -> int:
        raise SymbolicUseError(f"a symbolic value {self.expr} used as an index or count")


def as_int(value: Sym) -> int:
    """A symbolic integer where the model's code expects an ``int``: that code runs
    unchanged on it (Z3-ENCODING), which the type checker is told here, once."""
    return cast(int, value)


class SymBool:
    """A symbolic truth value; using it in a condition forks the run."""

    __slots__ = ("expr",)
    __hash__ = None  # type: ignore[assignment]  # unhashable, like Sym: a condition, not a key

    def __init__(self, expr: z3.BoolRef) -> None:
        self.expr = expr

    def __repr__(self) -> str:
        return f"SymBool({self.expr})"

    def __bool__(self) -> bool:
        return _decide(self.expr)

    def __invert__(self) -> SymBool:
        return SymBool(z3.Not(self.expr))


@dataclass(frozen=True)
class Path:
    """One path through a function: the condition under which it is taken, the result."""

    condition: z3.BoolRef
    result: Any


class _Explorer:
    """Decisions of the current run: replay ``prefix``, then take True and remember
    that the False side is still to be explored."""

    def __init__(self, prefix: Sequence[bool], assumptions: z3.BoolRef | None) -> None:
        self.prefix = list(prefix)
        self.taken: list[bool] = []
        self.conditions: list[z3.BoolRef] = []
        self.solver = z3.Solver()
        self.solver.set("timeout", 2000)
        if assumptions is not None:
            self.solver.add(assumptions)

    def _feasible(self, condition: z3.BoolRef) -> bool:
        return self.solver.check(condition) != z3.unsat

    def decide(self, condition: z3.BoolRef) -> bool:
        simple = z3.simplify(condition)
        if z3.is_true(simple):
            return True
        if z3.is_false(simple):
            return False
        yes = self._feasible(condition)
        no = self._feasible(z3.Not(condition))
        if not (yes and no):  # decided by the path so far: no fork
            return yes
        i = len(self.taken)
        choice = self.prefix[i] if i < len(self.prefix) else True
        self.taken.append(choice)
        literal = condition if choice else z3.Not(condition)
        self.conditions.append(literal)
        self.solver.add(literal)
        return choice


_current: list[_Explorer] = []


def _decide(condition: z3.BoolRef) -> bool:
    if not _current:
        raise SymbolicUseError(
            f"the truth of a symbolic condition {condition} is needed outside all_paths()"
        )
    return _current[-1].decide(condition)


@contextmanager
def _running(explorer: _Explorer) -> Iterator[_Explorer]:
    _current.append(explorer)
    try:
        yield explorer
    finally:
        _current.pop()


def all_paths(
    fn: Callable[[], Any], assumptions: z3.BoolRef | None = None, max_paths: int = MAX_PATHS
) -> list[Path]:
    """Every feasible path of ``fn()`` (under ``assumptions``), in depth-first order,
    True before False. The conditions are mutually exclusive and, together with
    ``assumptions``, exhaustive."""
    paths: list[Path] = []
    pending: list[list[bool]] = [[]]
    while pending:
        prefix = pending.pop()
        with _running(_Explorer(prefix, assumptions)) as run:
            result = fn()
        paths.append(Path(_conjunction(run.conditions), result))
        if len(paths) > max_paths:
            raise SymbolicUseError(f"more than {max_paths} paths: a loop on a symbolic bound?")
        # the False side of every decision taken True beyond the replayed prefix
        for i in range(len(run.taken) - 1, len(prefix) - 1, -1):
            if run.taken[i]:
                pending.append([*run.taken[:i], False])
    return paths


def _conjunction(literals: Sequence[z3.BoolRef]) -> z3.BoolRef:
    if not literals:
        return z3.BoolVal(True)
    return literals[0] if len(literals) == 1 else z3.And(*literals)


def truth(paths: Sequence[Path]) -> z3.BoolRef:
    """The condition under which a Boolean-valued function returns a true value."""
    return z3.simplify(z3.Or(*(z3.And(p.condition, to_term(p.result)) for p in paths)))


def merge(paths: Sequence[Path], select: Callable[[Any], Value]) -> z3.ExprRef:
    """``ite`` over the paths of the value ``select(result)`` (the last path is the
    default: the conditions are exhaustive)."""
    expr = to_term(select(paths[-1].result))
    for p in reversed(paths[:-1]):
        value = to_term(select(p.result))
        expr = value if z3.eq(value, expr) else z3.If(p.condition, value, expr)
    return expr
