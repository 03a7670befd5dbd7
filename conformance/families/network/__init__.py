"""The ``credit_flow`` family (spec/credit-flow.md, spec/network.md: CF-*, NET-*, PROP-*):
RabbitMQ's per-process ``credit_flow`` over process graphs. A thin record over the NET
engine, which stays where it is (``conformance/explore/``, ``conformance/symbolic/``); it
is the family of every graph no other family's reader claims (FAM-REGISTRY)."""

from creditflow.conformance.family.interface import Family, Part

_HERE = "creditflow.conformance.families.network"

_GRAPH_CREDITS = ("credit", "config", "edge_credit", "role_credit")

#: FAM-OPTIONS: the NET commands take every option they declare (they are the options'
#: origin); ``synth --minimise`` is AMQP's (AMQ-SYNTH)
OPTIONS: dict[str, frozenset[str]] = {
    "check": frozenset(
        {
            *_GRAPH_CREDITS,
            "publishes",
            "graph_supply",
            "all_check_blocked",
            "mailbox_bound",
            "max_states",
            "max_crashes",
            "no_symmetry",
            "no_reduction",
            "partial_order",
            "full_search",
            "no_prove",
            "prove_timeout",
            "progress",
        }
    ),
    "prove": frozenset(
        {
            *_GRAPH_CREDITS,
            "symbolic",
            "depth",
            "publishes",
            "graph_supply",
            "all_check_blocked",
            "mailbox_bound",
            "max_crashes",
            "timeout_s",
        }
    ),
    "synth": frozenset(
        {
            *_GRAPH_CREDITS,
            "goal",
            "bound",
            "per_edge",
            "every_edge",
            "publishes",
            "max_credit",
            "depth",
            "max_crashes",
            "timeout_s",
        }
    ),
}

#: FAM-INTERFACE: the credit_flow family
FAMILY = Family(
    name="credit_flow",
    title="RabbitMQ credit_flow over process graphs: credit, blocking, deadlocks",
    spec_files=("credit-flow.md", "network.md"),
    property_ids=(
        "PROP-CONSERVATION",
        "PROP-NO-DEADLOCK",
    ),
    options=OPTIONS,
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
)
