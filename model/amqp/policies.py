"""The flow-control policies, as parameters (AMQ-POL and its sub-rules).

Every implementation is one choice of these: a receiving link endpoint's credit policy,
a session endpoint's incoming-window policy, a sender's reading of a FLOW, the relay's
cap and the quorum queue's configuration. All are frozen dataclasses; the rules that
use them live in :mod:`link`, :mod:`session`, :mod:`relay` and :mod:`queue`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class CreditWindow:
    """A fixed credit window renewed at a threshold (AMQ-POL-CREDIT-WINDOW).

    ``count = "since_grant"`` counts arrivals since the last grant (any later grant
    resets it); ``count = "outstanding"`` renews when credit plus unsettled deliveries
    is at most the threshold, to the full window (amqp10_client's
    ``flow_link_credit(Link, W, RenewWhen)``, AD-AMQ-10-POLICY); ``encoding = "delta"``
    sends the increment where §2.7.4 wants the absolute credit; ``renew_on = "settle"``
    renews as the application settles."""

    window: int
    threshold: int
    count: Literal["credit", "since_grant", "outstanding"] = "credit"
    encoding: Literal["absolute", "delta"] = "absolute"
    renew_on: Literal["arrival", "settle"] = "arrival"

    def __post_init__(self) -> None:
        if self.window < 1 or not 0 <= self.threshold < self.window:
            raise ValueError(f"credit window needs window ≥ 1 and 0 ≤ threshold < window: {self}")
        if self.count not in ("credit", "since_grant", "outstanding"):
            raise ValueError(
                f"count must be 'credit', 'since_grant' or 'outstanding', not {self.count!r}"
            )
        if self.encoding not in ("absolute", "delta"):
            raise ValueError(f"encoding must be 'absolute' or 'delta', not {self.encoding!r}")
        if self.renew_on not in ("arrival", "settle"):
            raise ValueError(f"renew_on must be 'arrival' or 'settle', not {self.renew_on!r}")


@dataclass(frozen=True)
class RabbitLinkCredit:
    """RabbitMQ 4's inbound link credit (AMQ-RMQ-LINK-CREDIT): grant ``max_link_credit``
    when the credit is at most half and fewer than ``max_link_credit`` are unconfirmed."""

    max_link_credit: int = 170

    def __post_init__(self) -> None:
        if self.max_link_credit < 1:
            raise ValueError("max_link_credit must be ≥ 1")


GrantDrain = Literal["keep", "clear", "sticky"]
"""AMQ-POL-GRANT-DRAIN: the drain flag a hand grant's FLOW carries. §2.7.4 leaves it to
the receiver (the latest FLOW's flag is its current choice): ``keep`` (the model's
default) the drain asked so far, ``clear`` a grant cancels the drain, ``sticky`` every
grant after a first drain asks for a drain again."""
GRANT_DRAIN: tuple[GrantDrain, ...] = ("keep", "clear", "sticky")

CreditPolicy = CreditWindow | RabbitLinkCredit | None
"""A receiving endpoint's automatic credit policy; ``None``: credit only by hand
(AMQ-POL-CREDIT-MANUAL)."""


@dataclass(frozen=True)
class SenderCredit:
    """How a sender reads a FLOW (AMQ-POL-SENDER-CREDIT)."""

    formula: Literal["serial", "ignore_in_flight"] = "serial"


@dataclass(frozen=True)
class WindowFixed:
    """A session window renewed to ``window`` when at most ``threshold`` is left
    (AMQ-POL-WINDOW-FIXED)."""

    window: int
    threshold: int

    def __post_init__(self) -> None:
        if self.window < 1 or not 0 <= self.threshold < self.window:
            raise ValueError(f"window needs window ≥ 1 and 0 ≤ threshold < window: {self}")


@dataclass(frozen=True)
class WindowNever:
    """A session window of ``window`` never renewed (AMQ-POL-WINDOW-NEVER)."""

    window: int


@dataclass(frozen=True)
class WindowRing:
    """A session buffer of ``slots`` slots freed only in order (AMQ-POL-WINDOW-RING)."""

    slots: int


@dataclass(frozen=True)
class WindowCapacity:
    """A window derived from a byte capacity and the frame size (AMQ-POL-WINDOW-CAPACITY)."""

    capacity: int
    frame: int

    def __post_init__(self) -> None:
        if self.frame < 1 or self.capacity < 0:
            raise ValueError("capacity ≥ 0 and frame ≥ 1 required")


@dataclass(frozen=True)
class RabbitSessionWindow:
    """RabbitMQ 4's session incoming window (AMQ-RMQ-SESSION-WINDOW): refilled to
    ``max_incoming_window`` when at most half is left."""

    max_incoming_window: int = 400

    def __post_init__(self) -> None:
        if self.max_incoming_window < 1:
            raise ValueError("max_incoming_window must be ≥ 1")


WindowPolicy = WindowFixed | WindowNever | WindowRing | WindowCapacity | RabbitSessionWindow


@dataclass(frozen=True)
class RelayPolicy:
    """RabbitMQ 4's outbound relay (AMQ-RMQ-RELAY)."""

    max_queue_credit: int = 256


@dataclass(frozen=True)
class QueuePolicy:
    """The quorum-queue end (AMQ-QQ-OVERFLOW, AMQ-QQ-SOFT-LIMIT, AMQ-QQ-PREFETCH).

    ``go_on_limit_removed = False`` is an implementation without the clause of
    ``evaluate_limit0/4`` that lets enqueuers go when the limit is deleted."""

    max_length: int | None = None
    soft_limit: int = 32
    limit_removable: bool = False
    go_on_limit_removed: bool = True
    consumes: bool = False
    consumer_mode: Literal["credited", "simple_prefetch"] = "credited"
    prefetch: int = 0
    low_limit: float = 0.8
    #: AMQ-FAULT-LEADER-CHANGE: leader changes that may re-send an applied credit request
    leader_changes: int = 0


RABBITMQ4_DEFAULTS = {
    "max_incoming_window": 400,
    "max_link_credit": 170,
    "max_queue_credit": 256,
    "quorum_commands_soft_limit": 32,
}
"""RabbitMQ 4's numbers (AMQ-RMQ-DEFAULTS)."""
