"""The ``rabbit-fifo`` adapter: RabbitMQ's quorum-queue state machine ``rabbit_fifo``
from the installed RabbitMQ's beams, driven by its own ``init/1`` and ``apply/3`` in an
Erlang VM (``adapters/erlang/rabbit_fifo_adapter.erl``, AD-AMQ-FIFO).

The rabbit ebin is found like the ``rabbitmq`` adapter's: ``--rabbitmq-ebin DIR``
(either the ``rabbit`` ebin or any ebin beside it in the plugins folder, e.g. the
``rabbit_common`` one ``--adapter rabbitmq`` takes), ``CREDITFLOW_RABBITMQ_EBIN``, then
the Debian layout. ``ra`` and ``rabbit_common`` are loaded from the same plugins folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.adapters.amqp.erlang_half import ErlangHalf
from creditflow.conformance.differential.adapter import PROTOCOL
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT
from creditflow.conformance.families.amqp.protocol import AmqpAdapter

NAME = "rabbit-fifo"
MODULE = "rabbit_fifo_adapter"
INSTALL_HINT = (
    "install it with `sudo apt-get install rabbitmq-server` (`make test` does it) or pass "
    "--rabbitmq-ebin DIR (the rabbit ebin holding rabbit_fifo.beam, or an ebin beside it)"
)


_HALF = ErlangHalf(NAME, "rabbit", "rabbit_fifo.beam", MODULE, INSTALL_HINT)


def locate_rabbit_ebin(explicit: str | Path | None = None) -> Path:
    """The ebin holding ``rabbit_fifo.beam``; :class:`AdapterFailure` (missing) with the
    install hint otherwise."""
    return _HALF.locate_ebin(explicit, "no rabbit_fifo.beam there or beside it", "rabbit_fifo")


def command(ebin: Path) -> list[str]:
    """The command line that starts the adapter on ``ebin``."""
    return _HALF.command(ebin)


@dataclass(frozen=True)
class FifoReply:
    """One command's outcome (AD-AMQ-FIFO-REPLY): the machine's reply, its effects
    normalised, and its state afterwards."""

    reply: Any
    effects: tuple[dict[str, Any], ...]
    state: dict[str, Any]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The effects of one kind (``delivery``, ``queue_status``, …)."""
        return [e for e in self.effects if e.get("effect") == kind]


class RabbitFifoAdapter(AmqpAdapter):
    """RabbitMQ's ``rabbit_fifo`` behind the ``amqp`` family's queue commands
    (AD-AMQ-FIFO)."""

    def __init__(self, ebin: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.ebin = locate_rabbit_ebin(ebin)
        super().__init__(command(self.ebin), name=NAME, timeout=timeout)

    def apply(self, op: str, **fields: Any) -> FifoReply:
        """Apply one command (AD-AMQ-FIFO-OPS); refused ops raise :class:`AdapterFailure`."""
        reply = self.step({"op": op, **fields})
        effects = reply.extra.get("effects")
        if not isinstance(effects, list):
            self._fail(PROTOCOL, f"{op}: reply lacks effects (AD-AMQ-FIFO-REPLY)")
        return FifoReply(reply.extra.get("reply"), tuple(effects or ()), reply.state)

    def reset(self, **settings: Any) -> FifoReply:
        """A fresh queue with the given settings (AD-AMQ-FIFO-SETTINGS)."""
        return self.apply("reset", settings=settings)
