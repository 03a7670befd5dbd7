"""The ``rabbit-fifo`` adapter: RabbitMQ's quorum-queue state machine ``rabbit_fifo``
from the installed RabbitMQ's beams, driven by its own ``init/1`` and ``apply/3`` in an
Erlang VM (``adapters/erlang/rabbit_fifo_adapter.erl``, AD-AMQ-FIFO).

The rabbit ebin is found like the ``rabbitmq`` adapter's: ``--rabbitmq-ebin DIR``
(either the ``rabbit`` ebin or any ebin beside it in the plugins folder, e.g. the
``rabbit_common`` one ``--adapter rabbitmq`` takes), ``CREDITFLOW_RABBITMQ_EBIN``, then
the Debian layout. ``ra`` and ``rabbit_common`` are loaded from the same plugins folder.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from creditflow.adapters.rabbitmq.module import ENV_EBIN, ERL_FLAGS, compiled_module_dir
from creditflow.conformance.differential.adapter import MISSING, PROTOCOL, AdapterFailure
from creditflow.conformance.differential.amqp_protocol import AmqpAdapter
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT

NAME = "rabbit-fifo"
MODULE = "rabbit_fifo_adapter"
DEBIAN_GLOB = "/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins/rabbit-*/ebin"
INSTALL_HINT = (
    "install it with `sudo apt-get install rabbitmq-server` (`make test` does it) or pass "
    "--rabbitmq-ebin DIR (the rabbit ebin holding rabbit_fifo.beam, or an ebin beside it)"
)


def _version_key(path: str) -> tuple[int, ...]:
    match = re.search(r"/rabbit-([0-9.]+)/ebin", path)
    return tuple(int(x) for x in match.group(1).strip(".").split(".")) if match else ()


def _rabbit_ebin(folder: Path) -> Path | None:
    """``folder`` if it holds ``rabbit_fifo.beam``, else the ``rabbit-*`` ebin beside it."""
    if (folder / "rabbit_fifo.beam").is_file():
        return folder
    plugins = folder.resolve().parent.parent
    found = sorted(glob.glob(str(plugins / "rabbit-*" / "ebin")), key=_version_key)
    found = [f for f in found if (Path(f) / "rabbit_fifo.beam").is_file()]
    return Path(found[-1]) if found else None


def locate_rabbit_ebin(explicit: str | Path | None = None) -> Path:
    """The ebin holding ``rabbit_fifo.beam``; :class:`AdapterFailure` (missing) with the
    install hint otherwise."""
    given = explicit if explicit is not None else os.environ.get(ENV_EBIN)
    if given:
        found = _rabbit_ebin(Path(given))
        if found is None:
            raise AdapterFailure(
                NAME, MISSING, f"--rabbitmq-ebin {given}: no rabbit_fifo.beam there or beside it"
            )
        return found
    candidates = sorted(glob.glob(DEBIAN_GLOB), key=_version_key)
    candidates = [c for c in candidates if (Path(c) / "rabbit_fifo.beam").is_file()]
    if candidates:
        return Path(candidates[-1])
    raise AdapterFailure(NAME, MISSING, "RabbitMQ's rabbit_fifo is not installed; " + INSTALL_HINT)


def command(ebin: Path) -> list[str]:
    """The command line that starts the adapter on ``ebin`` (both Erlang modules compiled
    once into the cache: this one and credit_flow_adapter, whose JSON codec it uses)."""
    erl = shutil.which("erl")
    source = Path(str(resources.files("creditflow.adapters") / "erlang" / f"{MODULE}.erl"))
    codec = compiled_module_dir()
    own = compiled_module_dir(source, MODULE)
    if erl is None or codec is None or own is None:
        raise AdapterFailure(NAME, MISSING, "Erlang (erl, erlc) is not installed; " + INSTALL_HINT)
    return [
        erl,
        "-noshell",
        "-noinput",
        *ERL_FLAGS,
        "-pa",
        str(codec),
        "-pa",
        str(own),
        "-run",
        MODULE,
        "main",
        str(ebin),
    ]


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
