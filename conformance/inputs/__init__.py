"""Every file format creditflow reads: process graphs (node-link JSON, GraphML, DOT),
actor graphs, paging scenarios, ITF traces and expectations files. Each reader turns a
bad file into one error naming the file and the problem (exit 2)."""

from creditflow.conformance.inputs.actor_graphs import (
    ActorGraphFileError,
    actor_graph_to_node_link,
    actor_preset_names,
    load_actor_graph,
)
from creditflow.conformance.inputs.expectations import (
    Expectations,
    ExpectationsError,
    load_expectations,
    shipped_expectations,
)
from creditflow.conformance.inputs.graphs import (
    GraphFileError,
    graph_from_node_link,
    graph_to_node_link,
    load_graph,
    load_graph_file,
    load_preset,
    networkx_from_node_link,
)
from creditflow.conformance.inputs.itf import (
    Record,
    TraceFormatError,
    Variant,
    decode,
    decoded_states,
    encode,
    option,
    read_document,
    trace_document,
    validate_document,
    write_document,
)
from creditflow.conformance.inputs.paging_scenarios import (
    Scenario,
    ScenarioError,
    ScenarioRun,
    ScenarioStep,
    load_scenario,
    parse_scenario,
    run_scenario,
)

__all__ = [
    "ActorGraphFileError",
    "Expectations",
    "ExpectationsError",
    "GraphFileError",
    "Record",
    "Scenario",
    "ScenarioError",
    "ScenarioRun",
    "ScenarioStep",
    "TraceFormatError",
    "Variant",
    "actor_graph_to_node_link",
    "actor_preset_names",
    "decode",
    "decoded_states",
    "encode",
    "graph_from_node_link",
    "graph_to_node_link",
    "load_actor_graph",
    "load_expectations",
    "load_graph",
    "load_graph_file",
    "load_preset",
    "load_scenario",
    "networkx_from_node_link",
    "option",
    "parse_scenario",
    "read_document",
    "run_scenario",
    "shipped_expectations",
    "trace_document",
    "validate_document",
    "write_document",
]
