"""RabbitMQ memory and disk alarms (AL-*): the rules, their properties and the
transition system the explorer runs."""

from creditflow.model.alarms.properties import (
    BLOCK_ON_PUBLISH,
    BLOCKED_ONCE,
    CHANNEL_FLOW,
    CLUSTER,
    CONSUMERS,
    UNBLOCKED,
    WATERMARK,
    AlarmProperties,
)
from creditflow.model.alarms.rules import (
    ACTION_SHIFT,
    BLOCKED,
    DISK,
    MEMORY,
    PROFILE_2008,
    AlarmConfig,
    AlarmModel,
    AlarmState,
    ConnectionSpec,
    Notice,
    reported_state,
    watermark_alarm,
)
from creditflow.model.alarms.system import CheckedAlarms

__all__ = [
    "ACTION_SHIFT",
    "AlarmConfig",
    "AlarmModel",
    "AlarmProperties",
    "AlarmState",
    "BLOCKED",
    "BLOCKED_ONCE",
    "BLOCK_ON_PUBLISH",
    "CHANNEL_FLOW",
    "CLUSTER",
    "CONSUMERS",
    "CheckedAlarms",
    "ConnectionSpec",
    "DISK",
    "MEMORY",
    "Notice",
    "PROFILE_2008",
    "UNBLOCKED",
    "WATERMARK",
    "reported_state",
    "watermark_alarm",
]
