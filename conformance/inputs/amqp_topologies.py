"""AMQP topology files and presets (AMQ-TOPOLOGY, AMQ-PRESETS) through the input layer:
read bounded (IN-READ), parsed strictly (duplicate keys refused), then checked by the
model's :func:`~creditflow.model.amqp.topology.topology_from_dict`; any problem is one
:class:`AmqpTopologyError` line naming the file and the place (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from creditflow.conformance.inputs.reading import InputError, load_json
from creditflow.model.amqp.topology import Topology, TopologyError, topology_from_dict
from creditflow.spec import spec_dir


class AmqpTopologyError(InputError):
    """An AMQP topology file or preset that cannot be used; ``str()`` is one line."""


def amqp_presets_dir() -> Path:
    """``spec/graphs/amqp/`` (AMQ-PRESETS)."""
    return spec_dir() / "graphs" / "amqp"


def amqp_preset_names() -> list[str]:
    """The shipped AMQP presets and stall shapes (AMQ-PRESETS)."""
    return sorted(p.stem for p in amqp_presets_dir().glob("*.json"))


def is_amqp_document(data: Any) -> bool:
    """Whether a parsed node-link document says ``"family": "amqp"`` (AMQ-TOPOLOGY)."""
    graph = data.get("graph") if isinstance(data, dict) else None
    return isinstance(graph, dict) and graph.get("family") == "amqp"


def topology_from_document(data: Any, where: str) -> Topology:
    """AMQ-TOPOLOGY on a parsed document; one line naming ``where`` and the place."""
    if not isinstance(data, dict):
        raise AmqpTopologyError(where, "expected a node-link JSON object")
    try:
        return topology_from_dict(data, Path(where).stem)
    except TopologyError as exc:
        raise AmqpTopologyError(where, str(exc)) from None


def load_amqp_topology(path: str | Path) -> Topology:
    """Read and check one AMQP topology file (AMQ-TOPOLOGY)."""
    where = str(path)
    try:
        data = load_json(path, where)
    except InputError as exc:
        raise AmqpTopologyError(str(exc)) from None
    return topology_from_document(data, where)


def load_amqp_preset(name: str) -> Topology:
    """An AMQP preset by name (AMQ-PRESETS: ``rabbitmq4-publish``, ``rabbitmq4-consume``,
    and the stall shapes of ``spec/graphs/amqp/``)."""
    path = amqp_presets_dir() / f"{name}.json"
    if not path.is_file():
        names = ", ".join(amqp_preset_names())
        raise AmqpTopologyError(f"{name}: no such AMQP preset (presets: {names})")
    return load_amqp_topology(path)


def find_amqp_topology(graph: str) -> Topology | None:
    """The AMQP topology ``graph`` names, or ``None`` when it names something else (a
    NET graph file or preset): a JSON file whose ``graph.family`` is ``"amqp"``, or an
    AMQP preset name (AMQ-TOPOLOGY, AMQ-PRESETS). A file that is not readable JSON is
    left to the NET reader, which reports it."""
    path = Path(graph)
    if path.is_file():
        if path.suffix.lower() != ".json":
            return None
        try:
            data = load_json(path)
        except InputError:
            return None
        return topology_from_document(data, str(path)) if is_amqp_document(data) else None
    if not path.suffix and "/" not in graph and graph in amqp_preset_names():
        return load_amqp_preset(graph)
    return None
