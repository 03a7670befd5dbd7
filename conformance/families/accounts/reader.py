"""FAM-READER for ``accounts``: actor graphs through ``conformance/inputs/actor_graphs.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.conformance.inputs.actor_graphs import actor_preset_names, load_actor_graph
from creditflow.model.accounts.graph import ActorGraph


class AccountsReader:
    document_family = "accounts"

    def preset_names(self) -> Sequence[str]:
        return actor_preset_names()

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return document.get("family") == "accounts"

    def read(self, source: str, settings: Mapping[str, Any]) -> ActorGraph:
        return load_actor_graph(source)

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Any:
        raise NotImplementedError("accounts traces are read by conformance/traces")


#: FAM-READER: the accounts family's reader
READER = AccountsReader()
