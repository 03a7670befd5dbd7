"""The real RabbitMQ: its ``credit_flow`` module in an Erlang VM, a private broker from
Debian's package, a hidden Erlang node on it, and the paging and alarm scenarios run
against that broker."""

from creditflow.adapters.rabbitmq.alarms import (
    CONSUMER,
    PUBLISHER,
    broker_alarm_run,
    model_alarm_run,
    scenario_config,
)
from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.adapters.rabbitmq.erlang import ErlangSession
from creditflow.adapters.rabbitmq.module import RabbitMQAdapter, escript_path, locate_ebin
from creditflow.adapters.rabbitmq.paging import BrokerPagingRun, StepObservation, compare_on_broker
from creditflow.adapters.rabbitmq.paging_probe import check_snapshot

__all__ = [
    "BrokerError",
    "BrokerPagingRun",
    "CONSUMER",
    "ErlangSession",
    "PUBLISHER",
    "PrivateBroker",
    "RabbitMQAdapter",
    "StepObservation",
    "broker_alarm_run",
    "check_snapshot",
    "compare_on_broker",
    "escript_path",
    "locate_ebin",
    "model_alarm_run",
    "scenario_config",
]
