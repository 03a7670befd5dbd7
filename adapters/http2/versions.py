"""Any release of an HTTP/2 library as an adapter (AD-H2-VERSION, on AD-VERSION's cache):
``h2@VERSION``, ``httpcore@VERSION`` and ``hypercorn@VERSION`` are pip-installed into
``$CREDITFLOW_CACHE/http2/LIB-VERSION`` on first use and reused; without ``@VERSION``
the release pinned here (and in pyproject's ``http2`` extra) from the project's
environment. ``node`` (Node's built-in ``http2``, nghttp2 inside) and ``nghttp2``
(Debian's ``nghttpd``) are the programs installed on the machine; ``node@VERSION`` is
Node's own binary from npm's ``node-<os>-<arch>@VERSION`` in the cache, and
``nghttp2@VERSION`` must name the installed release. A release that cannot be had is
one line and exit 3 (ADAPTER_FAILURE).

The one place where an HTTP/2 adapter's command line and environment are made; also run
by ``scripts/setup.sh``: ``python -m creditflow.adapters.http2.versions check``.
"""

from __future__ import annotations

import contextlib
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from creditflow.adapters import versions as shared
from creditflow.adapters.http2.driver import Http2Adapter
from creditflow.adapters.versions import AdapterCommand, InstallFailed, split_name
from creditflow.conformance.differential.adapter import CRASH, AdapterFailure
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT

FAMILY = "http2"
#: AD-H2-VERSION: the releases the project pins (also pyproject's ``http2`` extra).
PINNED = {"h2": "4.3.0", "httpcore": "1.0.9", "hypercorn": "0.17.3"}
REQUIREMENTS = {"h2": "h2=={}", "httpcore": "httpcore[http2]=={}", "hypercorn": "hypercorn=={}"}
#: Each adapter's module (run as ``python -m``).
MODULES = {
    "h2": "creditflow.adapters.http2.h2_sansio",
    "httpcore": "creditflow.adapters.http2.httpcore_client",
    "hypercorn": "creditflow.adapters.http2.hypercorn_server",
    "node": "creditflow.adapters.http2.node_http2",
    "nghttp2": "creditflow.adapters.http2.nghttpd_server",
}
#: The machine's own programs behind ``node`` and ``nghttp2``.
PROGRAMS = {"node": ("node", "nodejs"), "nghttp2": ("nghttpd",)}
_RELEASE = re.compile(r"(\d+\.\d+\.\d+)")
PROBE_TIMEOUT = 10.0


def program(library: str) -> str:
    """The path of ``node`` / ``nghttpd``; :class:`InstallFailed` when it is missing."""
    for name in PROGRAMS[library]:
        found = shutil.which(name)
        if found:
            return found
    raise InstallFailed(f"cannot run {library}: {PROGRAMS[library][0]} is not installed")


def program_release(library: str) -> str:
    """The release of the machine's ``node`` or ``nghttpd`` (``--version``)."""
    path = program(library)
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallFailed(f"cannot run {library}: {exc}") from None
    found = _RELEASE.search(out.stdout + out.stderr)
    if found is None:
        raise InstallFailed(f"cannot run {library}: no release in `{path} --version`")
    return found.group(1)


def node_package() -> str:
    """The npm package that ships Node's own binary for this machine (AD-H2-VERSION)."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"node-{sys.platform}-{arch}"


def node_binary(folder: Path) -> Path:
    """Node's binary inside a cached ``node-<os>-<arch>`` install."""
    return folder / "node_modules" / node_package() / "bin" / "node"


def install(library: str, version: str | None) -> Path | None:
    """AD-H2-VERSION: the cache folder of ``library`` at ``version`` (``None``: the
    project's environment or the machine's program). ``node@V`` other than the
    machine's release is npm's ``node-<os>-<arch>@V`` (Node's own binary, shipped as a
    package); nghttpd has no package but Debian's."""
    if library not in MODULES:
        raise InstallFailed(f"unknown HTTP/2 library {library!r} (known: {', '.join(MODULES)})")
    if library in PROGRAMS:
        if version is None or version == program_release(library):
            return None
        if library == "nghttp2":
            raise InstallFailed(
                f"cannot install nghttp2@{version}: nghttp2 is the machine's nghttpd "
                f"{program_release(library)}, not a package of its own"
            )
        return shared.install(FAMILY, library, version, f"{node_package()}@{version}", "npm")
    if version is None:
        dist = REQUIREMENTS[library].partition("=")[0].partition("[")[0]
        have: str | None = None
        with contextlib.suppress(metadata.PackageNotFoundError):
            have = metadata.version(dist)
        if have != PINNED[library]:
            found = f"has {dist} {have}" if have else f"lacks {dist}"
            raise InstallFailed(
                f"cannot run {library}: the project's environment {found}, pinned "
                f"{PINNED[library]} (pip install -e '.[http2]')"
            )
        return None
    return shared.install(FAMILY, library, version, REQUIREMENTS[library].format(version))


def command(name: str) -> AdapterCommand:
    """AD-H2-VERSION: the command of adapter ``name`` (``h2``, ``h2@4.1.0``, …),
    installing the release first if needed."""
    library, version = split_name(name)
    folder = install(library, version)
    env = shared.python_path_env(folder)
    if library in PROGRAMS:
        binary = node_binary(folder) if folder is not None else None
        if binary is not None and not binary.exists():
            raise InstallFailed(f"cannot run {name}: {binary} is missing from its cache folder")
        env["CREDITFLOW_H2_PROGRAM"] = str(binary) if binary else program(library)
        release = version or program_release(library)
    else:
        release = version or PINNED[library]
    return AdapterCommand(library, release, (sys.executable, "-m", MODULES[library]), env)


def start_adapter(name: str, timeout: float = DEFAULT_TIMEOUT) -> Http2Adapter:
    """AD-H2-VERSION: start adapter ``name``, installing its release first; a release
    that cannot be had is an :class:`AdapterFailure` (crash, exit 3) in one line."""
    try:
        cmd = command(name)
    except InstallFailed as exc:
        raise AdapterFailure(name, CRASH, str(exc)) from None
    return Http2Adapter(cmd.argv, name=name, timeout=timeout, env=cmd.env)


def main(argv: list[str] | None = None) -> int:
    """``install NAME…``: install each release into the cache; one line and exit 3 for
    one that cannot be had. ``check``: the pinned libraries import and the programs run."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["check"]:
        args = ["install", *MODULES]
    if len(args) < 2 or args[0] != "install":
        print(
            "usage: python -m creditflow.adapters.http2.versions install NAME[@VERSION]… | check",
            file=sys.stderr,
        )
        return 2
    return shared.install_each(args[1:], _install_named)


def _install_named(name: str) -> str:
    """``install NAME``'s line: the library and release it runs."""
    cmd = command(name)
    return f"{cmd.library} {cmd.version}"


if __name__ == "__main__":
    sys.exit(main())
