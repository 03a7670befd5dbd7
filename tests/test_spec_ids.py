"""Every rule of spec/ has an id that the model code and at least one test cite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADING = re.compile(r"^#{2,4}\s+([A-Z]{2,}(?:-[A-Z0-9]+)+)\b", re.MULTILINE)
CODE_DIRS = ("model", "conformance", "adapters")
CODE_SUFFIXES = {".py", ".erl", ".escript"}


def spec_ids() -> dict[str, str]:
    ids: dict[str, str] = {}
    for path in sorted((ROOT / "spec").glob("*.md")):
        for match in HEADING.finditer(path.read_text(encoding="utf-8")):
            assert match.group(1) not in ids, f"{match.group(1)} defined twice"
            ids[match.group(1)] = path.name
    return ids


def corpus(dirs: tuple[str, ...], exclude: Path | None = None) -> str:
    texts = []
    for d in dirs:
        for path in (ROOT / d).rglob("*"):
            if path.suffix in CODE_SUFFIXES and path != exclude and "__pycache__" not in path.parts:
                texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


def cited(rule: str, text: str) -> bool:
    return re.search(rf"(?<![A-Z0-9-]){re.escape(rule)}(?![A-Z0-9-])", text) is not None


def test_spec_has_rules():
    ids = spec_ids()
    for prefix in ("CF-", "NET-", "PROP-", "EXP-", "TRACE-", "AD-"):
        assert any(i.startswith(prefix) for i in ids), prefix


def test_every_rule_is_cited_by_code():
    code = corpus(CODE_DIRS)
    missing = [rule for rule in spec_ids() if not cited(rule, code)]
    assert not missing, f"rules no code cites: {missing}"


def test_every_rule_is_cited_by_a_test():
    tests = corpus(("tests",), exclude=Path(__file__).resolve())
    missing = [rule for rule in spec_ids() if not cited(rule, tests)]
    assert not missing, f"rules no test cites: {missing}"
