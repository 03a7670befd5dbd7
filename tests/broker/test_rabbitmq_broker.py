"""The private-broker fixture starts Debian's real RabbitMQ on loopback and cleans up."""

from __future__ import annotations

import pika
import pytest

from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker

pytestmark = pytest.mark.xdist_group("broker")


def test_private_broker_is_real_and_private(private_broker):
    status = private_broker.ctl("status")
    assert "RabbitMQ version: 3.10.8" in status
    connection = pika.BlockingConnection(private_broker.connection_parameters())
    channel = connection.channel()
    channel.queue_declare("smoke")
    channel.basic_publish("", "smoke", b"x")
    connection.close()
    assert "smoke\t1" in private_broker.ctl("list_queues", "name", "messages")
    assert private_broker.eval("1 + 1.") == "2"
    listeners = private_broker.eval("rabbit_networking:active_listeners().")
    assert "{127,0,0,1}" in listeners and "{0,0,0,0}" not in listeners


def test_missing_scripts_give_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CREDITFLOW_RABBITMQ_SCRIPTS", str(tmp_path))
    with pytest.raises(BrokerError, match="install Debian's rabbitmq-server"):
        PrivateBroker(tmp_path)
