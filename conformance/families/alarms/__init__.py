"""The ``alarms`` family (spec/alarms.md, AL-*): memory and disk alarms. A thin record
over the existing engine (``model/alarms/``, ``creditflow alarms``; FAM-OPTIONS:
``check``/``prove``/``synth`` take none of its inputs)."""

from creditflow.conformance.family.interface import Family, Part

_HERE = "creditflow.conformance.families.alarms"

#: FAM-INTERFACE: the alarms family
FAMILY = Family(
    name="alarms",
    title="memory and disk alarms: publishers blocked and unblocked across the cluster",
    spec_files=("alarms.md",),
    property_ids=(),
    options={},
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    preset_folder="alarms",
)
