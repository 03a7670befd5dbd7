"""Regenerate the version-matrix blocks of the docs (MATRIX-DOCS): every
``<!-- creditflow matrix ARGS -->`` … ``<!-- end matrix -->`` block of each PAGE gets the
Markdown output of ``creditflow matrix ARGS --format markdown``.

    python scripts/regenerate_matrices.py [--check] [PAGE…]   (default: docs/amqp.md)

``--check`` rewrites nothing and exits 1 naming each page whose blocks differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from creditflow.conformance.cli.matrix import block_args, matrix, replace_blocks

ROOT = Path(__file__).resolve().parents[1]


def produce(args: str) -> str:
    """One block's body: the command's Markdown; its failure is one line and exit 3."""
    result = CliRunner().invoke(matrix, list(block_args(args)))
    if result.exit_code != 0:
        detail = (result.stderr or result.output or "").strip().splitlines()
        print(f"creditflow matrix {args}: exit {result.exit_code}: {detail[-1:]}", file=sys.stderr)
        sys.exit(3)
    return result.stdout


def main(argv: list[str]) -> int:
    check = "--check" in argv
    pages = [Path(a) for a in argv if a != "--check"] or [ROOT / "docs" / "amqp.md"]
    stale = []
    for page in pages:
        try:
            text = page.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"{page}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            return 2
        new = replace_blocks(text, produce)
        if new != text:
            stale.append(page)
            if not check:
                page.write_text(new, encoding="utf-8")
    for page in stale:
        print(f"{page}: {'matrix blocks differ from a fresh run' if check else 'regenerated'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
