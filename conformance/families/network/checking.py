"""FAM-CHECKING for ``credit_flow``: the NET engine's compiled network
(``conformance/explore/compiled.py``, EXP-COMPILED) with the command's overrides, and
its graph symmetry (EXP-SYMMETRY)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creditflow.conformance.explore.check import CheckOptions, prepare_graph
from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.model.system import TransitionSystem


class NetworkChecking:
    def system(self, instance: Any, options: Mapping[str, Any]) -> TransitionSystem[Any]:
        opts = CheckOptions(
            credit=options.get("credit"),
            publishes=options.get("publishes"),
            all_check_blocked=bool(options.get("all_check_blocked")),
            max_crashes=options.get("max_crashes"),
        )
        return CompiledNetwork(
            prepare_graph(instance, opts),
            mailbox_bound=options.get("mailbox_bound"),
            count_consumed=False,
        )

    def symmetry(self, system: TransitionSystem[Any]) -> Any | None:
        return network_symmetry(getattr(system, "network"))  # noqa: B009 - a CheckedNetwork

    def supply(self, instance: Any) -> int | None:
        return None  # a supply per source (SCOPE-SUPPLY), not one number


#: FAM-CHECKING: the credit_flow family's checking part
CHECKING = NetworkChecking()
