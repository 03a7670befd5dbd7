"""Any release of an AMQP library as an adapter (AD-AMQ-VERSION): ``proton@VERSION``,
``rhea@VERSION`` and ``azure-pyamqp@VERSION`` are installed into a per-version cache
folder on first use (pip for proton and azure-servicebus, npm for rhea) and reused
afterwards; without ``@VERSION`` the release pinned here.
A release that cannot be installed is one line and exit 3 (ADAPTER_FAILURE).

The one place where an AMQP adapter's command line and environment are made; also run by
``scripts/setup.sh``: ``python -m creditflow.adapters.amqp.versions install rhea``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from creditflow.conformance.exit_codes import ADAPTER_FAILURE
from creditflow.conformance.runtime import children

#: AD-AMQ-VERSION: the releases the project pins (proton's also in pyproject's ``amqp`` extra).
PINNED = {"proton": "0.40.0", "rhea": "3.0.5", "azure-pyamqp": "7.15.0"}
PACKAGES = {"proton": "python-qpid-proton", "rhea": "rhea", "azure-pyamqp": "azure-servicebus"}
#: The Python adapters' modules (the pinned release is in the project's environment).
PY_MODULES = {
    "proton": "creditflow.adapters.amqp.proton_server",
    "azure-pyamqp": "creditflow.adapters.amqp.azure_pyamqp",  # AD-AMQ-AZURE
}
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
_HERE = Path(__file__).resolve().parent
INSTALL_TIMEOUT = 900.0


class InstallFailed(Exception):
    """A release that cannot be installed; ``str()`` is one line."""


@dataclass(frozen=True)
class AmqpCommand:
    """How to start one AMQP adapter: its argv and the environment it needs."""

    library: str
    version: str
    argv: tuple[str, ...]
    env: dict[str, str]


def cache_root() -> Path:
    """``$CREDITFLOW_CACHE`` or ``~/.cache/creditflow``, then ``amqp/``."""
    base = os.environ.get("CREDITFLOW_CACHE") or str(Path.home() / ".cache" / "creditflow")
    return Path(base) / "amqp"


def split_name(name: str) -> tuple[str, str | None]:
    """``rhea@3.0.5`` → (``rhea``, ``3.0.5``); ``proton`` → (``proton``, ``None``)."""
    library, _, version = name.partition("@")
    return library, (version or None)


def _run(argv: list[str], what: str) -> None:
    """One installer run (pip, npm) in its own process group, tracked so that an
    interrupt or exit of the command kills it with its grandchildren (SIG-CHILDREN)."""
    try:
        proc = children.track(
            subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        )
    except OSError as exc:
        raise InstallFailed(f"cannot install {what}: {exc}") from None
    try:
        stdout, stderr = proc.communicate(timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise InstallFailed(f"cannot install {what}: {exc}") from None
    finally:
        children.stop_group(proc)  # reaps it; kills what it left behind
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (stderr or stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if "ERR" in ln.upper()] or lines
        detail = errors[0] if errors else f"exit {proc.returncode}"
        raise InstallFailed(f"cannot install {what}: {detail[:300]}")


def install(library: str, version: str | None) -> Path | None:
    """AD-AMQ-VERSION: the folder holding ``library`` at ``version``, installed on first
    use; ``None`` for proton or azure-pyamqp without a version (the project's
    environment has it)."""
    if library not in PINNED:
        raise InstallFailed(f"unknown AMQP library {library!r} (known: {', '.join(PINNED)})")
    if library in PY_MODULES and version is None:
        return None
    version = version or PINNED[library]
    what = f"{library}@{version}"
    if not _VERSION.match(version):
        raise InstallFailed(f"cannot install {what}: not a release name")
    folder = cache_root() / f"{library}-{version}"
    if (folder / ".installed").exists():
        return folder
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        if library == "rhea":
            npm = shutil.which("npm")
            if npm is None:
                raise InstallFailed(f"cannot install {what}: npm is not installed")
            _run(
                [
                    npm,
                    "install",
                    "--no-save",
                    "--no-package-lock",
                    "--prefix",
                    str(staging),
                    f"rhea@{version}",
                ],
                what,
            )
        else:
            _run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--no-input",
                    "--target",
                    str(staging),
                    f"{PACKAGES[library]}=={version}",
                ],
                what,
            )
        (staging / ".installed").write_text(version + "\n", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def command(name: str) -> AmqpCommand:
    """AD-AMQ-VERSION: the command of adapter ``name`` (``proton``, ``rhea``, with an
    optional ``@VERSION``), installing the release first if needed."""
    library, version = split_name(name)
    folder = install(library, version)
    env = dict(os.environ)
    if library == "rhea":  # AD-AMQ-RHEA: adapters/amqp/rhea_server.js under Node.js
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            raise InstallFailed("cannot run rhea: node is not installed")
        assert folder is not None
        env["NODE_PATH"] = str(folder / "node_modules")
        argv: tuple[str, ...] = (node, str(_HERE / "rhea_server.js"))
        return AmqpCommand(library, version or PINNED[library], argv, env)
    if folder is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(folder), env.get("PYTHONPATH", "")) if p
        )
    argv = (sys.executable, "-m", PY_MODULES[library])
    return AmqpCommand(library, version or PINNED[library], argv, env)


def main(argv: list[str] | None = None) -> int:
    """``install NAME…``: install each release into the cache; one line and exit 3 for
    one that cannot be installed."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] != "install":
        print(
            "usage: python -m creditflow.adapters.amqp.versions install NAME[@VERSION]…",
            file=sys.stderr,
        )
        return 2
    for name in args[1:]:
        try:
            folder = install(*split_name(name))
        except InstallFailed as exc:
            print(f"adapter {name}: {exc}", file=sys.stderr)
            return ADAPTER_FAILURE
        print(f"{name}: {folder or 'the project environment'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
