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

    #: Process names; bit ``i`` of a blocked mask is ``process_names[i]``.
    process_names: Sequence[str]
    #: The spec ids of the state properties :meth:`violations` can report.
    property_ids: Sequence[str]

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
