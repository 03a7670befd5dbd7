"""FAM-CHECKING for ``accounts``: ``model/accounts/system.py``'s
:class:`CheckedAccounts` with the command's overrides (AC-*), and its actor symmetry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creditflow.conformance.families.accounts.explore import AccountsOptions, prepare_actor_graph
from creditflow.model.accounts.system import CheckedAccounts
from creditflow.model.system import TransitionSystem


class AccountsChecking:
    def system(self, instance: Any, options: Mapping[str, Any]) -> TransitionSystem[Any]:
        opts = AccountsOptions(limit=options.get("limit"), reads=options.get("reads"))
        return CheckedAccounts(
            prepare_actor_graph(instance, opts),
            naive_bound=bool(options.get("naive_bound")),
            symmetry=bool(options.get("symmetry")),
        )

    def symmetry(self, system: TransitionSystem[Any]) -> Any | None:
        return getattr(system, "symmetry", None)

    def supply(self, instance: Any) -> int | None:
        return None


#: FAM-CHECKING: the accounts family's checking part
CHECKING = AccountsChecking()
