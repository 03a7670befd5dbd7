"""The ``rabbitmq`` adapter: the REAL ``credit_flow`` module of an installed RabbitMQ,
driven by the Erlang escript shipped in ``adapters/erlang/`` (AD-RABBITMQ).

Nothing of RabbitMQ is shipped: the module is loaded from the installed package's
``rabbit_common`` ebin, found in this order: ``--rabbitmq-ebin DIR``, the environment
variable ``CREDITFLOW_RABBITMQ_EBIN``, ``dpkg -L rabbitmq-server``, then the Debian
layout ``/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins/rabbit_common-*/ebin``
(highest version). The escript is compiled once into a cache folder (a start-up of
0.2 s instead of 0.6 s); without ``erlc`` it runs as an escript.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from creditflow.conformance.differential.adapter import MISSING, AdapterFailure
from creditflow.conformance.differential.subprocess import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    SubprocessAdapter,
)

ENV_EBIN = "CREDITFLOW_RABBITMQ_EBIN"
DEBIAN_GLOB = "/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins/rabbit_common-*/ebin"
MODULE = "credit_flow_adapter"
INSTALL_HINT = (
    "install it with `sudo apt-get install rabbitmq-server` (Debian/Ubuntu; `make test` "
    "does it) or pass --rabbitmq-ebin DIR (the rabbit_common ebin folder holding "
    "credit_flow.beam)"
)
#: Erlang VM flags: one scheduler without busy-waiting, so that the VM and the
#: Python driver share two cores well (benchmarks/conform_bench.py).
ERL_FLAGS = ("+S", "1", "+sbwt", "none", "+sbwtdcpu", "none", "+sbwtdio", "none")


def escript_path() -> Path:
    """The shipped escript (package data)."""
    return Path(str(resources.files("creditflow.adapters") / "erlang" / f"{MODULE}.escript"))


def _has_beam(folder: Path) -> bool:
    return (folder / "credit_flow.beam").is_file()


def _version_key(path: str) -> tuple[int, ...]:
    match = re.search(r"rabbit_common-([0-9.]+)", path)
    return tuple(int(x) for x in match.group(1).strip(".").split(".")) if match else ()


def ebin_problem(folder: Path) -> str:
    """The one line for a ``--rabbitmq-ebin`` folder without the module (AD-RABBITMQ)."""
    what = "does not exist" if not folder.is_dir() else "holds no credit_flow.beam"
    return (
        f"--rabbitmq-ebin {folder}: {what} (give the rabbit_common ebin folder that "
        f"holds the credit_flow.beam to check)"
    )


def locate_ebin(explicit: str | Path | None = None) -> Path:
    """The ``rabbit_common`` ebin folder holding ``credit_flow.beam``; raises
    :class:`AdapterFailure` (kind ``missing``) with the install hint."""
    if explicit is not None:
        folder = Path(explicit)
        if _has_beam(folder):
            return folder
        raise AdapterFailure("rabbitmq", MISSING, ebin_problem(folder))
    env = os.environ.get(ENV_EBIN)
    if env:
        if _has_beam(Path(env)):
            return Path(env)
        raise AdapterFailure(
            "rabbitmq", MISSING, f"{ENV_EBIN}={env} holds no credit_flow.beam; " + INSTALL_HINT
        )
    candidates: list[str] = []
    if shutil.which("dpkg"):
        try:
            listing = subprocess.run(
                ["dpkg", "-L", "rabbitmq-server"], capture_output=True, text=True, timeout=10
            ).stdout
            candidates += [
                line
                for line in listing.splitlines()
                if re.search(r"/rabbit_common-[^/]+/ebin$", line)
            ]
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += glob.glob(DEBIAN_GLOB)
    found = sorted({c for c in candidates if _has_beam(Path(c))}, key=_version_key)
    if found:
        return Path(found[-1])
    raise AdapterFailure(
        "rabbitmq", MISSING, "RabbitMQ's credit_flow module is not installed; " + INSTALL_HINT
    )


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "creditflow" / "erlang"


def compiled_module_dir(source: Path | None = None, module: str = MODULE) -> Path | None:
    """Compile the escript's module (or ``module`` from ``source``) with ``erlc`` into a
    cache folder keyed by its content (once); ``None`` when ``erlc`` is missing or fails
    (then run the escript)."""
    source = source or escript_path()
    erlc = shutil.which("erlc")
    if erlc is None:
        return None
    text = source.read_text(encoding="utf-8")
    key = hashlib.sha256((text + erlc).encode()).hexdigest()[:16]
    for root in (_cache_root(), Path(tempfile.gettempdir()) / "creditflow-erlang"):
        target = root / key
        if (target / f"{module}.beam").is_file():
            return target
        try:
            root.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
        except OSError:
            continue
        # The escript header (shebang, %%! line) is not Erlang: blank it, keeping line
        # numbers, and compile the rest as an ordinary module.
        lines = text.splitlines()
        lines = ["%%" if line.startswith(("#!", "%%!")) else line for line in lines[:2]] + lines[2:]
        (work / f"{module}.erl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        done = subprocess.run(
            [erlc, "-o", str(work), str(work / f"{module}.erl")], capture_output=True, text=True
        )
        if done.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            return None
        try:
            os.replace(work, target)
        except OSError:  # another process won the race: use its copy
            shutil.rmtree(work, ignore_errors=True)
        if (target / f"{module}.beam").is_file():
            return target
    return None


def rabbitmq_command(ebin: Path) -> list[str]:
    """The command line that starts the adapter on ``ebin``."""
    compiled = compiled_module_dir()
    erl = shutil.which("erl")
    if compiled is not None and erl is not None:
        return [
            erl,
            "-noshell",
            "-noinput",
            *ERL_FLAGS,
            "-pa",
            str(compiled),
            "-run",
            MODULE,
            "main",
            str(ebin),
        ]
    escript = shutil.which("escript")
    if escript is None:
        raise AdapterFailure(
            "rabbitmq",
            MISSING,
            "Erlang is not installed (no `erl` or `escript` on PATH); " + INSTALL_HINT,
        )
    return [escript, str(escript_path()), "--ebin", str(ebin)]


class RabbitMQAdapter(SubprocessAdapter):
    """RabbitMQ's own ``credit_flow`` (AD-RABBITMQ)."""

    def __init__(
        self,
        ebin: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
    ) -> None:
        self.ebin = locate_ebin(ebin)
        super().__init__(
            rabbitmq_command(self.ebin),
            name="rabbitmq",
            timeout=timeout,
            start_timeout=start_timeout,
        )
