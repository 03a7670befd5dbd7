"""What the explorer needs from a model: the shape every state machine in ``model/``
offers (credit networks today; paging, accounts and alarms beside them).

A model is a finite transition system over immutable, hashable states with
integer-coded actions, named processes that can be *blocked*, and state
properties identified by their spec ids.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

S = TypeVar("S", bound=Hashable)


class TransitionSystem(Protocol[S]):
    """The interface :func:`creditflow.conformance.explore.explorer.explore` explores."""

    @property
    def process_names(self) -> Sequence[str]:
        """Process names; bit ``i`` of a blocked mask is ``process_names[i]``."""

    @property
    def property_ids(self) -> Sequence[str]:
        """The spec ids of the state properties :meth:`violations` can report."""

    def initial(self) -> S:
        """The initial state."""
        ...

    def successors(self, state: S) -> Sequence[tuple[int, S]]:
        """Every enabled (action, next state) pair, in a fixed order."""
        ...

    def describe(self, action: int) -> str:
        """A short human-readable name of an action, e.g. ``take(channel<-reader)``."""
        ...

    def violations(self, state: S) -> tuple[str, ...]:
        """The ids of the state properties violated in ``state``."""
        ...

    def blocked_mask(self, state: S) -> int:
        """Bit ``i`` set iff process ``i`` is blocked (waiting for someone else)."""
        ...

    def pending_work(self, state: S) -> bool:
        """Whether work is left that some process should still do (a terminal state with
        pending work is a deadlock)."""
        ...

    def render(self, state: S) -> Mapping[str, Any]:
        """The state as named variables, for traces (plain JSON-able values, tuples for
        pairs, sets as ``frozenset``)."""
        ...

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        """The action name and its parameters (``mbt::actionTaken``, ``mbt::nondetPicks``)."""
        ...


class StepChecked:
    """A model whose properties include *step* predicates, as a :class:`TransitionSystem`.

    A checked state is ``(model state, bits)``: bit ``i`` is set once a transition
    violated ``step_property_ids[i]``, so the explorer sees a step violation like a
    state property of the state it leads to. Without violations every bit is 0 and the
    state space is the model's. ``model`` offers ``initial``, ``enabled``, ``apply``
    (returning an outcome with ``.state``), ``blocked_mask`` and ``pending_work``;
    ``properties`` offers ``violations(state)`` and
    ``step_violations(state, action, outcome)``. The accounts and alarm systems are built
    on it; subclasses add ``describe``, ``render`` and ``action_record``.
    """

    model: Any
    properties: Any
    process_names: Sequence[str]
    property_ids: Sequence[str]
    step_property_ids: Sequence[str]

    def initial(self) -> tuple[Any, int]:
        return (self.model.initial(), 0)

    def successors(self, state: tuple[Any, int]) -> Sequence[tuple[int, tuple[Any, int]]]:
        s, bits = state
        out = []
        for action in self.model.enabled(s):
            outcome = self.model.apply(s, action)
            bad = bits
            for pid in self.properties.step_violations(s, action, outcome):
                bad |= 1 << self.step_property_ids.index(pid)
            out.append((action, (outcome.state, bad)))
        return out

    def violations(self, state: tuple[Any, int]) -> tuple[str, ...]:
        s, bits = state
        stepped = tuple(pid for i, pid in enumerate(self.step_property_ids) if bits >> i & 1)
        return tuple(dict.fromkeys(self.properties.violations(s) + stepped))

    def blocked_mask(self, state: tuple[Any, int]) -> int:
        return self.model.blocked_mask(state[0])

    def pending_work(self, state: tuple[Any, int]) -> bool:
        return self.model.pending_work(state[0])
