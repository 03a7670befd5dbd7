"""The HTTP/2 flow-control family (spec/http2.md, H2-*, PROP-H2-*): stream and
connection windows, SETTINGS deltas, negative windows, resets with DATA in flight."""

from creditflow.conformance.family.interface import Family, Part
from creditflow.model.http2.properties import PROPERTY_IDS

_HERE = "creditflow.conformance.families.http2"

#: FAM-OPTIONS: ``check`` proves every supply (H2-EVERY-SUPPLY, ``--no-prove``,
#: ``--prove-timeout``) and explores the topology's own bodies (no ``--publishes``: a
#: body's octets are the topology's)
OPTIONS = {
    "check": frozenset({"max_states", "full_search", "progress", "no_prove", "prove_timeout"}),
    "prove": frozenset({"timeout_s"}),
}

#: FAM-INTERFACE: the HTTP/2 family.
FAMILY = Family(
    name="http2",
    title="HTTP/2 flow control: stream and connection windows, SETTINGS deltas, resets",
    spec_files=("http2.md",),
    property_ids=PROPERTY_IDS,
    options=OPTIONS,
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    preset_folder="graphs/http2",
    codec=Part(f"{_HERE}.codec:CODEC"),
    alphabet=Part(f"{_HERE}.alphabet:ALPHABET"),
    every_supply=Part(f"{_HERE}.every_supply:EVERY_SUPPLY"),
)
