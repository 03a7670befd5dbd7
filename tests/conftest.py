"""Shared fixtures. Tests that need a real RabbitMQ broker use ``private_broker``; they
run in the xdist group "broker" (`make test` passes ``--dist loadgroup``) so that two
brokers do not boot at once on two cores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from creditflow.adapters.rabbitmq_broker import PrivateBroker


@pytest.fixture(scope="module")
def private_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateBroker]:
    """A RabbitMQ 3.10.8 node from Debian's package on loopback, private to this module."""
    broker = PrivateBroker(tmp_path_factory.mktemp("broker"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
