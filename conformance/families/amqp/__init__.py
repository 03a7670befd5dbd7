"""The AMQP 1.0 flow-control family (spec/amqp.md, AMQ-*, PROP-AMQ-*): link credit,
session windows, RabbitMQ 4's session and relay, the quorum-queue end."""

from creditflow.conformance.family.interface import Family, Part

_HERE = "creditflow.conformance.families.amqp"

#: FAM-OPTIONS: the options (click parameter names) each command takes for AMQP, beyond
#: the input, ``--json``, ``--timeout``, ``--trace-out``, ``--dot-out`` (every family's).
#: ``check``: no symmetry is argued and no safe action named (FAM-CHECKING), so
#: ``--no-symmetry``/``--no-reduction`` would turn off nothing and are refused.
OPTIONS: dict[str, frozenset[str]] = {
    "check": frozenset(
        {
            "config",
            "publishes",
            "graph_supply",
            "max_states",
            "full_search",
            "no_prove",
            "prove_timeout",
            "progress",
        }
    ),
    "prove": frozenset({"config", "timeout_s"}),
    "synth": frozenset({"config", "publishes", "max_credit", "minimise", "timeout_s"}),
    "show": frozenset({"json", "as_json"}),
}

#: PROP-AMQ-*, in the order of spec/amqp.md
PROPERTY_IDS = (
    "PROP-AMQ-CREDIT",
    "PROP-AMQ-NONNEG",
    "PROP-AMQ-AGREE",
    "PROP-AMQ-DRAIN",
    "PROP-AMQ-NO-STALL",
    "PROP-AMQ-PUBLISHER-GO",
    "PROP-AMQ-BOUNDS",
    "PROP-AMQ-CONSERVATION",
    "PROP-AMQ-RESEND",
)

#: FAM-INTERFACE: the AMQP family.
FAMILY = Family(
    name="amqp",
    title="AMQP 1.0 flow control: link credit, session windows, RabbitMQ 4's relay, quorum queues",
    spec_files=("amqp.md", "adapter-protocol-amqp.md"),
    property_ids=PROPERTY_IDS,
    options=OPTIONS,
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    preset_folder="graphs/amqp",
    codec=Part(f"{_HERE}.codec:CODEC"),
    every_supply=Part(f"{_HERE}.every_supply:EVERY_SUPPLY"),
    synthesis=Part(f"{_HERE}.synthesis:SYNTHESIS"),
    alphabet=Part(f"{_HERE}.alphabet:ALPHABET"),
    sweep=Part(f"{_HERE}.sweep:SWEEP"),
)
