"""The memory-alarm scenario against a real RabbitMQ broker, and the model's prediction.

:func:`broker_alarm_run` drives a :class:`~creditflow.adapters.rabbitmq.broker.PrivateBroker`
with two pika ``SelectConnection``\\ s, each on its own I/O-loop thread (a
``BlockingConnection`` defers ``Connection.Blocked``/``Unblocked`` callbacks): a
publisher and a consumer. At each checkpoint of :data:`SCENARIO` it records what the
broker shows — each connection's ``list_connections`` state (told apart by
``peer_port``), the ``Connection.Blocked``/``Unblocked`` frames each client received, the
messages consumed, the queue depth. :func:`model_alarm_run` runs the same scenario
through :class:`~creditflow.model.alarms.rules.AlarmModel` (settling the broker-internal steps
after each action) and predicts the same records. The conformance test compares them
checkpoint by checkpoint (AL-BROKER).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.model.alarms.rules import (
    ACTION_SHIFT,
    AlarmConfig,
    AlarmModel,
    AlarmState,
    ConnectionSpec,
    reported_state,
)

QUEUE = "creditflow-alarm"
PUBLISHER, CONSUMER = "publisher", "consumer"
#: The watermark as the model sees it: the node uses 1 unit; 0.4 of RAM is 4 units.
HIGH_WATERMARK, USED = 4, 1

#: (checkpoint name, what happens before it is observed)
SCENARIO = (
    ("published", "the publisher publishes BEFORE messages (confirmed) with no alarm"),
    ("alarm", "set_vm_memory_high_watermark 0: the memory alarm is raised"),
    ("consumed", "the consumer starts consuming while the alarm is on"),
    ("published-under-alarm", "the publisher publishes AFTER more messages"),
    ("cleared", "set_vm_memory_high_watermark 0.4: the alarm clears"),
)


@dataclass(frozen=True)
class Checkpoint:
    """What one checkpoint shows (the same fields for broker and model)."""

    name: str
    states: dict[str, str]
    notices: dict[str, tuple[str, ...]]
    consumed: int
    queued: int


@dataclass
class AlarmRun:
    checkpoints: list[Checkpoint] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    confirmed: int = 0


# -- the model's prediction ----------------------------------------------------------------------


def scenario_config(before: int, after: int, empty_body: bool = False) -> AlarmConfig:
    return AlarmConfig(
        connections=(
            ConnectionSpec(PUBLISHER, publishes=before + after, empty_body=empty_body),
            ConnectionSpec(CONSUMER, consumes=True, starts_later=True),
        ),
        limit=HIGH_WATERMARK,
        max_used=USED,
        initial_used=USED,
        watermarks=(0, HIGH_WATERMARK),
        name="broker-scenario",
    )


def model_alarm_run(
    before: int, after: int, empty_body: bool = False
) -> tuple[AlarmRun, list[AlarmState]]:
    """The model's prediction of every checkpoint, and the states it passed through
    (``empty_body``: publishes without a body frame, AL-ONE-PUBLISH)."""
    model = AlarmModel(scenario_config(before, after, empty_body))
    node = model.config.nodes[0]
    state = model.initial()
    visited = [state]
    notices: dict[str, list[str]] = {PUBLISHER: [], CONSUMER: []}
    run = AlarmRun()

    def act(kind: str, target: str, value: int | None = None) -> None:
        nonlocal state
        action = model.encode(kind, target, value)
        assert action in set(model.enabled(state)), f"{kind}({target}) not enabled"
        outcome = model.apply(state, action)
        record(outcome.notices)
        state, settled = model.settle(outcome.state)
        record(settled)
        visited.append(state)

    def record(frames: Any) -> None:
        for n in frames:
            notices[n.connection].append(n.method)

    def checkpoint(name: str) -> None:
        run.checkpoints.append(
            Checkpoint(
                name=name,
                states={
                    s.name: reported_state(c) for s, c in zip(model.specs, state.conns, strict=True)
                },
                notices={k: tuple(v) for k, v in notices.items()},
                consumed=state.conns[1].consumed,
                queued=state.queue,
            )
        )

    for _ in range(before):
        act("publish", PUBLISHER)
    checkpoint("published")
    act("set_watermark", node, 0)
    checkpoint("alarm")
    act("consume", CONSUMER)
    checkpoint("consumed")
    for _ in range(after):
        act("publish", PUBLISHER)
    checkpoint("published-under-alarm")
    act("set_watermark", node, HIGH_WATERMARK)
    checkpoint("cleared")
    run.bodies = [str(i).encode() for i in range(state.conns[1].consumed)]
    run.confirmed = state.conns[0].read // model.specs[0].frames_per_publish
    assert all(a >> ACTION_SHIFT >= 0 for a in model.enabled(state))
    return run, visited


# -- the real broker -------------------------------------------------------------------------------


class AmqpPeer:
    """One pika ``SelectConnection`` on its own I/O-loop thread; every pika call runs on
    that thread; what arrives is recorded."""

    def __init__(self, broker: PrivateBroker, name: str, timeout: float = 30.0) -> None:
        import pika

        self.name = name
        self.notices: list[str] = []
        self.bodies: list[bytes] = []
        self.confirmed = 0
        self.channel: Any = None
        self._opened: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        params = broker.connection_parameters(
            client_properties={"connection_name": name}, heartbeat=0
        )
        self.connection = pika.SelectConnection(
            params,
            on_open_callback=lambda conn: conn.channel(on_open_callback=self._channel_open),
            on_open_error_callback=lambda _c, err: self._opened.put(err),
            on_close_callback=lambda _c, _reason: None,
        )
        self.connection.add_on_connection_blocked_callback(
            lambda _c, frame: self._notice("connection.blocked")
        )
        self.connection.add_on_connection_unblocked_callback(
            lambda _c, frame: self._notice("connection.unblocked")
        )
        self.thread = threading.Thread(
            target=self.connection.ioloop.start, daemon=True, name=f"pika-{name}"
        )
        self.thread.start()
        try:
            opened = self._opened.get(timeout=timeout)
        except queue.Empty:
            raise BrokerError(f"{name}: the AMQP connection did not open in {timeout} s") from None
        if opened is not True:
            raise BrokerError(f"{name}: the AMQP connection failed: {opened}")

    def _notice(self, method: str) -> None:
        with self._lock:
            self.notices.append(method)

    def _channel_open(self, channel: Any) -> None:
        self.channel = channel
        channel.queue_declare(QUEUE, callback=lambda _f: self._opened.put(True))

    def call(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the connection's I/O loop."""
        self.connection.ioloop.add_callback_threadsafe(fn)

    @property
    def local_port(self) -> int:
        """The client side's TCP port: the broker's ``peer_port`` of this connection."""
        transport = getattr(self.connection, "_transport", None)
        sock = getattr(transport, "_sock", None)
        if sock is None:
            raise BrokerError(f"{self.name}: cannot see the connection's socket (pika changed?)")
        return sock.getsockname()[1]

    def enable_confirms(self) -> None:
        def on_ack(frame: Any) -> None:
            with self._lock:
                method = frame.method
                self.confirmed = (
                    method.delivery_tag
                    if method.multiple
                    else max(self.confirmed + 1, method.delivery_tag)
                )

        self.call(lambda: self.channel.confirm_delivery(on_ack))

    def publish(self, tag: bytes, empty_body: bool = False) -> None:
        """Publish message ``tag``: as its body, or with an empty body and ``tag`` as
        its ``message_id``."""
        import pika

        if empty_body:
            props = pika.BasicProperties(message_id=tag.decode())
            self.call(lambda: self.channel.basic_publish("", QUEUE, b"", props))
        else:
            self.call(lambda: self.channel.basic_publish("", QUEUE, tag))

    def consume(self) -> None:
        def on_message(_ch: Any, _method: Any, props: Any, body: bytes) -> None:
            with self._lock:
                self.bodies.append(body or (props.message_id or "").encode())

        self.call(lambda: self.channel.basic_consume(QUEUE, on_message, auto_ack=True))

    def close(self) -> None:
        def stop() -> None:
            if self.connection.is_open:
                self.connection.close()
            self.connection.ioloop.call_later(0.5, self.connection.ioloop.stop)

        self.call(stop)
        self.thread.join(timeout=10)


def connection_states(broker: PrivateBroker) -> dict[int, str]:
    """``peer_port -> state`` of every AMQP connection (``rabbitmqctl list_connections``)."""
    out: dict[int, str] = {}
    for line in broker.ctl(
        "list_connections", "peer_port", "state", "-q", "--no-table-headers"
    ).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            out[int(parts[0])] = parts[1]
    return out


def queue_depth(broker: PrivateBroker) -> int:
    for line in broker.ctl(
        "list_queues", "name", "messages", "-q", "--no-table-headers"
    ).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == QUEUE:
            return int(parts[1])
    raise BrokerError(f"queue {QUEUE} not found")


def broker_alarm_run(
    broker: PrivateBroker,
    before: int,
    after: int,
    expected: list[Checkpoint] | None = None,
    timeout: float = 30.0,
    grace: float = 1.0,
    empty_body: bool = False,
) -> AlarmRun:
    """Run :data:`SCENARIO` on the real broker. At each checkpoint the broker is observed
    until it shows the ``expected`` checkpoint (it reaches it asynchronously) or
    ``timeout`` passes, then observed once more after ``grace`` seconds: that last
    observation is recorded, so a broker that passes through the expected state and
    leaves it is caught."""
    run = AlarmRun()
    publisher = AmqpPeer(broker, PUBLISHER)
    consumer = AmqpPeer(broker, CONSUMER)
    peers = {publisher.local_port: PUBLISHER, consumer.local_port: CONSUMER}
    try:
        publisher.enable_confirms()

        def observe(name: str) -> Checkpoint:
            states = connection_states(broker)
            with publisher._lock, consumer._lock:
                return Checkpoint(
                    name=name,
                    states={peers[p]: s for p, s in states.items() if p in peers},
                    notices={
                        PUBLISHER: tuple(publisher.notices),
                        CONSUMER: tuple(consumer.notices),
                    },
                    consumed=len(consumer.bodies),
                    queued=queue_depth(broker),
                )

        def checkpoint(name: str) -> None:
            want = None if expected is None else next(c for c in expected if c.name == name)
            deadline = time.monotonic() + timeout
            seen = observe(name)
            while want is not None and seen != want and time.monotonic() < deadline:
                time.sleep(0.3)
                seen = observe(name)
            time.sleep(grace)
            run.checkpoints.append(observe(name))

        sent = 0
        for _ in range(before):
            publisher.publish(str(sent).encode(), empty_body)
            sent += 1
        deadline = time.monotonic() + timeout
        while publisher.confirmed < before and time.monotonic() < deadline:
            time.sleep(0.05)
        checkpoint("published")
        broker.ctl("set_vm_memory_high_watermark", "0")
        checkpoint("alarm")
        consumer.consume()
        checkpoint("consumed")
        for _ in range(after):
            publisher.publish(str(sent).encode(), empty_body)
            sent += 1
        checkpoint("published-under-alarm")
        broker.ctl("set_vm_memory_high_watermark", "0.4")
        checkpoint("cleared")
        deadline = time.monotonic() + timeout
        while publisher.confirmed < sent and time.monotonic() < deadline:
            time.sleep(0.05)
        run.bodies = list(consumer.bodies)
        run.confirmed = publisher.confirmed
    finally:
        publisher.close()
        consumer.close()
    return run
