"""The lint gate's own rules (issue 22): how the type checker finds the namespace, and
that the few ``# type: ignore`` left each name an error code and say why."""

from __future__ import annotations

import importlib.util
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
EXPLAINED = re.compile(r"^\[[a-z-]+(, [a-z-]+)*\]  # \S")
MAX_IGNORES = 10


def typecheck_tree():
    spec = importlib.util.spec_from_file_location(
        "typecheck_tree", ROOT / "scripts/typecheck_tree.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_type_checker_sees_each_mapped_folder_once():
    tree = typecheck_tree()
    links = tree.links(tree.package_dirs(ROOT / "pyproject.toml"))
    found = {link.relative_to(tree.TREE).as_posix(): folder for link, folder in links.items()}
    assert found == {
        "creditflow/spec": ROOT / "spec",
        "creditflow/model": ROOT / "model",
        "creditflow/conformance": ROOT / "conformance",
        "creditflow/adapters": ROOT / "adapters",
    }


def test_a_nested_mapping_is_reached_through_its_parent():
    tree = typecheck_tree()
    links = tree.links({"creditflow.a": "a", "creditflow.a.b": "elsewhere/b", "creditflow.c": "c"})
    assert sorted(p.name for p in links) == ["a", "c"]


def test_type_ignores_are_few_and_each_says_why():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if {".venv", "build"} & set(path.relative_to(ROOT).parts):
            continue
        with path.open("rb") as source:
            for token in tokenize.tokenize(source.readline):
                match = IGNORE.search(token.string) if token.type == tokenize.COMMENT else None
                if match:
                    where = f"{path.relative_to(ROOT)}:{token.start[0]}"
                    found.append((where, match.group("rest")))
    unexplained = [where for where, rest in found if not EXPLAINED.match(rest)]
    assert unexplained == [], "a type: ignore needs [code]  # reason on its line"
    assert len(found) <= MAX_IGNORES, [where for where, _ in found]
