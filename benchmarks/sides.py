"""Run one benchmark body under two code bases in one run: the OLD commit and this tree.

The old side is ``git archive COMMIT`` unpacked into a temporary directory, with a
``creditflow`` package folder whose subpackages link to it (the same mapping as
pyproject.toml's ``package-dir``). Each side runs in its own subprocess of this
virtualenv's Python; the old one drops the editable install's import finder and puts
the old package first on ``sys.path``.

    from sides import old_tree, run_side
    rows = run_side(old_tree("a32994f"), "benchmarks/deadlock_bench.py", ["--worker", ...])
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("spec", "model", "conformance", "adapters")
#: the House move (the same code as before it); the baseline of issue #13
DEFAULT_OLD = "a32994f"


def old_tree(commit: str) -> Path:
    """An importable copy of ``commit``: returns the folder to put on ``sys.path``."""
    root = Path(tempfile.mkdtemp(prefix=f"creditflow-{commit[:8]}-"))
    src, pkg = root / "src", root / "pkg" / "creditflow"
    src.mkdir()
    pkg.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    for name in PACKAGES:
        (pkg / name).symlink_to(src / name)
    return root / "pkg"


def use_tree(root: str | None) -> None:
    """In a worker: import ``creditflow`` from ``root`` (an :func:`old_tree`) if given."""
    if root:
        sys.meta_path[:] = [
            f for f in sys.meta_path if "Editable" not in getattr(f, "__name__", type(f).__name__)
        ]
        sys.path.insert(0, root)


def run_side(root: Path | None, script: str, args: list[str]) -> list[dict]:
    """Run ``script --worker [--root ROOT] ARGS``; its stdout is one JSON object a line."""
    command = [sys.executable, str(REPO / script), "--worker", *args]
    if root is not None:
        command += ["--root", str(root)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def add_side_options(parser: argparse.ArgumentParser) -> None:
    """``--old COMMIT``, and the hidden ``--worker``/``--root`` a side runs with."""
    parser.add_argument("--old", default=DEFAULT_OLD, help="the baseline commit")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)


def side_parser(doc: str | None, old: str) -> argparse.ArgumentParser:
    """A side-by-side benchmark's parser: ``doc`` shown as written, the side options with
    ``old`` as the baseline commit."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_side_options(parser)
    parser.set_defaults(old=old)
    return parser


def ran_as_worker(args: argparse.Namespace, worker: Callable[[argparse.Namespace], None]) -> bool:
    """``worker(args)`` if this process is a side (``--worker``); whether it was."""
    if args.worker:
        worker(args)
    return bool(args.worker)


def emit_row(row: dict[str, Any]) -> None:
    """One result of a side's worker: a JSON line, flushed (what :func:`run_side` reads)."""
    print(json.dumps(row), flush=True)
