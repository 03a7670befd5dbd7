"""``--adapter rabbitmq-amqp1.0`` (AD-AMQ-RMQ): the installed RabbitMQ broker's AMQP 1.0
plugin, driven end to end by a python-qpid-proton client.

The driver starts a private broker as the broker tests do
(:class:`~creditflow.adapters.rabbitmq.broker.PrivateBroker`: its own ``HOME``, epmd,
node name and loopback ports, epmd tracked in a process group, SIG-CHILDREN) with
``rabbitmq_amqp1_0`` in its enabled-plugins file (AD-AMQ-RMQ-BROKER), then the adapter
process (:mod:`creditflow.adapters.amqp.rabbitmq_client`) against its port; closing the
adapter stops the broker. A broker that cannot be started is one line, exit 3. A broker
already running (``port``, or ``$CREDITFLOW_AMQP_BROKER_PORT``) is used as it is and
left running.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.conformance.differential.adapter import CRASH, AdapterFailure
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT
from creditflow.conformance.families.amqp.protocol import AmqpAdapter

NAME = "rabbitmq-amqp1.0"
PLUGIN = "rabbitmq_amqp1_0"
#: AD-AMQ-RMQ-BROKER: a broker already running with the plugin, on this loopback port
PORT_VARIABLE = "CREDITFLOW_AMQP_BROKER_PORT"


def plugin_version(broker: PrivateBroker) -> str:
    """The running plugin's ``vsn`` (AD-AMQ-RMQ-BROKER)."""
    out = broker.eval(f"application:get_key({PLUGIN}, vsn).")
    m = re.search(r'"([^"]+)"', out)
    if m is None:
        raise BrokerError(f"{PLUGIN} is not running on the broker: {out[:200]}")
    return m.group(1)


def start_broker(workdir: Path) -> tuple[PrivateBroker, str]:
    """AD-AMQ-RMQ-BROKER: a private broker with the AMQP 1.0 plugin enabled, and the
    plugin's version; :class:`BrokerError` when it cannot be had."""
    broker = PrivateBroker(workdir, plugins=[PLUGIN])
    broker.start()
    try:
        return broker, plugin_version(broker)
    except BrokerError:
        broker.stop()
        raise


class BrokerAmqpAdapter(AmqpAdapter):
    """The adapter process against a broker's port; owns the broker when it started it."""

    def __init__(
        self,
        port: int,
        version: str,
        timeout: float = DEFAULT_TIMEOUT,
        owned: PrivateBroker | None = None,
        workdir: tempfile.TemporaryDirectory | None = None,
    ) -> None:
        self._owned, self._workdir = owned, workdir
        argv = [
            sys.executable,
            "-m",
            "creditflow.adapters.amqp.rabbitmq_client",
            "--port",
            str(port),
            "--version",
            version,
        ]
        try:
            super().__init__(argv, name=NAME, timeout=timeout)
        except BaseException:
            self._stop_broker()
            raise

    def _stop_broker(self) -> None:
        if self._owned is not None:
            self._owned.stop()
            self._owned = None
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._stop_broker()


def factory(
    timeout: float = DEFAULT_TIMEOUT, port: int | None = None, version: str = "?"
) -> Callable[[], AmqpAdapter]:
    """AD-AMQ-RMQ: a function that starts a private broker with the plugin (or uses the
    one on ``port``) and the adapter against it; a broker that cannot be started is an
    :class:`AdapterFailure` (one line, exit 3)."""

    def start() -> AmqpAdapter:
        # the per-op quiet period (AD-AMQ-RMQ-QUIESCE) needs more than the default wait
        wait = max(timeout, 30.0)
        given = port or int(os.environ.get(PORT_VARIABLE) or 0)
        if given:
            return BrokerAmqpAdapter(given, version, wait)
        workdir = tempfile.TemporaryDirectory(prefix="cf-amqp-broker-")
        try:
            broker, vsn = start_broker(Path(workdir.name))
        except BrokerError as exc:
            workdir.cleanup()
            raise AdapterFailure(NAME, CRASH, f"the broker could not be started: {exc}") from None
        return BrokerAmqpAdapter(broker.amqp_port, vsn, wait, broker, workdir)

    return start
