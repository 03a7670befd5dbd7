"""AMQP topology files and presets (AMQ-TOPOLOGY, AMQ-PRESETS) through the input layer:
read bounded (IN-READ), parsed strictly (duplicate keys refused), then checked by the
model's :func:`~creditflow.model.amqp.topology.topology_from_dict`; any problem is one
:class:`AmqpTopologyError` line naming the file and the place (exit 2)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from creditflow.conformance.inputs.reading import InputError, load_json
from creditflow.model.amqp.topology import Topology, TopologyError, topology_from_dict
from creditflow.spec import spec_dir

if TYPE_CHECKING:  # the config reader loads the graph model (networkx): START-LAZY
    from creditflow.conformance.inputs.rabbitmq_config import CreditSettings


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


@dataclass(frozen=True)
class AmqpSetting:
    """One credit, window or limit in effect (AMQ-SETTINGS): the node it belongs to,
    what it limits (``link``, ``session``, ``relay``, ``queue``), the attribute, its value
    and where the value came from: ``preset`` (the shipped file), ``file`` (the user's
    topology file), ``default`` (the attribute left out: the reader's default) or
    ``--config FILE``."""

    node: str
    limits: str
    key: str
    value: int
    source: str


@dataclass(frozen=True)
class AmqpInput:
    """An AMQP topology as read (AMQ-TOPOLOGY): the checked model topology, the
    document it was built from (``--config`` applied; embedded in traces), where it came
    from, and the settings in effect (AMQ-SETTINGS)."""

    topology: Topology
    document: dict[str, Any]
    where: str
    settings: tuple[AmqpSetting, ...]


#: AMQ-SETTINGS: per policy, the attributes that are numbers and their reader defaults
_POLICY_KEYS: dict[str, tuple[tuple[str, int | None], ...]] = {
    "rabbitmq4-window": (("max_incoming_window", 400),),
    "rabbitmq4-credit": (("max_link_credit", 170),),
    "fixed": (("window", None), ("threshold", 0)),
    "never": (("window", None),),
    "ring": (("slots", None),),
    "capacity": (("capacity", None), ("frame", None)),
    "window": (("window", None), ("threshold", 0)),
}

#: AMQ-CONFIG: which node attribute each advanced.config key sets
_CONFIG_TARGETS = {
    "max_incoming_window": ("session", "window", "max_incoming_window"),
    "max_link_credit": ("session", "credit", "max_link_credit"),
    "max_queue_credit": ("relay", None, "max_queue_credit"),
    "quorum_commands_soft_limit": ("queue", None, "soft_limit"),
}


def _policy_settings(
    node: str, limits: str, policy: Any, kind: str, origin: str, configured: dict[str, str]
) -> list[AmqpSetting]:
    if not isinstance(policy, dict):
        return []
    name = policy.get("policy")
    keys = _POLICY_KEYS.get(f"rabbitmq4-{kind}" if name == "rabbitmq4" else str(name), ())
    out = []
    for key, default in keys:
        value = policy.get(key, default)
        if isinstance(value, int) and not isinstance(value, bool):
            source = configured.get(key) or (origin if key in policy else "default")
            out.append(AmqpSetting(node, limits, f"{name}.{key}", value, source))
    return out


def amqp_settings(
    doc: dict[str, Any], origin: str, configured: dict[tuple[str, str], str] | None = None
) -> tuple[AmqpSetting, ...]:
    """AMQ-SETTINGS: every credit, window and limit of a checked topology document,
    in node order, with where each value came from (``configured``: per (node id,
    attribute), the ``--config`` that set it)."""
    configured = configured or {}
    out: list[AmqpSetting] = []
    for n in doc.get("nodes", []):
        nid, kind = str(n.get("id")), n.get("kind")
        mine = {attr: src for (node, attr), src in configured.items() if node == nid}
        if kind == "session":
            out += _policy_settings(nid, "session", n.get("window"), "window", origin, mine)
            out += _policy_settings(nid, "link", n.get("credit"), "credit", origin, mine)
        elif kind == "endpoint" and n.get("role") == "receiver":
            out += _policy_settings(nid, "link", n.get("credit"), "credit", origin, mine)
        elif kind == "relay":
            value = n.get("max_queue_credit", 256)
            source = mine.get("max_queue_credit") or (
                origin if "max_queue_credit" in n else "default"
            )
            out.append(AmqpSetting(nid, "relay", "max_queue_credit", value, source))
        elif kind == "queue":
            for key, default in (("soft_limit", 32), ("max_length", None)):
                value = n.get(key, default)
                if value is not None:
                    source = mine.get(key) or (origin if key in n else "default")
                    out.append(AmqpSetting(nid, "queue", key, value, source))
    return tuple(out)


def apply_amqp_config(
    doc: dict[str, Any], config: CreditSettings
) -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    """AMQ-CONFIG: a copy of ``doc`` with the ``rabbit`` settings of an advanced.config
    put where RabbitMQ 4 uses them (``max_incoming_window``: every session window of
    policy ``rabbitmq4``; ``max_link_credit``: every credit policy ``rabbitmq4``;
    ``max_queue_credit``: the relay; ``quorum_commands_soft_limit``: the queue's
    ``soft_limit``), and which (node, attribute) each one set."""
    doc = copy.deepcopy(doc)
    configured: dict[tuple[str, str], str] = {}
    source = f"--config {config.where}"
    for key, value in config.amqp:
        kind, policy_attr, attr = _CONFIG_TARGETS[key]
        for n in doc.get("nodes", []):
            if not isinstance(n, dict) or n.get("kind") != kind:
                continue
            if policy_attr is None:
                n[attr] = value
            else:
                target = n.get(policy_attr)
                if kind == "session" and policy_attr == "credit" and target is None:
                    continue
                if not isinstance(target, dict) or target.get("policy") != "rabbitmq4":
                    continue
                target[attr] = value
            configured[(str(n.get("id")), attr)] = source
    return doc, configured


def _read(data: Any, where: str, origin: str, config: CreditSettings | None) -> AmqpInput:
    if not isinstance(data, dict):
        raise AmqpTopologyError(where, "expected a node-link JSON object")
    configured: dict[tuple[str, str], str] = {}
    if config is not None and config.amqp:
        data, configured = apply_amqp_config(data, config)
    topology = topology_from_document(data, where)
    return AmqpInput(topology, data, where, amqp_settings(data, origin, configured))


def load_amqp_topology(path: str | Path) -> Topology:
    """Read and check one AMQP topology file (AMQ-TOPOLOGY)."""
    return read_amqp_file(path, "file").topology


def read_amqp_file(
    path: str | Path, origin: str = "file", config: CreditSettings | None = None
) -> AmqpInput:
    """Read and check one AMQP topology file (AMQ-TOPOLOGY), ``config`` applied
    (AMQ-CONFIG), with its settings in effect (AMQ-SETTINGS)."""
    where = str(path)
    try:
        data = load_json(path, where)
    except InputError as exc:
        raise AmqpTopologyError(str(exc)) from None
    return _read(data, where, origin, config)


def load_amqp_preset(name: str) -> Topology:
    """An AMQP preset by name (AMQ-PRESETS: ``rabbitmq4-publish``, ``rabbitmq4-consume``,
    and the stall shapes of ``spec/graphs/amqp/``)."""
    return read_amqp_preset(name).topology


def read_amqp_preset(name: str, config: CreditSettings | None = None) -> AmqpInput:
    """An AMQP preset by name (AMQ-PRESETS), ``config`` applied (AMQ-CONFIG)."""
    path = amqp_presets_dir() / f"{name}.json"
    if not path.is_file():
        names = ", ".join(amqp_preset_names())
        raise AmqpTopologyError(f"{name}: no such AMQP preset (presets: {names})")
    return read_amqp_file(path, "preset", config)


def find_amqp_input(graph: str, config: CreditSettings | None = None) -> AmqpInput | None:
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
        return _read(data, str(path), "file", config) if is_amqp_document(data) else None
    if not path.suffix and "/" not in graph and graph in amqp_preset_names():
        return read_amqp_preset(graph, config)
    return None


def find_amqp_topology(graph: str) -> Topology | None:
    """:func:`find_amqp_input`'s topology."""
    found = find_amqp_input(graph)
    return None if found is None else found.topology
