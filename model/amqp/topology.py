"""The ``"family": "amqp"`` topology (AMQ-TOPOLOGY): one of the three shapes the
transition system runs, as a frozen structure. Pure: the documents it is read from are
checked by the input layer (``conformance/inputs/amqp_topologies.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from creditflow.model.amqp.endpoints import ReceiverConfig
from creditflow.model.amqp.policies import (
    QueuePolicy,
    RabbitLinkCredit,
    RelayPolicy,
    SenderCredit,
    WindowPolicy,
)

Shape = Literal["link", "publish", "consume"]


@dataclass(frozen=True)
class Topology:
    """A checked topology (AMQ-TOPOLOGY). ``supply`` is the sender's ``publishes`` (link,
    publish) or the queue's ``ready`` (consume)."""

    name: str
    shape: Shape
    initial: int
    supply: int
    sender_window: WindowPolicy  # the sending side's session policy (its incoming window)
    receiver: ReceiverConfig  # link, consume: the client receiver
    sender_credit: SenderCredit
    broker_window: WindowPolicy | None = (
        None  # publish: the broker session; consume: the broker session
    )
    broker_credit: RabbitLinkCredit | None = None  # publish
    relay: RelayPolicy | None = None  # consume
    queue: QueuePolicy | None = None  # publish, consume
