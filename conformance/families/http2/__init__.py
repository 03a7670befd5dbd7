"""The HTTP/2 flow-control family (spec/http2.md, H2-*, PROP-H2-*): stream and
connection windows, SETTINGS deltas, negative windows, resets with DATA in flight."""

from creditflow.conformance.family.interface import Family, Part
from creditflow.model.http2.properties import PROPERTY_IDS

_HERE = "creditflow.conformance.families.http2"

#: FAM-INTERFACE: the HTTP/2 family. ``options`` is filled in by each command's owner.
FAMILY = Family(
    name="http2",
    title="HTTP/2 flow control: stream and connection windows, SETTINGS deltas, resets",
    spec_files=("http2.md",),
    property_ids=PROPERTY_IDS,
    options={},
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    codec=Part(f"{_HERE}.codec:CODEC"),
)
