"""The preset process graphs shipped in ``spec/graphs/`` (NET-FILE): their names and
descriptions, read without building the graphs, for ``creditflow presets`` (START-LAZY).
:mod:`.graphs` loads them."""

from __future__ import annotations

from pathlib import Path

from creditflow.conformance.inputs.reading import load_json
from creditflow.spec import spec_dir


def presets_dir() -> Path:
    return spec_dir() / "graphs"


def preset_names() -> list[str]:
    return sorted(p.stem for p in presets_dir().glob("*.json"))


def preset_description(name: str) -> str:
    """The ``description`` graph attribute of preset ``name``, as the loaded graph has it."""
    data = load_json(presets_dir() / f"{name}.json")
    attributes = data.get("graph") if isinstance(data, dict) else None
    return str(attributes.get("description", "")) if isinstance(attributes, dict) else ""
