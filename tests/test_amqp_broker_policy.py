"""AD-AMQ-RMQ without a running broker: the declared policy in the model's terms, the
model ending a drain by itself (``drain_echo: auto``), the adapter registered, and a
broker that cannot be started (one line, exit 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from creditflow.adapters.amqp.rabbitmq_plugin import NAME, PORT_VARIABLE
from creditflow.adapters.amqp.rabbitmq_policy import SETTINGS, broker_policy
from creditflow.adapters.registry import AMQP_BUILTIN, is_amqp_name
from creditflow.conformance import exit_codes
from creditflow.conformance.families.amqp.conform import (
    AmqpOp,
    ModelLink,
    model_policy,
    settings_choices,
)
from creditflow.model.amqp.policies import CreditWindow, WindowFixed, WindowNever

ZERO = {"delivery_count": 0, "client_next_outgoing_id": 0, "server_next_outgoing_id": 0}


def test_the_declared_policy_is_one_of_the_model() -> None:
    """AD-AMQ-RMQ-POLICY: the run's link (credit by hand, serial formula, proton's
    unbounded window left uncompared, drains answered by the broker) and the broker's
    receiving direction: a credit window of 65536 renewed at 32768, a session window of
    65535 renewed at 32767."""
    declared = broker_policy(SETTINGS)
    pol = model_policy(declared, SETTINGS)
    assert pol.credit is None and pol.drain_auto
    assert isinstance(pol.window, WindowNever)
    assert set(pol.uncompared) == {"incoming_window", "remote_incoming_window"}
    incoming = model_policy(
        {**declared["x-incoming"], "sender_credit": declared["sender_credit"]}, SETTINGS
    )
    assert incoming.credit == CreditWindow(65536, 32768)
    assert incoming.window == WindowFixed(65535, 32767)


def test_a_broker_answered_drain_ends_in_the_model_without_drained() -> None:
    """AD-AMQ-RMQ-POLICY ``drain_echo: auto``: the model's sender ends a drain as soon as
    nothing can be sent (AMQ-LINK-DRAIN), with credit 0 and the delivery-count advanced
    by the credit drained, and ``drained`` is no op a run draws; by hand it stays open."""
    auto = model_policy(broker_policy(SETTINGS), SETTINGS)
    m = ModelLink.start(auto, ZERO, 2**31 - 1)
    assert not m.possible(AmqpOp("drained"))
    m.apply(AmqpOp("drain", credit=2))
    v = m.view()
    assert (v["sender.delivery_count"], v["sender.credit"]) == (2, 0)
    assert (v["receiver.delivery_count"], v["receiver.credit"]) == (2, 0)
    by_hand = model_policy({**broker_policy(SETTINGS), "drain_echo": "by hand"}, SETTINGS)
    h = ModelLink.start(by_hand, ZERO, 2**31 - 1)
    assert h.possible(AmqpOp("drained"))
    h.apply(AmqpOp("drain", credit=2))
    assert h.view()["sender.credit"] == 2


def test_the_adapter_is_registered_with_both_queue_types() -> None:
    """AD-AMQ-RMQ, AD-AMQ-RMQ-SETTINGS: ``rabbitmq-amqp1.0`` is an AMQP adapter name; its
    runs take a classic queue, then a quorum queue."""
    assert is_amqp_name(NAME) and NAME in AMQP_BUILTIN
    info = {"settings": SETTINGS}
    assert settings_choices(info) == [{"quorum_queue": 0}, {"quorum_queue": 1}]


def test_a_broker_that_cannot_start_is_one_line_and_exit_3(tmp_path: Path) -> None:
    """AD-AMQ-RMQ-BROKER: no RabbitMQ scripts → one line naming the adapter and why,
    exit 3, nothing started."""
    env = {k: v for k, v in os.environ.items() if k != PORT_VARIABLE}
    env["CREDITFLOW_RABBITMQ_SCRIPTS"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "creditflow.conformance.cli", "conform", "--adapter", NAME],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == exit_codes.ADAPTER_FAILURE, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "rabbitmq-amqp1.0" in lines[0] and "the broker could not be started" in lines[0]
    assert "no RabbitMQ server scripts" in lines[0]
