"""What RabbitMQ 3.10's AMQP 1.0 plugin (``rabbitmq_amqp1_0``) follows, in the model's
policy parameters (AD-AMQ-RMQ-POLICY), and the sizes the ``rabbitmq-amqp1.0`` adapter
accepts (AD-AMQ-RMQ-SETTINGS). Kept free of proton and of the broker so that the driver
and the adapter process share it.

Read from the 3.10.x plugin (``rabbit_amqp1_0_session``, ``rabbit_amqp1_0_incoming_link``,
``rabbit_amqp1_0_outgoing_link``, ``rabbit_amqp1_0_session_process``):

- outgoing link (the broker sends from a queue): credit only as the client grants it;
  ``credit = delivery-count(rcv) + link-credit(rcv) − delivery-count(snd)`` on plain
  integers (serial only while no count passes 2^31, which a broker-chosen count of 0
  does not reach in a run); every FLOW of the client's receiver is answered at once
  with a FLOW carrying the link's delivery-count, the new credit, ``available`` and
  the receiver's ``drain`` flag; a drain is answered by the queue (``credit_drained``)
  with a FLOW ``drain = true``, ``link-credit = 0`` and the delivery-count advanced:
  no application step (``drain_echo: auto``);
- incoming link (the broker receives): ``link-credit`` 65536 at attach, renewed to 65536
  after 32768 transfers (a credit window of 65536 renewed at 32768);
- session: ``incoming-window`` 65535, renewed to 65535 once at most 32767 is left (a
  fixed window of 65535 renewed at 32767); ``outgoing-window`` 65535.
"""

from __future__ import annotations

from typing import Any

#: AD-AMQ-RMQ-SETTINGS: what ``reset`` accepts, with the adapter's defaults: proton's
#: receiving end (``max_frame_size``, 0 = proton's default), the message size, and the
#: type of the link's queue (``quorum_queue`` 1: a quorum queue, 0: a classic one).
SETTINGS = {"max_frame_size": 0, "message_size": 10, "quorum_queue": 0}

#: AD-AMQ-RMQ-POLICY: the broker's own receiving direction (publish), 3.10.x.
INCOMING_CREDIT = {
    "policy": "window",
    "window": 65536,
    "threshold": 32768,
    "count": "credit",
    "encoding": "absolute",
    "renew_on": "arrival",
}
INCOMING_WINDOW = {"policy": "fixed", "window": 65535, "threshold": 32767}


def broker_policy(settings: dict[str, int]) -> dict[str, Any]:
    """AD-AMQ-RMQ-POLICY: the policies of the run's link (the broker's outgoing link to
    proton's receiver, AD-AMQ-RMQ-ENDS) in the model's terms (AMQ-POL-*), and the
    broker's receiving direction under ``x-incoming``."""
    return {
        # proton's receiver: credit by hand (Receiver.flow(n) adds n)
        "credit": {"policy": "manual"},
        # the broker's sender: §2.6.7's formula (plain integers: ``x-unwrapped``)
        "sender_credit": {"formula": "serial", "x-unwrapped": True},
        # proton's session window without a capacity: 2^31 − 1, not renewed
        "window": {"policy": "x-unbounded", "window": 2**31 - 1},
        # the queue answers a drain: no application step
        "drain_echo": "auto",
        "x-incoming": {"credit": INCOMING_CREDIT, "window": INCOMING_WINDOW},
    }
