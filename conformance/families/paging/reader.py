"""FAM-READER for ``paging``: paging scenarios through
``conformance/inputs/paging_scenarios.py`` (IN-*)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.conformance.inputs.paging_scenarios import Scenario, load_scenario, preset_names


class PagingReader:
    document_family = "paging"

    def preset_names(self) -> Sequence[str]:
        return preset_names()

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return document.get("family") == "paging"

    def read(self, source: str, settings: Mapping[str, Any]) -> Scenario:
        return load_scenario(source)

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Any:
        raise NotImplementedError("paging traces are not written")


#: FAM-READER: the paging family's reader
READER = PagingReader()
