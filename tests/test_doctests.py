"""Every docstring example in the package runs (one test per module that has any).

Collected by ``make test`` like any test; an example that needs a broker or a network
is marked ``# doctest: +SKIP`` where it stands."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "creditflow.model": "model",
    "creditflow.conformance": "conformance",
    "creditflow.adapters": "adapters",
}


def modules_with_examples() -> list[str]:
    names = []
    for package, folder in PACKAGES.items():
        for info in pkgutil.walk_packages([str(ROOT / folder)], package + "."):
            if info.name.endswith("__main__"):
                continue
            source = (ROOT / folder / Path(*info.name.split(".")[2:])).with_suffix(".py")
            if not source.is_file():
                source = source.with_suffix("") / "__init__.py"
            if ">>>" in source.read_text():
                names.append(info.name)
    return sorted(names)


MODULES = modules_with_examples()


def test_there_are_examples():
    assert len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
