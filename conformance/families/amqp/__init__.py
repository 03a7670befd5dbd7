"""The AMQP 1.0 flow-control family (spec/amqp.md, AMQ-*, PROP-AMQ-*): link credit,
session windows, RabbitMQ 4's session and relay, the quorum-queue end."""

from creditflow.conformance.family.interface import Family, Part

_HERE = "creditflow.conformance.families.amqp"

#: FAM-INTERFACE: the AMQP family. ``options`` is filled in by each command's owner.
FAMILY = Family(
    name="amqp",
    title="AMQP 1.0 flow control: link credit, session windows, RabbitMQ 4's relay, quorum queues",
    spec_files=("amqp.md", "adapter-protocol-amqp.md"),
    property_ids=(),
    options={},
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    codec=Part(f"{_HERE}.codec:CODEC"),
    every_supply=Part(f"{_HERE}.every_supply:EVERY_SUPPLY"),
    synthesis=Part(f"{_HERE}.synthesis:SYNTHESIS"),
    alphabet=Part(f"{_HERE}.alphabet:ALPHABET"),
    sweep=Part(f"{_HERE}.sweep:SWEEP"),
)
