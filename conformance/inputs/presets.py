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


def preset_documents(folder: str) -> dict[str, str]:
    """FAM-PRESETS: each preset document of ``spec/<folder>`` by name, with what it says of
    itself (its ``description``, else its ``graph.description``), read as plain JSON."""
    described: dict[str, str] = {}
    for path in sorted((spec_dir() / folder).glob("*.json"), key=lambda p: p.stem):
        data = load_json(path)
        about = data.get("description") if isinstance(data, dict) else None
        if about is None and isinstance(data, dict) and isinstance(data.get("graph"), dict):
            about = data["graph"].get("description")
        described[path.stem] = str(about or "")
    return described
