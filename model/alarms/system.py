"""The alarm model with its properties, as a :class:`~creditflow.model.system.TransitionSystem`.

As for accounts, a checked state is ``(model state, violated step properties)``.
Processes are the connections' readers; a reader is blocked while its
``connection_state`` is ``blocked``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creditflow.model.alarms.properties import (
    STATE_PROPERTIES,
    STEP_PROPERTIES,
    AlarmProperties,
)
from creditflow.model.alarms.rules import (
    MEMORY,
    SOURCE_NAMES,
    AlarmConfig,
    AlarmModel,
    AlarmState,
    alarm_bit,
    reported_state,
)
from creditflow.model.system import StepChecked

CheckedState = tuple[AlarmState, int]


class CheckedAlarms(StepChecked):
    """The AL transition system of a configuration plus its AL properties."""

    def __init__(self, config: AlarmConfig, model: AlarmModel | None = None) -> None:
        self.config = config
        self.model = model if model is not None else AlarmModel(config)
        self.properties = AlarmProperties(self.model)
        self.process_names = tuple(c.name for c in config.connections)
        self.property_ids = (*STATE_PROPERTIES, *STEP_PROPERTIES)
        # a step can also break a state property at a check (AL-WATERMARK): every id
        # gets a bit
        self.step_property_ids = self.property_ids

    def describe(self, action: int) -> str:
        return self.model.describe(action)

    def render(self, state: CheckedState) -> Mapping[str, Any]:
        s = state[0]
        nodes = self.config.nodes
        names = self.process_names
        return {
            "used": dict(zip(nodes, s.used, strict=True)),
            "limit": dict(zip(nodes, s.limit, strict=True)),
            "up": dict(zip(nodes, s.up, strict=True)),
            "alarms": frozenset(
                (nodes[n], SOURCE_NAMES[src])
                for n in range(len(nodes))
                for src in (MEMORY, 2)
                if s.alarms & alarm_bit(n, src)
            ),
            "queue": s.queue,
            "connection_state": {n: reported_state(c) for n, c in zip(names, s.conns, strict=True)},
            "frames_unread": {n: c.written - c.read for n, c in zip(names, s.conns, strict=True)},
            "consumed": {n: c.consumed for n, c in zip(names, s.conns, strict=True)},
        }

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        text = self.model.describe(action)
        name, _, arg = text.partition("(")
        return name, {"target": arg.rstrip(")")}
