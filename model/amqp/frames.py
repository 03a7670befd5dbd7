"""Frames on the model's wires (AMQ-TS): FIFO tuples of these. Each carries a ``tag``
so that frames of different kinds never compare equal."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.amqp.link import LinkFlow
from creditflow.model.amqp.session import SessionFlow


class Transfer(NamedTuple):
    """A TRANSFER of message ``seq`` (one frame; its transfer id is implicit, §2.5.6)."""

    seq: int
    tag: str = "transfer"


class Flow(NamedTuple):
    """A FLOW (§2.7.4): session fields and/or the fields of the one link."""

    session: SessionFlow | None
    link: LinkFlow | None
    tag: str = "flow"


class Disposition(NamedTuple):
    """The receiver settled message ``seq`` (accepted)."""

    seq: int
    tag: str = "disposition"


class CreditRequest(NamedTuple):
    """The relay's credit command to the queue (AMQ-RMQ-RELAY, AMQ-QQ-CREDITED)."""

    delivery_count: int
    credit: int
    drain: bool
    tag: str = "credit"


class CreditReply(NamedTuple):
    """The queue's ``credit_reply`` (AMQ-QQ-CREDITED)."""

    delivery_count: int
    credit: int
    available: int
    drain: bool
    tag: str = "credit_reply"


class Delivery(NamedTuple):
    """A delivery of message ``seq`` from the queue to the session (AMQ-QQ-CHECKOUT)."""

    seq: int
    tag: str = "delivery"


class Settle(NamedTuple):
    """The session settles message ``seq`` at the queue (AMQ-QQ-SETTLE)."""

    seq: int
    tag: str = "settle"


Frame = Transfer | Flow | Disposition | CreditRequest | CreditReply | Delivery | Settle
Wire = tuple[Frame, ...]
