"""What the AMQP adapters with an Erlang half share (AD-AMQ-10, AD-AMQ-FIFO): finding one
RabbitMQ application's ebin in the installed plugins folder, and the command line that
starts an adapter module from ``adapters/erlang/`` in an Erlang VM, with
``cf_amqp_half.erl`` (the JSON Lines loop and record layouts the halves share).

The ebin is ``--rabbitmq-ebin DIR`` (the application's ebin, or any ebin beside it in
the plugins folder), else ``CREDITFLOW_RABBITMQ_EBIN``, else the newest in the Debian
layout.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from creditflow.adapters.rabbitmq.module import ENV_EBIN, ERL_FLAGS, compiled_module_dir
from creditflow.conformance.differential.adapter import MISSING, AdapterFailure

PLUGINS_GLOB = "/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins"
#: The Erlang module the halves share: the JSON Lines loop, record layouts.
SHARED = "cf_amqp_half"


def _source(module: str) -> Path:
    return Path(str(resources.files("creditflow.adapters") / "erlang" / f"{module}.erl"))


@dataclass(frozen=True)
class ErlangHalf:
    """One adapter's Erlang half: the adapter's ``name``, the RabbitMQ application ``app``
    whose ebin holds ``beam``, the adapter's Erlang ``module`` and the install hint."""

    name: str
    app: str
    beam: str
    module: str
    install_hint: str

    def _version_key(self, path: str) -> tuple[int, ...]:
        match = re.search(rf"/{re.escape(self.app)}-([0-9.]+)/ebin", path)
        return tuple(int(x) for x in match.group(1).strip(".").split(".")) if match else ()

    def _newest(self, pattern: str) -> Path | None:
        found = sorted(glob.glob(pattern), key=self._version_key)
        found = [f for f in found if (Path(f) / self.beam).is_file()]
        return Path(found[-1]) if found else None

    def ebin_at(self, folder: Path) -> Path | None:
        """``folder`` if it holds the beam, else the application's ebin beside it."""
        if (folder / self.beam).is_file():
            return folder
        return self._newest(str(folder.resolve().parent.parent / f"{self.app}-*" / "ebin"))

    def locate_ebin(self, explicit: str | Path | None, absent: str, missing: str) -> Path:
        """The ebin holding the beam; :class:`AdapterFailure` (missing, exit 3) otherwise:
        ``--rabbitmq-ebin DIR: {absent}`` for a folder given, ``RabbitMQ's {missing} is
        not installed`` with the install hint for none found."""
        given = explicit if explicit is not None else os.environ.get(ENV_EBIN)
        if given:
            found = self.ebin_at(Path(given))
            if found is None:
                raise AdapterFailure(self.name, MISSING, f"--rabbitmq-ebin {given}: {absent}")
            return found
        found = self._newest(f"{PLUGINS_GLOB}/{self.app}-*/ebin")
        if found is not None:
            return found
        raise AdapterFailure(
            self.name,
            MISSING,
            f"RabbitMQ's {missing} is not installed; " + self.install_hint,
        )

    def command(self, ebin: Path) -> list[str]:
        """The Erlang half's command line on ``ebin`` (the modules compiled once into the
        cache: the adapter's, credit_flow_adapter, whose JSON codec it uses, and
        cf_amqp_half, what the halves share)."""
        erl = shutil.which("erl")
        codec = compiled_module_dir()
        own = compiled_module_dir(_source(self.module), self.module)
        shared = compiled_module_dir(_source(SHARED), SHARED)
        if erl is None or codec is None or own is None or shared is None:
            raise AdapterFailure(
                self.name, MISSING, "Erlang (erl, erlc) is not installed; " + self.install_hint
            )
        paths = [arg for folder in (codec, own, shared) for arg in ("-pa", str(folder))]
        return [erl, "-noshell", "-noinput", *ERL_FLAGS, *paths] + [
            "-run",
            self.module,
            "main",
            str(ebin),
        ]
