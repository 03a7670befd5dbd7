"""The layering contract of the code base, checked on every import of every module.

Dependencies run one way (README "Layout"; docs/architecture.md):

    spec  <-  model  <-  conformance capabilities  <-  adapters  <-  conformance.cli,
                         (inputs < explore < symbolic                 conformance.pytest_plugin
                          < traces < differential
                          < sweep < observe)

* a module imports only from its own layer or the layers to its left; among the
  conformance capabilities only from its own package or one listed before it;
* nothing imports ``conformance.cli`` or ``conformance.pytest_plugin`` (entry points;
  ``__main__`` modules may);
* no private name (``_x``) is imported from another module;
* an import inside a function (deferred) carries a ``# deferred: <reason>`` comment on
  its line or the line above (start-up time, an optional dependency), never to dodge a
  cycle;
* ``conformance/`` has no top-level modules besides ``__init__``, ``pytest_plugin`` and
  ``exit_codes``, and every package says in its docstring what it owns.

Run it alone: ``python -m pytest tests/test_layering.py``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"spec": "spec", "model": "model", "conformance": "conformance", "adapters": "adapters"}

#: Conformance capabilities, lowest first: each may import only itself and those before it.
CAPABILITIES = (
    "inputs",
    "explore",
    "symbolic",
    "traces",
    "differential",
    "sweep",
    "observe",
    "families",
    "matrix",
)
ENTRY_POINTS = ("cli", "pytest_plugin")
CONFORMANCE_TOP_LEVEL = {"__init__.py", "pytest_plugin.py", "exit_codes.py"}


def layer(module: str) -> tuple[int, int]:
    """(layer, rank among capabilities) of a ``creditflow.*`` module name."""
    parts = module.split(".")[1:]
    top = parts[0]
    if top == "spec":
        return (0, 0)
    if top == "model":
        return (1, 0)
    if top == "adapters":
        return (3, 0)
    sub = parts[1] if len(parts) > 1 else ""
    if sub in ENTRY_POINTS:
        return (4, 0)
    if sub in CAPABILITIES:
        return (2, CAPABILITIES.index(sub) + 1)
    return (2, 0)  # conformance/__init__, exit_codes: below every capability


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["creditflow", *parts])


@dataclass
class Import:
    module: str
    names: tuple[str, ...]
    line: int
    deferred: bool


def imports_of(path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    typing_only = {
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and getattr(block.test, "id", "") == "TYPE_CHECKING"
        for n in ast.walk(block)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue  # annotations only: never imported at run time
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = tuple(a.name for a in node.names)
            found.append(Import(node.module, names, node.lineno, node.col_offset > 0))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(alias.name, (), node.lineno, node.col_offset > 0))
    return [i for i in found if i.module == "creditflow" or i.module.startswith("creditflow.")]


def sources() -> list[Path]:
    return sorted(p for folder in FOLDERS.values() for p in (ROOT / folder).rglob("*.py"))


def target_of(imp: Import) -> list[str]:
    """The modules an import reaches (``from pkg import submodule`` reaches the submodule)."""
    out = [imp.module]
    for name in imp.names:
        candidate = f"{imp.module}.{name}"
        rel = Path(*candidate.split(".")[1:])
        if (ROOT / rel).is_dir() or (ROOT / rel).with_suffix(".py").is_file():
            out.append(candidate)
    return out


def wrong_direction(importer: str, imported: str) -> bool:
    if importer.endswith("__main__"):
        return False  # entry points may start the CLI
    mine, theirs = layer(importer), layer(imported)
    if theirs[0] == 4:
        # nobody imports the CLI or the pytest plugin, but the CLI's own modules
        return not importer.startswith("creditflow.conformance.cli") or not imported.startswith(
            "creditflow.conformance.cli"
        )
    if theirs[0] > mine[0]:
        return True
    if mine[0] == 2 and theirs[0] == 2 and mine[1] and theirs[1] > mine[1]:
        return True
    return mine[0] == 2 and mine[1] == 0 and theirs[0] == 2 and theirs[1] > 0


WRONG = [
    ("model.network.rules", "conformance.explore.encoding"),
    ("conformance.explore.check", "adapters.registry"),
    ("conformance.inputs.graphs", "conformance.sweep.cases"),
    ("adapters.registry", "conformance.cli.common"),
    ("conformance.sweep.replay", "conformance.pytest_plugin"),
]
RIGHT = [
    ("adapters.registry", "conformance.differential.adapter"),
    ("conformance.cli.app", "adapters.registry"),
    ("conformance.cli.app", "conformance.cli.common"),
    ("conformance.sweep.cases", "conformance.traces.network"),
]


@pytest.mark.parametrize(
    ("importer", "imported", "wrong"),
    [(*pair, True) for pair in WRONG] + [(*pair, False) for pair in RIGHT],
)
def test_the_checker_knows_the_order(importer, imported, wrong):
    """The checker itself: a wrong-direction import is recognised as one."""
    assert wrong_direction(f"creditflow.{importer}", f"creditflow.{imported}") is wrong


def test_every_import_runs_one_way():
    bad = []
    for path in sources():
        importer = module_name(path)
        for imp in imports_of(path):
            for target in target_of(imp):
                if wrong_direction(importer, target):
                    bad.append(f"{path.relative_to(ROOT)}:{imp.line} imports {target}")
    assert bad == [], "wrong-direction imports:\n" + "\n".join(bad)


def test_no_private_name_is_imported_across_modules():
    bad = [
        f"{path.relative_to(ROOT)}:{imp.line} imports {name} from {imp.module}"
        for path in sources()
        for imp in imports_of(path)
        for name in imp.names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert bad == [], "\n".join(bad)


def test_every_deferred_import_says_why():
    bad = []
    for path in sources():
        lines = path.read_text().splitlines()
        for imp in imports_of(path):
            if not imp.deferred:
                continue
            here = lines[imp.line - 1]
            above = lines[imp.line - 2] if imp.line >= 2 else ""
            if "# deferred:" not in here and "# deferred:" not in above:
                bad.append(f"{path.relative_to(ROOT)}:{imp.line}: {here.strip()}")
    assert bad == [], "deferred imports without a '# deferred: reason' comment:\n" + "\n".join(bad)


def test_conformance_is_capability_packages_only():
    top = {p.name for p in (ROOT / "conformance").glob("*.py")}
    assert top <= CONFORMANCE_TOP_LEVEL, sorted(top - CONFORMANCE_TOP_LEVEL)


@pytest.mark.parametrize(
    "package",
    sorted(
        p.parent.relative_to(ROOT).as_posix()
        for folder in FOLDERS.values()
        for p in (ROOT / folder).rglob("__init__.py")
    ),
)
def test_every_package_says_what_it_owns(package):
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text()))
    assert doc and len(doc.split()) >= 6, f"{package}/__init__.py needs a docstring"


#: FAM-INTERFACE: the capability packages in which no module may be named after a family
FAMILY_FREE = ("explore", "symbolic", "traces", "differential", "sweep", "cli")
#: family modules not yet moved into ``conformance/families/<name>/`` (issue 34). Each
#: entry must still exist (the list cannot go stale) and the list only shrinks.
NOT_YET_MOVED = {
    "explore/network_system.py",  # the NET engine: explore, symbolic, traces import it
    "traces/network.py",  # the NET trace writer: differential, sweep, cli import it
    "sweep/amqp.py",  # sweep/{cases,families,sweepfile,worker} name its kind
    "cli/amqp.py",  # the printing of AMQP check/prove/synth
    "cli/accounts.py",  # the `accounts` and `alarms` command groups (imports adapters)
    "cli/paging.py",  # the `paging` command group (imports adapters)
}


def family_words() -> set[str]:
    """Every registered family's name and the folder its record lives in."""
    from creditflow.conformance.family import registry

    words = set(registry.names())
    words |= {target.partition(":")[0].rsplit(".", 1)[-1] for target in registry.BUILTIN.values()}
    return words


def named_after_a_family(stem: str, words: set[str]) -> bool:
    parts = stem.split("_")
    return stem in words or any(
        "_".join(parts[:i]) in words or "_".join(parts[i:]) in words for i in range(1, len(parts))
    )


def test_the_family_name_check_knows_a_family_module():
    words = {"amqp", "credit_flow", "network", "paging"}
    assert named_after_a_family("amqp", words)
    assert named_after_a_family("amqp_every_supply", words)
    assert named_after_a_family("paging_compare", words)
    assert named_after_a_family("network_system", words)
    assert named_after_a_family("credit_flow", words)
    assert not named_after_a_family("explorer", words)
    assert not named_after_a_family("families", words)


def test_no_capability_package_holds_a_module_named_after_a_family():
    """FAM-INTERFACE: a family's own code lives in ``conformance/families/<name>/``."""
    words = family_words()
    found = {
        path.relative_to(ROOT / "conformance").as_posix()
        for package in FAMILY_FREE
        for path in (ROOT / "conformance" / package).rglob("*.py")
        if named_after_a_family(path.stem, words)
    }
    assert found - NOT_YET_MOVED == set(), "family modules in a capability package"
    assert NOT_YET_MOVED - found == set(), "moved: take it off NOT_YET_MOVED"
