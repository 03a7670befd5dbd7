"""Adapters by name, for the CLI and the pytest plugin (``--adapter NAME``) and for
any command speaking the protocol (``--adapter-cmd CMD``, AD-CMD)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from creditflow.adapters.amqp import versions as amqp_versions
from creditflow.adapters.amqp.amqp10_client import NAME as AMQP10_CLIENT
from creditflow.adapters.amqp.amqp10_client import Amqp10ClientAdapter
from creditflow.adapters.amqp.rabbit_fifo import NAME as RABBIT_FIFO
from creditflow.adapters.amqp.rabbit_fifo import RabbitFifoAdapter
from creditflow.adapters.amqp.rabbitmq_plugin import NAME as RABBITMQ_AMQP10
from creditflow.adapters.amqp.rabbitmq_plugin import factory as rabbitmq_amqp10_factory
from creditflow.adapters.amqp.reference import MUTANTS as amqp_mutants_table
from creditflow.adapters.mutants import mutants
from creditflow.adapters.rabbitmq.module import RabbitMQAdapter
from creditflow.adapters.reference.credit_flow import ReferenceAdapter
from creditflow.conformance.differential.adapter import CRASH, Adapter, AdapterFailure
from creditflow.conformance.differential.subprocess import DEFAULT_TIMEOUT, SubprocessAdapter
from creditflow.conformance.families.amqp.protocol import AmqpAdapter

#: The built-in adapters and what they run.
BUILTIN = {
    "reference": "the Python model, in-process",
    "reference-process": "the Python model as a protocol subprocess (tests the driver)",
    "python-template": "adapters/python_template.py, the documented template, as a subprocess",
    "rabbitmq": "the REAL credit_flow module of the installed RabbitMQ, in an Erlang VM",
}
MUTANT_PREFIX = "mutant:"


class UnknownAdapter(ValueError):
    """An ``--adapter`` name that is not known (a usage error)."""


def adapter_names() -> dict[str, str]:
    """Every name ``--adapter`` accepts, with a description."""
    names = dict(BUILTIN)
    for m in mutants().values():
        names[MUTANT_PREFIX + m.name] = f"mutant: {m.fault}"
    return names


def adapter_factory(
    name: str, *, rabbitmq_ebin: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Callable[[], Adapter]:
    """A function that starts the named adapter (so that a failure to start is
    reported as an adapter failure, exit 3); :class:`UnknownAdapter` at once if the
    name is unknown."""
    if name == "reference":
        return ReferenceAdapter
    if name == "reference-process":
        argv = [sys.executable, "-m", "creditflow.adapters.reference.server"]
        return lambda: SubprocessAdapter(argv, name=name, timeout=timeout)
    if name == "python-template":
        argv = [sys.executable, "-m", "creditflow.adapters.python_template"]
        return lambda: SubprocessAdapter(argv, name=name, timeout=timeout)
    if name == "rabbitmq":
        return lambda: RabbitMQAdapter(rabbitmq_ebin, timeout=timeout)
    if name.startswith(MUTANT_PREFIX):
        mutant = mutants().get(name.removeprefix(MUTANT_PREFIX))
        if mutant is not None:
            return lambda: SubprocessAdapter(mutant.command(), name=name, timeout=timeout)
    raise UnknownAdapter(
        f"unknown adapter {name!r} (known: {', '.join(BUILTIN)}, mutant:NAME; "
        "see `creditflow adapters`)"
    )


def command_factory(command: str, timeout: float = DEFAULT_TIMEOUT) -> Callable[[], Adapter]:
    """AD-CMD: a command line (split like a POSIX shell) that speaks the protocol."""
    argv = shlex.split(command)
    if not argv:
        raise UnknownAdapter("--adapter-cmd is empty")
    # AD-HELLO: the adapter is labelled, and its traces named, by its hello name
    return lambda: SubprocessAdapter(argv, timeout=timeout)


#: AD-AMQ-VERSION: the adapters of the ``amqp`` family; ``NAME@VERSION`` picks a release.
AMQP_BUILTIN = {
    "proton": f"python-qpid-proton (pinned {amqp_versions.PINNED['proton']}), two connections "
    "pumped in memory",
    "rhea": f"rhea (pinned {amqp_versions.PINNED['rhea']}), client and server in one Node "
    "process over loopback",
    "azure-pyamqp": f"azure-servicebus' pure-Python AMQP stack _pyamqp (pinned "
    f"{amqp_versions.PINNED['azure-pyamqp']}), two connections joined in memory (AD-AMQ-AZURE)",
    "amqp-reference": "the pure-Python AMQP reference (AD-AMQ-REFERENCE); "
    "amqp-reference:mutant:NAME for a mutant",
    RABBIT_FIFO: "RabbitMQ's quorum-queue state machine rabbit_fifo from the installed beams "
    "(or --rabbitmq-ebin DIR), driven by apply/3 in an Erlang VM (AD-AMQ-FIFO)",
    AMQP10_CLIENT: "RabbitMQ's Erlang AMQP 1.0 client amqp10_client from the installed beams "
    "(or --rabbitmq-ebin DIR), connected to a proton listener on loopback (AD-AMQ-10)",
    RABBITMQ_AMQP10: "the installed RabbitMQ broker's AMQP 1.0 plugin, started privately, "
    "driven by a proton client over loopback (AD-AMQ-RMQ)",
}
AMQP_MUTANT_PREFIX = "amqp-reference:mutant:"


def amqp_adapter_factory(
    name: str, timeout: float = DEFAULT_TIMEOUT, *, rabbitmq_ebin: str | Path | None = None
) -> Callable[[], AmqpAdapter]:
    """AD-AMQ-VERSION: a function that installs (on first use) and starts the named AMQP
    adapter; a release that cannot be installed is an :class:`AdapterFailure` (exit 3).
    ``rabbit-fifo`` takes ``rabbitmq_ebin`` as ``--adapter rabbitmq`` does (AD-AMQ-FIFO).
    :class:`UnknownAdapter` at once if the library is unknown."""
    if name == RABBIT_FIFO:
        return lambda: RabbitFifoAdapter(rabbitmq_ebin, timeout=timeout)
    if name == AMQP10_CLIENT:
        return lambda: Amqp10ClientAdapter(rabbitmq_ebin, timeout=timeout)
    if name == RABBITMQ_AMQP10:  # AD-AMQ-RMQ
        return rabbitmq_amqp10_factory(timeout)
    if name == "amqp-reference" or name.startswith(AMQP_MUTANT_PREFIX):
        argv = [sys.executable, "-m", "creditflow.adapters.amqp.reference"]
        mutant = name.removeprefix(AMQP_MUTANT_PREFIX) if name != "amqp-reference" else None
        if mutant is not None:
            # AD-AMQ-REFERENCE: ``A+B`` is a mutant with both bugs
            if not mutant or not set(mutant.split("+")) <= set(amqp_mutants()):
                raise UnknownAdapter(
                    f"unknown AMQP mutant {mutant!r} (known: {', '.join(amqp_mutants())})"
                )
            argv += ["--mutant", mutant]
        return lambda: AmqpAdapter(argv, name=name, timeout=timeout)
    library, _version = amqp_versions.split_name(name)
    if library not in AMQP_BUILTIN or library in (
        "amqp-reference",
        RABBIT_FIFO,
        AMQP10_CLIENT,
        RABBITMQ_AMQP10,
    ):
        raise UnknownAdapter(f"unknown AMQP adapter {name!r} (known: {', '.join(AMQP_BUILTIN)})")

    def start() -> AmqpAdapter:
        try:
            cmd = amqp_versions.command(name)
        except amqp_versions.InstallFailed as exc:
            raise AdapterFailure(name, CRASH, str(exc)) from None
        return AmqpAdapter(cmd.argv, name=name, timeout=timeout, env=cmd.env)

    return start


def is_amqp_name(name: str) -> bool:
    """Whether ``name`` is an adapter of the ``amqp`` family (AD-AMQ-VERSION):
    ``amqp-reference``, its mutants, ``proton``, ``rhea``, ``azure-pyamqp`` with or
    without ``@VERSION``."""
    if name == "amqp-reference" or name.startswith(AMQP_MUTANT_PREFIX):
        return True
    library, _version = amqp_versions.split_name(name)
    return library in AMQP_BUILTIN and library != "amqp-reference"


def amqp_mutants() -> dict[str, str]:
    """AD-AMQ-REFERENCE: the AMQP reference's mutants and the rule each breaks."""
    return dict(amqp_mutants_table)


#: AD-H2-VERSION: the adapters of the ``http2`` family; ``NAME@VERSION`` picks a release.
HTTP2_BUILTIN = {
    "h2": "python-hyper's sans-I/O h2 as a client, pumped in memory against our frame-level "
    "peer (AD-H2-H2)",
    "node": "Node's built-in http2 (nghttp2) as a server on loopback, our peer the client "
    "(AD-H2-NODE)",
    "httpcore": "httpx's httpcore as an HTTP/2 client on loopback, our peer the server "
    "(AD-H2-HTTPCORE)",
    "hypercorn": "hypercorn serving an ASGI app whose reads the adapter controls, on "
    "loopback, our peer the client (AD-H2-HYPERCORN)",
    "nghttp2": "Debian's nghttpd (nghttp2) serving files on loopback, our peer the client "
    "(AD-H2-NGHTTPD)",
}


def is_http2_name(name: str) -> bool:
    """Whether ``name`` (with or without ``@VERSION``) is an adapter of the ``http2``
    family (AD-H2-VERSION)."""
    return name.partition("@")[0] in HTTP2_BUILTIN


def http2_adapter_factory(name: str, timeout: float = DEFAULT_TIMEOUT) -> Callable[[], object]:
    """AD-H2-VERSION: a function that installs (on first use) and starts the named HTTP/2
    adapter (an ``adapters.http2.driver.Http2Adapter``); a release that cannot be had is
    an :class:`AdapterFailure` (exit 3). :class:`UnknownAdapter` at once if the library
    is unknown."""
    if not is_http2_name(name):
        raise UnknownAdapter(f"unknown HTTP/2 adapter {name!r} (known: {', '.join(HTTP2_BUILTIN)})")

    def start() -> object:
        # deferred: START-LAZY, the http2 family's modules load only when one is started
        from creditflow.adapters.http2.versions import start_adapter

        return start_adapter(name, timeout)

    return start
