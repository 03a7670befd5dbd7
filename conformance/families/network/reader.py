"""FAM-READER for ``credit_flow``: process graphs (presets, node-link JSON, GraphML)
through ``conformance/inputs/graphs.py`` (IN-*). It has no ``find``: a graph no other
family claims is this family's, read by the NET commands themselves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.conformance.inputs.graphs import load_graph
from creditflow.conformance.inputs.presets import preset_names
from creditflow.model.network.graph import FlowGraph


class NetworkReader:
    document_family = "credit_flow"

    def preset_names(self) -> Sequence[str]:
        return preset_names()

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return "nodes" in document and document.get("family", "credit_flow") == "credit_flow"

    def read(self, source: str, settings: Mapping[str, Any]) -> FlowGraph:
        return load_graph(source)

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Any:
        raise NotImplementedError("the credit_flow traces are read by conformance/traces")


#: FAM-READER: the credit_flow family's reader
READER = NetworkReader()
