"""FAM-PRESETS: ``creditflow presets`` lists every family's presets from the documents in
its preset folder, without loading its reader (START-LAZY), and the names it lists are
exactly the ones the family's reader reads."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.family import registry
from creditflow.conformance.inputs.presets import preset_documents

FOLDERED = [f.name for f in registry.families() if f.preset_folder is not None]


@pytest.mark.parametrize("name", FOLDERED)
def test_the_listed_presets_are_the_ones_the_reader_reads(name):
    family = registry.get(name)
    assert family.preset_folder is not None
    described = preset_documents(family.preset_folder)
    reader = family.reader.load()
    assert sorted(described) == sorted(reader.preset_names())
    for preset, about in described.items():
        assert about, f"{name} preset {preset} has no description"
        reader.read(preset, {})  # each listed name reads


def test_every_family_with_presets_has_a_heading_and_its_lines():
    out = CliRunner().invoke(main, ["presets"]).output.splitlines()
    for name in FOLDERED:
        family = registry.get(name)
        assert family.preset_folder is not None
        heading = out.index(f"{name} presets: {family.title}")
        listed = [x.split()[0] for x in out[heading + 1 :] if x.startswith("  ")]
        names = sorted(preset_documents(family.preset_folder))
        assert listed[: len(names)] == names
    assert {"amqp", "http2", "paging", "accounts", "alarms"} <= set(FOLDERED)
