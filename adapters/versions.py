"""Any release of an adapter's library, for every family (AD-VERSION, generalising
AD-AMQ-VERSION): ``LIB@VERSION`` is installed on first use into a per-version cache
folder, ``$CREDITFLOW_CACHE/<family>/<lib>-<version>`` (default ``~/.cache/creditflow``),
with pip (``--target``) or npm (``--prefix``), and reused afterwards; a folder counts only
once its install completed (its ``.installed`` marker). A release that cannot be
installed is :class:`InstallFailed`, one line; callers turn it into exit 3.

Each family keeps its own table of libraries, pins and commands
(``adapters/amqp/versions.py``, ``adapters/http2/versions.py``); this module holds what
they share.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from creditflow.conformance.exit_codes import ADAPTER_FAILURE
from creditflow.conformance.runtime import children

#: AD-VERSION: a release name (no path, no shell syntax).
RELEASE_NAME = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
INSTALL_TIMEOUT = 900.0
#: AD-VERSION-PROGRESS: seconds between two progress lines of a running install.
PROGRESS_EVERY = 10.0
Installer = Literal["pip", "npm"]
#: AD-VERSION-PROGRESS: where progress lines go; the command line sets it
#: (:func:`report_progress_to`), a library caller gets none.
_progress: Callable[[str], None] | None = None


def report_progress_to(sink: Callable[[str], None] | None) -> None:
    """AD-VERSION-PROGRESS: send the install progress lines to ``sink`` (None: nowhere)."""
    global _progress
    _progress = sink


def _say(line: str) -> None:
    if _progress is not None:
        _progress(line)


class InstallFailed(Exception):
    """A release that cannot be installed; ``str()`` is one line."""


@dataclass(frozen=True)
class AdapterCommand:
    """How to start one adapter: its library and release, argv and the environment it
    needs."""

    library: str
    version: str
    argv: tuple[str, ...]
    env: dict[str, str]


def install_each(names: Sequence[str], install_one: Callable[[str], str]) -> int:
    """A family's ``install NAME…``: ``install_one(name)`` for each, printing
    ``NAME: what``; the first that cannot be had is one line on stderr and exit 3
    (ADAPTER_FAILURE), else 0."""
    for name in names:
        try:
            what = install_one(name)
        except InstallFailed as exc:
            print(f"adapter {name}: {exc}", file=sys.stderr)
            return ADAPTER_FAILURE
        print(f"{name}: {what}")
    return 0


def cache_root(family: str) -> Path:
    """``$CREDITFLOW_CACHE`` or ``~/.cache/creditflow``, then the family's folder."""
    base = os.environ.get("CREDITFLOW_CACHE") or str(Path.home() / ".cache" / "creditflow")
    return Path(base) / family


def split_name(name: str) -> tuple[str, str | None]:
    """``rhea@3.0.5`` → (``rhea``, ``3.0.5``); ``h2`` → (``h2``, ``None``)."""
    library, _, version = name.partition("@")
    return library, (version or None)


def run_installer(argv: list[str], what: str, timeout: float = INSTALL_TIMEOUT) -> None:
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
    started = time.monotonic()
    try:
        while True:  # AD-VERSION-PROGRESS: a line every PROGRESS_EVERY s while it runs
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                raise InstallFailed(f"cannot install {what}: no answer in {timeout:g} s")
            try:
                stdout, stderr = proc.communicate(timeout=min(PROGRESS_EVERY, left))
                break
            except subprocess.TimeoutExpired:
                _say(f"  still installing {what} ({time.monotonic() - started:.0f} s)")
    finally:
        children.stop_group(proc)  # reaps it; kills what it left behind
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (stderr or stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if "ERR" in ln.upper()] or lines
        detail = errors[0] if errors else f"exit {proc.returncode}"
        raise InstallFailed(f"cannot install {what}: {detail[:300]}")


def install(
    family: str,
    library: str,
    version: str,
    requirement: str,
    installer: Installer = "pip",
    run: Callable[[list[str], str], None] | None = None,
) -> Path:
    """AD-VERSION: the cache folder holding ``library`` at ``version`` for ``family``,
    installing ``requirement`` (``pkg==V``, ``pkg[extra]==V``, ``pkg@V`` for npm) on
    first use; ``run`` replaces :func:`run_installer` (a family's own timeout)."""
    what = f"{library}@{version}"
    if not RELEASE_NAME.match(version):
        raise InstallFailed(f"cannot install {what}: not a release name")
    folder = cache_root(family) / f"{library}-{version}"
    if (folder / ".installed").exists():
        return folder
    if installer == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise InstallFailed(f"cannot install {what}: npm is not installed")
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    runner = run or run_installer
    # AD-VERSION-PROGRESS: a first use says what it installs, where, and how long it took
    _say(f"creditflow: installing {what} with {installer} into {folder} (first use)")
    started = time.monotonic()
    try:
        if installer == "npm":
            argv = [str(npm), "install", "--no-save", "--no-package-lock", "--prefix"]
            runner([*argv, str(staging), requirement], what)
        else:
            argv = [sys.executable, "-m", "pip", "install", "-q", "--no-input", "--target"]
            runner([*argv, str(staging), requirement], what)
        (staging / ".installed").write_text(version + "\n", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
        _say(f"creditflow: installed {what} in {time.monotonic() - started:.1f} s")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def python_path_env(folder: Path | None, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a Python adapter running a cached release: ``folder`` first on
    ``PYTHONPATH`` (``None``: the project's environment, unchanged)."""
    out = dict(os.environ if env is None else env)
    if folder is not None:
        out["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(folder), out.get("PYTHONPATH", "")) if p
        )
    return out
