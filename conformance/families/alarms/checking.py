"""FAM-CHECKING for ``alarms``: ``model/alarms/system.py``'s :class:`CheckedAlarms`
over an alarm configuration (AL-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creditflow.model.alarms.system import CheckedAlarms
from creditflow.model.system import TransitionSystem


class AlarmsChecking:
    def system(self, instance: Any, options: Mapping[str, Any]) -> TransitionSystem[Any]:
        return CheckedAlarms(instance)

    def symmetry(self, system: TransitionSystem[Any]) -> Any | None:
        return None

    def supply(self, instance: Any) -> int | None:
        return None


#: FAM-CHECKING: the alarms family's checking part
CHECKING = AlarmsChecking()
