"""FAM-READER for ``alarms``: alarm timelines through
``conformance/inputs/alarm_timelines.py`` (the instance is the timeline's configuration)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.conformance.inputs.alarm_timelines import load_timeline, timeline_names


class AlarmsReader:
    document_family = "alarms"

    def preset_names(self) -> Sequence[str]:
        return timeline_names()

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return document.get("family") == "alarms"

    def read(self, source: str, settings: Mapping[str, Any]) -> Any:
        return load_timeline(source).config

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Any:
        raise NotImplementedError("alarm traces are read by conformance/traces")


#: FAM-READER: the alarms family's reader
READER = AlarmsReader()
