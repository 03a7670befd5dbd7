"""Shared fixtures. Tests that need a real RabbitMQ broker live in ``tests/broker/``, use
``private_broker`` and carry ``pytest.mark.xdist_group("broker")``; Spark tests live in
``tests/spark/``. Broker items also get the ``broker`` marker
here, and `make test` runs them in a second, single-process pytest run (pytest 9 with
xdist 3.8 does not keep an xdist group on one worker, so two brokers would boot at once
on two cores). The tests sharing one Spark session (``xdist_group("spark")``) get the
``spark`` marker and run in that pass too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from creditflow.adapters.rabbitmq.broker import PrivateBroker
from tests.json_schemas import check_cli_result


@pytest.fixture(scope="module")
def private_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateBroker]:
    """A RabbitMQ 3.10.8 node from Debian's package on loopback, private to this module."""
    broker = PrivateBroker(tmp_path_factory.mktemp("broker"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


#: xdist groups whose tests run in `make test`'s single-process pass, and their marker
SINGLE_PROCESS_GROUPS = {"broker": pytest.mark.broker, "spark": pytest.mark.spark}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers("xdist_group"):
            group = (mark.args[:1] or [mark.kwargs.get("name")])[0]
            if group in SINGLE_PROCESS_GROUPS:
                item.add_marker(SINGLE_PROCESS_GROUPS[group])


@pytest.fixture(autouse=True)
def json_outputs_match_their_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    """OUT-JSON-SCHEMA: every ``--json`` output a test makes through CliRunner is
    validated against its published schema in spec/schemas/ (tests/json_schemas.py)."""
    invoke = CliRunner.invoke

    def invoke_and_validate(
        self: CliRunner, cli: Any, args: Any = None, *a: Any, **kw: Any
    ) -> Result:
        result = invoke(self, cli, args, *a, **kw)
        words = [args] if isinstance(args, str) else list(args or ())
        check_cli_result(words, result.exit_code, result.stdout)
        return result

    monkeypatch.setattr(CliRunner, "invoke", invoke_and_validate)
