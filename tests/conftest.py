"""Shared fixtures. Tests that need a real RabbitMQ broker use ``private_broker`` and
carry ``pytest.mark.xdist_group("broker")``; such items also get the ``broker`` marker
here, and `make test` runs them in a second, single-process pytest run (pytest 9 with
xdist 3.8 does not keep an xdist group on one worker, so two brokers would boot at once
on two cores)."""

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers("xdist_group"):
            if (mark.args[:1] or [mark.kwargs.get("name")])[0] == "broker":
                item.add_marker(pytest.mark.broker)
