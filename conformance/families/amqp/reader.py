"""FAM-READER for AMQP 1.0: a thin reader over ``conformance/inputs/amqp_topologies.py``
(AMQ-TOPOLOGY, IN-*): presets under ``spec/graphs/amqp/``, ``"family": "amqp"`` files,
``--config`` applied by the input layer (AMQ-CONFIG, errors in one line naming the file)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from creditflow.conformance.inputs.amqp_topologies import (
    AmqpInput,
    amqp_preset_names,
    find_amqp_input,
    is_amqp_document,
    topology_from_document,
)
from creditflow.conformance.inputs.rabbitmq_config import load_credit_config


class AmqpReader:
    """FAM-READER: AMQP topologies (``find``: the routing of ``check``, ``prove``,
    ``synth``; ``None`` for an input of another family)."""

    document_family = "amqp"

    def preset_names(self) -> Sequence[str]:
        return amqp_preset_names()

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return is_amqp_document(document)

    def read(self, source: str, settings: Mapping[str, Any]) -> AmqpInput:
        found = self.find(source, settings.get("config"))
        if found is None:
            raise ValueError(f"{source}: not an AMQP topology")
        return found

    def find(self, source: str, config: Path | None) -> AmqpInput | None:
        """The AMQP topology ``source`` names (a preset or a file) with ``config``'s
        settings applied, or ``None`` when ``source`` is another family's input;
        ``AmqpTopologyError``/``ConfigFileError`` (one line) for a bad one."""
        found = find_amqp_input(source)
        if found is not None and config is not None:
            found = find_amqp_input(source, load_credit_config(config))
        return found

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Any:
        return topology_from_document(meta.get("graph"), where)


#: FAM-READER: the AMQP family's reader
READER = AmqpReader()
