"""Run a paging scenario on a real RabbitMQ broker and observe it (PG-OBSERVE).

The workload goes through AMQP with pika (publish with confirms, ``basic.get``,
``basic.ack``, ``basic.nack(requeue=True)``); paging is forced and the queue is observed
by :mod:`creditflow.adapters.rabbitmq.paging_probe`, which runs inside the queue process.

Each scenario gets its own vhost, created after the scenario's RabbitMQ settings are put
into the ``rabbit`` app env (the msg_stores and the queue read them when they start),
and deleted afterwards; the app env is restored.

    >>> run = BrokerPagingRun(broker, load_scenario("small-embedded")).run()  # doctest: +SKIP
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from creditflow.adapters.rabbitmq.broker import BrokerError, PrivateBroker
from creditflow.adapters.rabbitmq.erlang import ErlangSession
from creditflow.adapters.rabbitmq.paging_probe import probe_expression, run_probe
from creditflow.conformance.families.paging.compare import Comparison, compare
from creditflow.conformance.inputs.paging_scenarios import Scenario, ScenarioStep

QUEUE_NAME = "cf-paging"


@dataclass
class StepObservation:
    """What the broker showed for one step: the settled snapshot, and for a ``target``
    step also the snapshot before and right after its single reduction pass."""

    index: int
    settled: dict[str, Any]
    how: str
    before: dict[str, Any] | None = None
    after_pass: dict[str, Any] | None = None
    #: the broker's rates right before the step (what its reductions used)
    rates_before: tuple[float, float, float, float] | None = None
    delivered: int = 0


@dataclass
class BrokerRun:
    vhost: str
    observations: list[StepObservation] = field(default_factory=list)


def _settings_erlang(scenario: Scenario) -> str:
    p = scenario.profile
    if p.gc_threshold is None:
        raise BrokerError("the broker needs an explicit gc threshold (profile 3.10.8)")
    credit = f"{{{p.store_credit.initial},{p.store_credit.more_after}}}"
    pairs = [
        ("queue_index_embed_msgs_below", str(p.embed_below)),
        ("msg_store_credit_disc_bound", credit),
        ("msg_store_io_batch_size", str(p.io_batch_size)),
        ("queue_index_segment_entry_count", str(p.segment_entries)),
        ("queue_explicit_gc_run_operation_threshold", str(p.gc_threshold)),
    ]
    return "[" + ", ".join(f"{{{k}, {v}}}" for k, v in pairs) + "]"


class BrokerPagingRun:
    """One scenario on one broker (a fresh vhost and queue)."""

    def __init__(self, broker: PrivateBroker, scenario: Scenario) -> None:
        problem = scenario.broker_problem()
        if problem is not None:
            raise BrokerError(f"{scenario.source}: cannot run on a broker: {problem}")
        self.broker = broker
        self.scenario = scenario
        self.vhost = f"cf-{scenario.name[:40]}-{secrets.token_hex(3)}"
        self.queue = QUEUE_NAME
        self._saved_env = ""
        self._session: ErlangSession | None = None

    def _eval(self, expression: str) -> str:
        assert self._session is not None
        return self._session.eval(expression)

    # -- set-up and tear-down -----------------------------------------------------------

    def _setup(self) -> None:
        settings = _settings_erlang(self.scenario)
        out = self._eval(
            f"Env = {settings}, "
            "Old = [{K, application:get_env(rabbit, K)} || {K, _} <- Env], "
            "[application:set_env(rabbit, K, V) || {K, V} <- Env], "
            f'ok = rabbit_vhost:add(<<"{self.vhost}">>, <<"creditflow">>), '
            'ok = rabbit_auth_backend_internal:set_permissions(<<"guest">>, '
            f'<<"{self.vhost}">>, <<".*">>, <<".*">>, <<".*">>, <<"creditflow">>), '
            'io:format("~w~n", [Old]), ok.'
        )
        self._saved_env = out.splitlines()[0].strip() if out else "[]"

    def _teardown(self) -> None:
        restore = (
            f"Old = {self._saved_env}, "
            "[case V of undefined -> application:unset_env(rabbit, K); "
            "{ok, X} -> application:set_env(rabbit, K, X) end || {K, V} <- Old], ok."
        )
        try:
            self._eval(f'rabbit_vhost:delete(<<"{self.vhost}">>, <<"creditflow">>), ok.')
        finally:
            if self._saved_env:
                self._eval(restore)

    # -- the run ------------------------------------------------------------------------

    def run(self) -> BrokerRun:
        result = BrokerRun(self.vhost)
        with ErlangSession(self.broker) as session:
            self._session = session
            try:
                self._run(result)
            finally:
                self._session = None
        return result

    def _run(self, result: BrokerRun) -> None:
        try:
            import pika
        except ImportError:
            raise BrokerError(
                "the AMQP client pika is not installed: pip install 'creditflow[broker]'"
            ) from None

        self._setup()
        try:
            params = self.broker.connection_parameters(virtual_host=self.vhost)
            connection = pika.BlockingConnection(params)
            try:
                channel = connection.channel()
                channel.confirm_delivery()
                channel.queue_declare(self.queue, durable=self.scenario.config.durable)
                self._steps(channel, result)
            finally:
                if connection.is_open:
                    connection.close()
        finally:
            self._teardown()

    def _steps(self, channel: Any, result: BrokerRun) -> None:
        outstanding: list[int] = []
        ready = 0
        last: dict[str, Any] | None = None
        for i, step in enumerate(self.scenario.steps, 1):
            rates = tuple(last["rates"]) if last is not None else (0.0, 0.0, 0.0, 0.0)
            delivered = 0
            if step.op == "target":
                probe = run_probe(
                    self._eval,
                    probe_expression(
                        self.vhost, self.queue, step.params["duration"], ready, len(outstanding)
                    ),
                )
                obs = StepObservation(
                    i,
                    probe["settled"],
                    probe["how"],
                    before=probe["before"],
                    after_pass=probe["pass"],
                    rates_before=tuple(probe["before"]["rates"]),
                )
            else:
                ready, delivered = self._amqp(channel, step, outstanding, ready)
                probe = run_probe(
                    self._eval,
                    probe_expression(self.vhost, self.queue, "read", ready, len(outstanding)),
                )
                obs = StepObservation(i, probe["settled"], probe["how"], rates_before=rates)
            obs.delivered = delivered
            result.observations.append(obs)
            last = obs.settled

    def _amqp(
        self, channel: Any, step: ScenarioStep, outstanding: list[int], ready: int
    ) -> tuple[int, int]:
        import pika

        p = step.params
        delivered = 0
        if step.op == "publish":
            props = pika.BasicProperties(delivery_mode=2 if p["persistent"] else 1)
            for size in step.message_sizes():  # PG-SIZES
                channel.basic_publish("", self.queue, b"\0" * size, props)
            ready += p["count"]
        elif step.op == "fetch":
            for _ in range(p["count"]):
                method, _props, _body = channel.basic_get(self.queue, auto_ack=not p["ack"])
                if method is None:
                    break
                delivered += 1
                ready -= 1
                if p["ack"]:
                    outstanding.append(method.delivery_tag)
        elif step.op in ("ack", "requeue"):
            n = p["count"]
            chosen = outstanding[:n] if p["from"] == "oldest" else outstanding[-n:][::-1]
            for tag in chosen:
                outstanding.remove(tag)
                if step.op == "ack":
                    channel.basic_ack(tag)
                else:
                    channel.basic_nack(tag, requeue=True)
                    ready += 1
        # rates and settle: nothing to do on the broker (rates are measured, and the
        # broker settles by itself; the probe waits for it)
        return ready, delivered


def compare_on_broker(broker: Any, scenario: Scenario, attempts: int = 2) -> Comparison:
    """Run ``scenario`` on ``broker`` (a started
    :class:`~creditflow.adapters.rabbitmq.broker.PrivateBroker`) and compare; a run the
    broker interfered with (PG-OBSERVE-INTERFERENCE) is repeated on a fresh vhost, up to
    ``attempts`` runs in all. Raises ``BrokerError`` when the broker fails."""
    comparison: Comparison | None = None
    for _ in range(max(1, attempts)):
        observations = BrokerPagingRun(broker, scenario).run().observations
        comparison = compare(scenario, observations)
        if not comparison.interference:
            break
    assert comparison is not None
    return comparison
