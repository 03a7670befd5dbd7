"""Credit specifications ``{InitialCredit, MoreCreditAfter}`` and their defaults (CF-DEFAULTS)."""

from __future__ import annotations

from typing import NamedTuple


class CreditSpec(NamedTuple):
    """A credit spec ``{InitialCredit, MoreCreditAfter}`` as RabbitMQ writes it (CF-SPEC)."""

    initial: int
    more_after: int

    def __str__(self) -> str:
        return f"{{{self.initial},{self.more_after}}}"

    @property
    def blocks(self) -> bool:
        """Whether ``send`` can ever block: only when ``InitialCredit >= 1`` (CF-DISABLED)."""
        return self.initial >= 1

    @property
    def grants(self) -> bool:
        """Whether ``ack`` can ever grant: only when ``MoreCreditAfter >= 1`` (CF-DISABLED)."""
        return self.more_after >= 1


#: CF-DEFAULTS: default credit spec per RabbitMQ version line (spec/sources.md §1.1).
DEFAULT_CREDIT_BY_VERSION: dict[str, CreditSpec] = {
    "3.1.0": CreditSpec(200, 50),
    "3.5.5": CreditSpec(200, 50),
    "3.6.6": CreditSpec(200, 100),
    "3.10.8": CreditSpec(400, 200),
}

#: CF-DEFAULTS: the module's own fallback in 3.10.8 when the app env is unset.
MODULE_FALLBACK_CREDIT = CreditSpec(200, 100)

#: CF-DEFAULTS: ``msg_store_credit_disc_bound`` per version (queue -> msg_store edge).
MSG_STORE_CREDIT_BY_VERSION: dict[str, CreditSpec] = {
    "3.1.0": CreditSpec(2000, 500),
    "3.5.5": CreditSpec(2000, 500),
    "3.6.6": CreditSpec(2000, 500),
    "3.10.8": CreditSpec(4000, 800),
}

DEFAULT_VERSION = "3.10.8"
DEFAULT_CREDIT = DEFAULT_CREDIT_BY_VERSION[DEFAULT_VERSION]
DEFAULT_MSG_STORE_CREDIT = MSG_STORE_CREDIT_BY_VERSION[DEFAULT_VERSION]

#: CF-STATE: how long ``credit_flow:state/0`` keeps reporting ``flow`` after block onset (ms).
FLOW_STATE_WINDOW_MS = 1000


def parse_credit(text: str) -> CreditSpec:
    """Parse ``"I,M"`` (or ``"{I,M}"``) into a :class:`CreditSpec`; raise ``ValueError``."""
    cleaned = text.strip().strip("{}[]() ")
    parts = [p.strip() for p in cleaned.split(",")]
    if len(parts) != 2:
        raise ValueError(f"credit spec must be 'I,M' (two integers), got {text!r}")
    try:
        return CreditSpec(int(parts[0]), int(parts[1]))
    except ValueError:
        raise ValueError(f"credit spec must be 'I,M' (two integers), got {text!r}") from None
