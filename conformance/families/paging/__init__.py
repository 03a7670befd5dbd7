"""The ``paging`` family (spec/paging.md, PG-*): classic-queue paging. A thin record
over the existing engine (``model/paging/``, ``conformance/cli/paging.py``); its commands
are the ``creditflow paging`` group, so ``check``/``prove``/``synth`` take none of its
inputs (FAM-OPTIONS: no options there)."""

from creditflow.conformance.family.interface import Family, Part

_HERE = "creditflow.conformance.families.paging"

#: FAM-INTERFACE: the paging family
FAMILY = Family(
    name="paging",
    title="classic-queue paging: memory, paging to disk, credit and flow (RabbitMQ 3.x)",
    spec_files=("paging.md",),
    property_ids=(),
    options={},
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    preset_folder="paging",
)
