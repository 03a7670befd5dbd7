"""RabbitMQ's per-process ``credit_flow`` (CF-*): credit specifications and the pure
per-process API (send, ack, bump, block, unblock, peer_down), one implementation that
every other model calls."""

from creditflow.model.credit.flow import ProcessCredit
from creditflow.model.credit.spec import (
    DEFAULT_CREDIT,
    DEFAULT_CREDIT_BY_VERSION,
    DEFAULT_MSG_STORE_CREDIT,
    MODULE_FALLBACK_CREDIT,
    MSG_STORE_CREDIT_BY_VERSION,
    CreditSpec,
    parse_credit,
)

__all__ = [
    "CreditSpec",
    "DEFAULT_CREDIT",
    "DEFAULT_CREDIT_BY_VERSION",
    "DEFAULT_MSG_STORE_CREDIT",
    "MODULE_FALLBACK_CREDIT",
    "MSG_STORE_CREDIT_BY_VERSION",
    "ProcessCredit",
    "parse_credit",
]
