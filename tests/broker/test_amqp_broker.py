"""AD-AMQ-RMQ: the installed RabbitMQ broker's AMQP 1.0 plugin, end to end, against the
model. One private broker with ``rabbitmq_amqp1_0`` enabled serves the whole module
(AD-AMQ-RMQ-BROKER); every run has queues of its own.

The findings are pinned to the release they were found in (3.10.8): on another release
the pinned tests are skipped, saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from creditflow.adapters.amqp.rabbitmq_plugin import (
    NAME,
    PORT_VARIABLE,
    BrokerAmqpAdapter,
    factory,
    start_broker,
)
from creditflow.adapters.amqp.rabbitmq_policy import broker_policy
from creditflow.conformance import exit_codes
from creditflow.conformance.families.amqp.conform import (
    REFUSED_RULE,
    AmqpOp,
    AmqpRun,
    run_ops,
)

pytestmark = [pytest.mark.broker, pytest.mark.xdist_group("broker")]

PINNED = "3.10.8"
TRANSFER, DRAIN = AmqpOp("transfer"), AmqpOp("drain", credit=1)
FLOW1, FLOW2, SETTLE = (
    AmqpOp("flow", credit=1),
    AmqpOp("flow", credit=2),
    AmqpOp("settle", number=1),
)
CLASSIC, QUORUM = {"quorum_queue": 0}, {"quorum_queue": 1}


@pytest.fixture(scope="module")
def broker_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """AD-AMQ-RMQ-BROKER: one private broker with the AMQP 1.0 plugin for the module."""
    broker, _version = start_broker(tmp_path_factory.mktemp("amqp-broker"))
    try:
        yield broker.amqp_port
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def adapter(broker_port: int) -> Iterator[BrokerAmqpAdapter]:
    a = factory(port=broker_port)()
    assert isinstance(a, BrokerAmqpAdapter)
    try:
        yield a
    finally:
        a.close()


@pytest.fixture()
def pinned(adapter: BrokerAmqpAdapter) -> None:
    version = adapter.info["version"]
    if version != PINNED:
        pytest.skip(f"finding pinned to RabbitMQ {PINNED}; the installed broker is {version}")


def _frames(adapter: BrokerAmqpAdapter, req: dict) -> list[dict]:
    """The frames the broker sent for ``req`` (side ``client``, AD-AMQ-RMQ-ENDS)."""
    got = adapter.step(req)
    return [f for f in got.frames if f["side"] == "client" and f["dir"] == "sent"]


def test_hello_names_the_release_and_the_plugins_policy(adapter: BrokerAmqpAdapter) -> None:
    """AD-AMQ-RMQ-HELLO, AD-AMQ-RMQ-POLICY: the version from the broker's OPEN, every op
    but ``offered``, the declared policy with the broker's drain answer."""
    info = adapter.info
    assert info["name"] == f"{NAME} {info['version']}"
    assert info["families"] == ["amqp"]
    assert "offered" not in info["ops"] and "drain" in info["ops"]
    assert info["policy"] == broker_policy(info["settings"])
    assert info["policy"]["drain_echo"] == "auto"


def test_the_broker_s_frames_show_its_fixed_sizes(adapter: BrokerAmqpAdapter, pinned: None) -> None:
    """AD-AMQ-RMQ-POLICY, AD-AMQ-RMQ-FRAMES: 3.10.8's session answers BEGIN with windows of
    65535, attaches its sending end with delivery-count 0, and answers every FLOW of the
    receiver at once with the link's delivery-count, the new credit and ``available``."""
    adapter.step({"op": "reset", "settings": CLASSIC})
    (begin,) = _frames(adapter, {"op": "begin", "session": "s"})
    assert (begin["incoming-window"], begin["outgoing-window"]) == (65535, 65535)
    (attach,) = _frames(adapter, {"op": "attach", "session": "s", "link": "L"})
    assert (attach["role"], attach["initial-delivery-count"]) == ("sender", 0)
    adapter.step({"op": "transfer", "link": "L"})
    flow, transfer = _frames(adapter, {"op": "flow", "link": "L", "credit": 2})
    assert flow["frame"] == "flow" and transfer["frame"] == "transfer"
    assert (flow["delivery-count"], flow["link-credit"], flow["available"]) == (0, 2, 1)
    assert flow["drain"] is False


def test_credit_by_hand_matches_the_model_on_both_queue_types(adapter: BrokerAmqpAdapter) -> None:
    """AD-AMQ-CONFORM-COMPARE through AD-AMQ-RMQ: without drains the broker delivers exactly
    the credit granted, in the model's counts, on a classic and a quorum queue. Each
    ``transfer`` is a publish confirmed before the op answers (AD-AMQ-RMQ-OPS), and every
    op's state is observed at rest (AD-AMQ-RMQ-QUIESCE): a delivery that came after the
    quiet period would show here as a count the model does not have."""
    ops = [TRANSFER, TRANSFER, TRANSFER, FLOW2, SETTLE, FLOW1]
    for settings in (CLASSIC, QUORUM):
        run = run_ops(adapter, settings, ops)
        assert run.verdict == "pass", (settings, run)
        assert len(run.ops) == len(ops)


def _lines(run: AmqpRun) -> str:
    return "; ".join(f"{d.field} {d.model}/{d.implementation}" for d in run.diffs)


def test_3_10_8_drain_on_a_classic_queue_ends_the_session(
    adapter: BrokerAmqpAdapter, pinned: None
) -> None:
    """Finding (AD-AMQ-RMQ-ENDED): a drain on a link from a classic queue crashes the
    broker's channel (``rabbit_classic_queue:handle_event`` has no clause for the
    ``send_drained`` list format): the session ends with ``amqp:internal-error``.
    Upstream: rabbitmq/rabbitmq-server#7119, fixed by #7141 (backported to v3.10.x)."""
    run = run_ops(adapter, CLASSIC, [DRAIN])
    assert run.verdict == "diverged" and run.index == 0, _lines(run)
    assert [d.field for d in run.diffs] == ["drain refused"]
    (refusal,) = run.violations
    assert refusal.rule == REFUSED_RULE
    assert "amqp:internal-error" in refusal.message and "send_drained" in refusal.message


def test_3_10_8_quorum_queue_drain_echo_overtakes_the_delivery(
    adapter: BrokerAmqpAdapter, pinned: None
) -> None:
    """Finding: on a quorum queue, a drain with a message ready is answered by the FLOW
    ``drain = true``, ``link-credit = 0`` with the delivery-count not advanced, and only
    then the message arrives: a transfer without link credit (``no-credit``), a delivery
    beyond the receiver's credit (``over-delivery``, PROP-AMQ-CREDIT, PROP-AMQ-NONNEG),
    credit −1 on the wire where the model has 0."""
    run = run_ops(adapter, QUORUM, [TRANSFER, DRAIN])
    assert run.verdict == "diverged" and run.index == 1, _lines(run)
    diffs = {d.field: (d.model, d.implementation) for d in run.diffs}
    assert diffs["sender.credit"] == (0, -1) and diffs["receiver.credit"] == (0, -1)
    assert {"no-credit", "over-delivery"} <= {v.rule for v in run.violations}


def test_3_10_8_quorum_queue_grant_after_a_drain_is_short_by_the_drained_credit(
    adapter: BrokerAmqpAdapter, pinned: None
) -> None:
    """Finding: on a quorum queue, after a drain of 1 credit (delivery-count advanced to
    1), a grant of 2 lets only one message through: the link shows credit 1 and a
    message waits in the queue (the queue's credit is n − drained: 3.10.8's
    ``rabbit_fifo_client:credit/4`` passes the last message id + 1 as the receiver's
    delivery-count, AD-AMQ-FIFO's finding (4), here end to end)."""
    run = run_ops(adapter, QUORUM, [DRAIN, FLOW2, TRANSFER, TRANSFER])
    assert run.verdict == "diverged" and run.index == 3, _lines(run)
    diffs = {d.field: (d.model, d.implementation) for d in run.diffs}
    assert diffs["sender.delivery_count"] == (3, 2)
    assert diffs["receiver.credit"] == (0, 1)


def _conform(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "creditflow.conformance.cli",
            "conform",
            "--adapter",
            NAME,
            "--seed",
            "1",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )


def test_conform_exit_1_with_the_shortest_trace(broker_port: int, pinned: None) -> None:
    """AD-AMQ-CONFORM-VERDICT, AD-AMQ-CONFORM-EXPLORE through AD-AMQ-RMQ: ``creditflow
    conform --adapter rabbitmq-amqp1.0`` finds the one-op trace ``drain 1`` (classic
    queue first) and prints the broker's error under it; exit 1. The explorer's phase
    only: every op against the broker waits for the socket to be quiet
    (AD-AMQ-RMQ-QUIESCE), so Hypothesis's 60 examples of up to 25 ops take minutes."""
    env = {**os.environ, PORT_VARIABLE: str(broker_port)}
    done = _conform("--depth", "1", "--phase", "explorer-runs", env=env)
    assert done.returncode == exit_codes.DIVERGENCE, done.stdout + done.stderr
    assert "shortest failing trace: 1 op (sizes: quorum_queue 0)" in done.stdout
    assert ">  1  drain 1" in done.stdout
    assert "refused (L): drain: the broker ended the session with amqp:internal-error" in (
        done.stdout
    )


def test_3_10_8_receiving_side_windows_are_renewed_after_32768_transfers(
    broker_port: int, pinned: None
) -> None:
    """AD-AMQ-RMQ-POLICY ``x-incoming``, on the wire: the broker's session advertises an
    incoming window of 65535 and its receiving link 65536 credit, whose first FLOW carries
    no delivery-count; after 32768 transfers both are renewed (a credit window of 65536
    renewed at 32768, a fixed window of 65535 renewed at 32767), the link's FLOW with
    delivery-count 32768, and not before."""
    from proton import Endpoint, Link, Message, Transport

    from creditflow.adapters.amqp.rabbitmq_client import Wire
    from creditflow.adapters.amqp.rabbitmq_policy import SETTINGS

    frames: list[dict] = []
    wire = Wire(broker_port, SETTINGS, frames)
    try:
        ssn = wire.conn.session()
        ssn.open()
        snd = ssn.sender("pub")
        snd.target.address = "/queue/cf-incoming-windows"
        snd.snd_settle_mode = Link.SND_SETTLED
        snd.open()
        wire.pump(lambda: snd.state & Endpoint.REMOTE_ACTIVE and snd.credit > 0, quiet=0.1)
        # what proton received is what the broker sent (AD-AMQ-RMQ-FRAMES)
        got = [f for f in frames if f["side"] == "server" and f["dir"] == "received"]
        (begin,) = [f for f in got if f["frame"] == "begin"]
        assert begin["incoming-window"] == 65535
        (grant,) = [f for f in got if f["frame"] == "flow"]
        assert grant["link-credit"] == 65536 and "delivery-count" not in grant
        body = Message(body=b"x").encode()

        def publish(i: int) -> None:
            dlv = snd.delivery(str(i).encode())
            snd.send(body)
            snd.advance()
            dlv.settle()
            if i % 256 == 0:
                wire._move(0.0)

        wire.transport.trace(Transport.TRACE_OFF)  # 32767 transfers, untraced (speed)
        for i in range(32767):
            publish(i)
        wire.pump(quiet=0.3)
        assert snd.credit == 65536 - 32767  # no renewal yet: proton's credit is the grant's
        wire.transport.trace(Transport.TRACE_FRM)
        frames.clear()
        publish(32767)
        wire.pump(quiet=0.3)
        flows = [f for f in frames if f["frame"] == "flow" and f["side"] == "server"]
        flows = [f for f in flows if f["dir"] == "received"]
        link = [f for f in flows if "handle" in f]
        session = [f for f in flows if "handle" not in f]
        assert [(f["delivery-count"], f["link-credit"]) for f in link] == [(32768, 65536)]
        assert [f["incoming-window"] for f in session] == [65535]
        assert session[0]["next-incoming-id"] == 32768
    finally:
        wire.close()
