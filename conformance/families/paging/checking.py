"""FAM-CHECKING for ``paging``: ``model/paging/system.py``'s :class:`PagingSystem` over
the bounds a command gives (PG-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creditflow.model.paging.system import PagingSystem
from creditflow.model.system import TransitionSystem


class PagingChecking:
    def system(self, instance: Any, options: Mapping[str, Any]) -> TransitionSystem[Any]:
        """``instance``: the paging :class:`~creditflow.model.paging.system.Bounds`."""
        return PagingSystem(instance)

    def symmetry(self, system: TransitionSystem[Any]) -> Any | None:
        return None

    def supply(self, instance: Any) -> int | None:
        return None


#: FAM-CHECKING: the paging family's checking part
CHECKING = PagingChecking()
