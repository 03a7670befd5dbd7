"""One `creditflow.*` namespace over the top-level folders, from an editable install and
from a wheel (feasibility.md §3: an unlisted package silently drops out of the wheel)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {
    "spec": "creditflow.spec",
    "model": "creditflow.model",
    "conformance": "creditflow.conformance",
    "adapters": "creditflow.adapters",
}


def source_packages() -> set[str]:
    found = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *rel.parts]) if rel.parts else package)
    return found


def test_every_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert listed == source_packages() | data_packages()
    for folder, package in FOLDERS.items():
        assert config["tool"]["setuptools"]["package-dir"][package] == folder


def test_editable_install_maps_the_folders():
    import creditflow.adapters
    import creditflow.conformance
    import creditflow.model

    assert Path(creditflow.model.__file__).resolve().parent == ROOT / "model"
    assert Path(creditflow.conformance.__file__).resolve().parent == ROOT / "conformance"
    assert Path(creditflow.adapters.__file__).resolve().parent == ROOT / "adapters"


@pytest.mark.slow
def test_wheel_builds_quietly_installs_and_imports_everything(tmp_path):
    """Build the wheel (one build for both checks): the build prints no "is absent from the
    `packages` configuration" / "Package would be ignored" warning; installed alone into a
    fresh venv (dependencies borrowed from this one), every module imports and the console
    script runs."""
    dist = tmp_path / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    output = done.stdout + done.stderr
    assert "would be ignored" not in output and "absent from the `packages`" not in output
    wheel = next(dist.glob("creditflow-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # dependencies from this environment, without its editable finder
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    probe = (
        "import importlib, pkgutil, creditflow, pathlib\n"
        "names = [m.name for m in pkgutil.walk_packages(creditflow.__path__, 'creditflow.')]\n"
        "for n in names: importlib.import_module(n)\n"
        "import creditflow.model as m\n"
        "from creditflow.conformance.inputs.graphs import preset_names\n"
        "print(len(names), pathlib.Path(m.__file__).parent, ','.join(preset_names()))\n"
        "from creditflow.conformance.differential.corpus import corpus_dir\n"
        "from creditflow.adapters.rabbitmq.module import escript_path\n"
        "print(len(list(corpus_dir().glob('*.itf.json'))), escript_path().is_file())\n"
    )
    out = subprocess.run(
        [py, "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path
    ).stdout.split()
    assert int(out[0]) >= len(source_packages())
    assert out[1].startswith(site)
    assert "fanout" in out[2].split(",")
    assert int(out[3]) >= 10 and out[4] == "True"  # the trace corpus and the escript
    help_text = subprocess.run(
        [venv / "bin" / "creditflow", "presets"], check=True, capture_output=True, text=True
    ).stdout
    assert "rabbitmq-publish" in help_text


def data_packages() -> set[str]:
    """The folders that ship only data (package-data): setuptools counts each as an
    importable namespace package and warns when one is not listed."""
    found = set()
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            if not path.is_dir() or path.name == "__pycache__" or (path / "__init__.py").exists():
                continue
            rel = path.relative_to(ROOT / folder)
            if not all(part.isidentifier() for part in rel.parts):
                continue
            if any(f.is_file() and f.suffix != ".py" for f in path.iterdir()):
                found.add(".".join([package, *rel.parts]))
    return found


def test_data_folders_are_listed_so_setuptools_does_not_warn():
    """A data-only folder (spec/graphs, adapters/erlang, ...) missing from `packages`
    makes every build print "Package would be ignored" (~440 lines on `make demo`)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert data_packages() <= listed, sorted(data_packages() - listed)
