"""Any release of an AMQP library as an adapter (AD-AMQ-VERSION): ``proton@VERSION``,
``rhea@VERSION`` and ``azure-pyamqp@VERSION`` are installed into a per-version cache
folder on first use (pip for proton and azure-servicebus, npm for rhea) and reused
afterwards; without ``@VERSION`` the release pinned here.
A release that cannot be installed is one line and exit 3 (ADAPTER_FAILURE).

The one place where an AMQP adapter's command line and environment are made; also run by
``scripts/setup.sh``: ``python -m creditflow.adapters.amqp.versions install rhea``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from creditflow.adapters import versions as shared
from creditflow.adapters.versions import AdapterCommand, InstallFailed, split_name

__all__ = ["InstallFailed", "split_name"]

#: AD-AMQ-VERSION: the releases the project pins (proton's also in pyproject's ``amqp`` extra).
PINNED = {"proton": "0.40.0", "rhea": "3.0.5", "azure-pyamqp": "7.15.0"}
#: MATRIX-RELEASES: the releases ``creditflow matrix`` and the docs' version matrices hold
#: (docs/amqp.md), oldest first; ``scripts/setup.sh`` installs them, so a missing one fails.
MATRIX_RELEASES = {
    "rhea": ("2.0.8", "3.0.4", "3.0.5"),
    "proton": ("0.38.0", "0.39.0", "0.40.0"),
    "azure-pyamqp": ("7.12.0", "7.14.3", "7.15.0"),
}
PACKAGES = {"proton": "python-qpid-proton", "rhea": "rhea", "azure-pyamqp": "azure-servicebus"}
#: The Python adapters' modules (the pinned release is in the project's environment).
PY_MODULES = {
    "proton": "creditflow.adapters.amqp.proton_server",
    "azure-pyamqp": "creditflow.adapters.amqp.azure_pyamqp",  # AD-AMQ-AZURE
}
FAMILY = "amqp"
_HERE = Path(__file__).resolve().parent
INSTALL_TIMEOUT = 900.0


def cache_root() -> Path:
    """``$CREDITFLOW_CACHE`` or ``~/.cache/creditflow``, then ``amqp/`` (AD-VERSION)."""
    return shared.cache_root(FAMILY)


def _run(argv: list[str], what: str) -> None:
    """One installer run with this family's :data:`INSTALL_TIMEOUT` (AD-VERSION's
    installer: its own process group, killed with its grandchildren, SIG-CHILDREN)."""
    shared.run_installer(argv, what, INSTALL_TIMEOUT)


def install(library: str, version: str | None) -> Path | None:
    """AD-AMQ-VERSION: the folder holding ``library`` at ``version``, installed on first
    use (AD-VERSION); ``None`` for proton or azure-pyamqp without a version (the
    project's environment has it)."""
    if library not in PINNED:
        raise InstallFailed(f"unknown AMQP library {library!r} (known: {', '.join(PINNED)})")
    if library in PY_MODULES and version is None:
        return None
    version = version or PINNED[library]
    if library == "rhea":
        return shared.install(FAMILY, library, version, f"rhea@{version}", "npm", run=_run)
    return shared.install(
        FAMILY, library, version, f"{PACKAGES[library]}=={version}", "pip", run=_run
    )


def cached_releases(library: str) -> tuple[str, ...]:
    """MATRIX-VERSIONS: the releases of ``library`` whose install in the per-version cache
    completed (AD-VERSION's ``.installed`` marker), plus the pinned one for a library the
    project's environment holds (proton, azure-pyamqp)."""
    root = cache_root()
    found = {
        p.name.removeprefix(f"{library}-")
        for p in (root.glob(f"{library}-*") if root.is_dir() else ())
        if (p / ".installed").exists() and not p.name.endswith(".partial")
    }
    if library in PY_MODULES:
        found.add(PINNED[library])
    return tuple(sorted(found))


def command(name: str) -> AdapterCommand:
    """AD-AMQ-VERSION: the command of adapter ``name`` (``proton``, ``rhea``, with an
    optional ``@VERSION``), installing the release first if needed."""
    library, version = split_name(name)
    folder = install(library, version)
    if library == "rhea":  # AD-AMQ-RHEA: adapters/amqp/rhea_server.js under Node.js
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            raise InstallFailed("cannot run rhea: node is not installed")
        assert folder is not None
        env = dict(shared.python_path_env(None))
        env["NODE_PATH"] = str(folder / "node_modules")
        argv: tuple[str, ...] = (node, str(_HERE / "rhea_server.js"))
        return AdapterCommand(library, version or PINNED[library], argv, env)
    env = shared.python_path_env(folder)
    argv = (sys.executable, "-m", PY_MODULES[library])
    return AdapterCommand(library, version or PINNED[library], argv, env)


def main(argv: list[str] | None = None) -> int:
    """``install NAME…``: install each release into the cache; ``install-matrix``: every
    release of :data:`MATRIX_RELEASES`; one line and exit 3 for one that cannot be
    installed."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["install-matrix"]:  # MATRIX-RELEASES: every release the docs' matrices hold
        args = ["install", *(f"{lib}@{v}" for lib, vs in MATRIX_RELEASES.items() for v in vs)]
    if len(args) < 2 or args[0] != "install":
        print(
            "usage: python -m creditflow.adapters.amqp.versions install NAME[@VERSION]… "
            "| install-matrix",
            file=sys.stderr,
        )
        return 2
    return shared.install_each(args[1:], _install_named)


def _install_named(name: str) -> str:
    """``install NAME``'s line: where the release is."""
    return str(install(*split_name(name)) or "the project environment")


if __name__ == "__main__":
    sys.exit(main())
