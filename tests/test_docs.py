"""The README is a front door: short, every guide one click away, every relative link
alive, and its exit-code table equal to the codes the commands use."""

from __future__ import annotations

import re
from pathlib import Path

from creditflow.conformance import exit_codes

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def documents() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "spec").glob("*.md"))]


def test_readme_is_short():
    # 220 lines of text, plus the tour's elision marks and run directives that keep its
    # examples running (tests/test_doc_examples.py)
    assert len(README.read_text().splitlines()) <= 232


def test_every_relative_link_resolves():
    dead = []
    for doc in documents():
        for target in LINK.findall(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).resolve().exists():
                dead.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert dead == []


def test_every_guide_is_linked_from_the_readme():
    linked = {(README.parent / t).resolve() for t in LINK.findall(README.read_text())}
    guides = set((ROOT / "docs").glob("*.md"))
    assert {g.resolve() for g in guides} <= linked, sorted(
        str(g.relative_to(ROOT)) for g in guides if g.resolve() not in linked
    )


def test_readme_exit_codes_are_the_commands_exit_codes():
    text = README.read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    table = {int(code) for code in re.findall(r"^\| (\d+) \|", text, re.MULTILINE)}
    codes = {v for k, v in vars(exit_codes).items() if k.isupper() and isinstance(v, int)}
    assert table == codes == set(exit_codes.DESCRIPTIONS)
