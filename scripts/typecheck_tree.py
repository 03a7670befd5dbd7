"""Build the tree a type checker reads: ``build/typecheck/creditflow/<pkg>`` -> ``<folder>``.

The ``creditflow.*`` namespace is mapped onto the fixed top-level folders by setuptools'
``package-dir`` (pyproject.toml), which static tools cannot follow. This script reads that
mapping and links each top-level package of the namespace to its folder, so mypy (whose
``mypy_path`` points at ``build/typecheck``) checks the real files under their real module
names. Idempotent; run by ``make lint``.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"


def package_dirs(pyproject: Path) -> dict[str, str]:
    """The ``[tool.setuptools.package-dir]`` table: package name -> folder."""
    table = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-dir"]
    return {str(k): str(v) for k, v in table.items()}


def links(mapping: dict[str, str]) -> dict[Path, Path]:
    """Link path -> folder for each mapped package not already inside a mapped parent."""
    out: dict[Path, Path] = {}
    for package, folder in sorted(mapping.items()):
        parents = package.split(".")[:-1]
        if any(".".join(parents[:i]) in mapping for i in range(1, len(parents) + 1)):
            continue  # reached through its parent's link
        out[TREE.joinpath(*package.split("."))] = ROOT / folder
    return out


def main() -> int:
    pyproject = ROOT / "pyproject.toml"
    try:
        mapping = package_dirs(pyproject)
    except (OSError, KeyError, tomllib.TOMLDecodeError) as err:
        print(f"{pyproject}: no [tool.setuptools.package-dir] table ({err})", file=sys.stderr)
        return 2
    for link, folder in links(mapping).items():
        link.parent.mkdir(parents=True, exist_ok=True)
        target = os.path.relpath(folder, link.parent)
        if link.is_symlink() and os.readlink(link) == target:
            continue
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
