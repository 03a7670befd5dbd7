"""AMQP topology files and presets (AMQ-TOPOLOGY, AMQ-PRESETS) through the input layer:
read bounded (IN-READ), parsed strictly (duplicate keys refused), then checked here by
:func:`topology_from_dict` (AMQ-TOPOLOGY, AMQ-TOPOLOGY-LIMITS), which builds the model's
frozen :class:`~creditflow.model.amqp.topology.Topology`; any problem is one
:class:`AmqpTopologyError` line naming the file and the place (exit 2)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from creditflow.conformance.inputs.reading import (
    InputError,
    checked_name,
    json_file_data,
    load_json,
)
from creditflow.model.amqp.endpoints import ReceiverConfig
from creditflow.model.amqp.policies import (
    CreditPolicy,
    CreditWindow,
    QueuePolicy,
    RabbitLinkCredit,
    RabbitSessionWindow,
    RelayPolicy,
    SenderCredit,
    WindowCapacity,
    WindowFixed,
    WindowNever,
    WindowPolicy,
    WindowRing,
)
from creditflow.model.amqp.topology import Topology
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


class TopologyError(ValueError):
    """A topology document the model cannot run; the message names the place
    (AMQ-TOPOLOGY). :func:`topology_from_document` adds the file."""


_NODE_KEYS = {
    "endpoint": {
        "id",
        "kind",
        "role",
        "publishes",
        "holds",
        "credit",
        "sender_credit",
        "grants",
        "drains",
    },
    "session": {"id", "kind", "window", "credit"},
    "relay": {"id", "kind", "max_queue_credit"},
    "queue": {
        "id",
        "kind",
        "ready",
        "max_length",
        "overflow",
        "limit_removable",
        "go_on_limit_removed",
        "soft_limit",
        "consumer",
        "leader_changes",
    },
}


#: AMQ-TOPOLOGY-LIMITS: a supply (``publishes``, ``ready``) at most IN-LIMITS' largest
#: supply; the first delivery-count (``initial``) any ``uint``; every other number
#: (windows, credits, counts) at most 2^31 − 1, the largest addend RFC 1982 serial
#: addition defines (AMQ-SERIAL, ``model/amqp/serial.py``'s ``MAX_ADDEND``), so every
#: number the reader accepts is one the model handles.
MAX_SUPPLY = 1_000_000  # model/network/graph.py's MAX_PUBLISHES, not imported: START-LAZY
MAX_UINT = 2**32 - 1
MAX_AMOUNT = 2**31 - 1


def _int(v: Any, where: str, low: int = 0, high: int = MAX_AMOUNT) -> int:
    """An integer in ``low … high`` (AMQ-TOPOLOGY-LIMITS), or one line naming ``where``."""
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise TopologyError(f"{where}: expected an integer ≥ {low}, got {v!r}")
    if v > high:
        raise TopologyError(f"{where}: {v} exceeds the maximum {high} (AMQ-TOPOLOGY-LIMITS)")
    return v


def _shown(v: Any) -> str:
    """A JSON value for a one-line message: its kind, never a long Python repr."""
    kinds = {dict: "an object", list: "a list", type(None): "null", bool: "a boolean"}
    if type(v) in kinds:
        return kinds[type(v)]
    text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


def _bool(v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        raise TopologyError(f"{where}: expected true or false, got {v!r}")
    return v


def _obj(v: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise TopologyError(f"{where}: expected an object, got {v!r}")
    return v


def _keys(d: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(k for k in d if k not in allowed and not str(k).startswith("x-"))
    if unknown:
        raise TopologyError(f"{where}: unknown attribute {unknown[0]!r}")


def credit_policy(v: Any, where: str) -> CreditPolicy:
    """A receiving endpoint's credit policy (AMQ-POL-CREDIT-WINDOW, AMQ-RMQ-LINK-CREDIT;
    ``null``: by hand only, AMQ-POL-CREDIT-MANUAL)."""
    if v is None:
        return None
    d = _obj(v, where)
    kind = d.get("policy")
    try:
        if kind == "window":
            _keys(d, {"policy", "window", "threshold", "count", "encoding", "renew_on"}, where)
            return CreditWindow(
                _int(d.get("window"), f"{where}.window", 1),
                _int(d.get("threshold", 0), f"{where}.threshold"),
                d.get("count", "credit"),
                d.get("encoding", "absolute"),
                d.get("renew_on", "arrival"),
            )
        if kind == "rabbitmq4":
            _keys(d, {"policy", "max_link_credit"}, where)
            return RabbitLinkCredit(
                _int(d.get("max_link_credit", 170), f"{where}.max_link_credit", 1)
            )
        if kind == "manual":
            _keys(d, {"policy"}, where)
            return None
    except ValueError as e:
        if isinstance(e, TopologyError):
            raise
        raise TopologyError(f"{where}: {e}") from None
    raise TopologyError(f"{where}.policy: unknown credit policy {kind!r}")


def window_policy(v: Any, where: str) -> WindowPolicy:
    """A session endpoint's incoming-window policy (AMQ-POL-WINDOW-*, AMQ-RMQ-SESSION-WINDOW)."""
    d = _obj(v, where)
    kind = d.get("policy")
    try:
        if kind == "fixed":
            _keys(d, {"policy", "window", "threshold"}, where)
            return WindowFixed(
                _int(d.get("window"), f"{where}.window", 1),
                _int(d.get("threshold", 0), f"{where}.threshold"),
            )
        if kind == "never":
            _keys(d, {"policy", "window"}, where)
            return WindowNever(_int(d.get("window"), f"{where}.window"))
        if kind == "ring":
            _keys(d, {"policy", "slots"}, where)
            return WindowRing(_int(d.get("slots"), f"{where}.slots", 1))
        if kind == "capacity":
            _keys(d, {"policy", "capacity", "frame"}, where)
            return WindowCapacity(
                _int(d.get("capacity"), f"{where}.capacity"),
                _int(d.get("frame"), f"{where}.frame", 1),
            )
        if kind == "rabbitmq4":
            _keys(d, {"policy", "max_incoming_window"}, where)
            return RabbitSessionWindow(
                _int(d.get("max_incoming_window", 400), f"{where}.max_incoming_window", 1)
            )
    except ValueError as e:
        if isinstance(e, TopologyError):
            raise
        raise TopologyError(f"{where}: {e}") from None
    raise TopologyError(f"{where}.policy: unknown window policy {kind!r}")


def _sender_credit(v: Any, where: str) -> SenderCredit:
    """AMQ-POL-SENDER-CREDIT."""
    d = _obj(v, where)
    _keys(d, {"formula"}, where)
    formula = d.get("formula", "serial")
    if formula not in ("serial", "ignore_in_flight"):
        raise TopologyError(f"{where}.formula: unknown formula {formula!r}")
    return SenderCredit(formula)


def _chain(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    nodes = doc.get("nodes")
    edges = doc.get("edges", doc.get("links"))
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise TopologyError("nodes and edges must be lists")
    by_id: dict[str, Mapping[str, Any]] = {}
    for i, n in enumerate(nodes):
        n = _obj(n, f"nodes[{i}]")
        nid = n.get("id")
        if not isinstance(nid, str):
            raise TopologyError(f"nodes[{i}].id: expected a string, got {_shown(nid)}")
        try:
            checked_name(nid, "the id")
        except ValueError as exc:
            raise TopologyError(f"nodes[{i}].id: {exc}") from None
        if nid in by_id:
            raise TopologyError(f"nodes[{i}]: duplicate id {nid!r}")
        kind = n.get("kind")
        if not isinstance(kind, str) or kind not in _NODE_KEYS:
            raise TopologyError(f"nodes[{i}] ({nid}).kind: unknown kind {kind!r}")
        _keys(n, _NODE_KEYS[kind], f"nodes[{i}] ({nid})")
        by_id[nid] = n
    succ: dict[str, str] = {}
    pred: dict[str, str] = {}
    for i, e in enumerate(edges):
        e = _obj(e, f"edges[{i}]")
        s, t = e.get("source"), e.get("target")
        for end, value in (("source", s), ("target", t)):
            if not isinstance(value, str):
                raise TopologyError(
                    f"edges[{i}].{end}: expected a node id (a string), got {_shown(value)}"
                )
        if s not in by_id or t not in by_id:
            raise TopologyError(f"edges[{i}]: edge to an undeclared node ({s!r} -> {t!r})")
        if s in succ or t in pred:
            raise TopologyError(f"edges[{i}]: the topology must be one chain ({s!r} -> {t!r})")
        succ[str(s)], pred[str(t)] = str(t), str(s)
    heads = [n for n in by_id if n not in pred]
    if len(heads) != 1:
        raise TopologyError("the topology must be one chain with one start")
    chain = [heads[0]]
    while chain[-1] in succ:
        chain.append(succ[chain[-1]])
    if len(chain) != len(by_id):
        raise TopologyError("the topology must be one chain (a cycle or a separate part was found)")
    return [by_id[n] for n in chain]


def _receiver(n: Mapping[str, Any], window: WindowPolicy, where: str) -> ReceiverConfig:
    if n.get("role") != "receiver":
        raise TopologyError(f"{where}.role: expected 'receiver'")
    grants = n.get("grants", [])
    if not isinstance(grants, list):
        raise TopologyError(f"{where}.grants: expected a list")
    return ReceiverConfig(
        credit=credit_policy(n.get("credit"), f"{where}.credit"),
        window=window,
        holds=_int(n.get("holds", 0), f"{where}.holds"),
        grants=tuple(_int(g, f"{where}.grants[{i}]") for i, g in enumerate(grants)),
        drains=_int(n.get("drains", 0), f"{where}.drains"),
    )


def _queue(n: Mapping[str, Any], where: str) -> QueuePolicy:
    overflow = n.get("overflow", "reject_publish")
    if overflow != "reject_publish":
        raise TopologyError(
            f"{where}.overflow: only 'reject_publish' is modelled, got {overflow!r}"
        )
    limit = n.get("max_length")
    consumer = (
        _obj(n.get("consumer", {"mode": "credited"}), f"{where}.consumer")
        if "consumer" in n
        else None
    )
    if consumer is not None:
        _keys(consumer, {"mode", "prefetch"}, f"{where}.consumer")
    raw_mode = "credited" if consumer is None else consumer.get("mode", "credited")
    if raw_mode not in ("credited", "simple_prefetch"):
        raise TopologyError(f"{where}.consumer.mode: unknown mode {raw_mode!r}")
    mode: Literal["credited", "simple_prefetch"] = (
        "credited" if raw_mode == "credited" else "simple_prefetch"
    )
    return QueuePolicy(
        max_length=None if limit is None else _int(limit, f"{where}.max_length"),
        soft_limit=_int(n.get("soft_limit", 32), f"{where}.soft_limit", 1),
        limit_removable=_bool(n.get("limit_removable", False), f"{where}.limit_removable"),
        go_on_limit_removed=_bool(
            n.get("go_on_limit_removed", True), f"{where}.go_on_limit_removed"
        ),
        consumes=consumer is not None,
        consumer_mode=mode,
        prefetch=0
        if consumer is None
        else _int(consumer.get("prefetch", 0), f"{where}.consumer.prefetch"),
        leader_changes=_int(n.get("leader_changes", 0), f"{where}.leader_changes"),
    )


def topology_from_dict(doc: Mapping[str, Any], name: str = "topology") -> Topology:
    """Check a node-link document and build its :class:`Topology` (AMQ-TOPOLOGY,
    AMQ-TOPOLOGY-LIMITS); a problem is a :class:`TopologyError` naming the place."""
    graph = _obj(doc.get("graph", {}), "graph")
    if graph.get("family") != "amqp":
        raise TopologyError("graph.family: expected 'amqp'")
    try:
        name = checked_name(graph.get("name", name), "graph.name")
    except ValueError as exc:
        raise TopologyError(str(exc)) from None
    initial = _int(graph.get("initial", 0), "graph.initial", high=MAX_UINT)
    chain = _chain(doc)
    kinds = [n["kind"] for n in chain]
    w = [f"nodes ({n['id']})" for n in chain]
    if kinds == ["endpoint", "session", "session", "endpoint"]:
        snd, ss, rs, rcv = chain
        if snd.get("role") != "sender":
            raise TopologyError(f"{w[0]}.role: expected 'sender'")
        return Topology(
            name,
            "link",
            initial,
            _int(snd.get("publishes", 3), f"{w[0]}.publishes", high=MAX_SUPPLY),
            window_policy(ss.get("window"), f"{w[1]}.window"),
            _receiver(rcv, window_policy(rs.get("window"), f"{w[2]}.window"), w[3]),
            _sender_credit(snd.get("sender_credit", {}), f"{w[0]}.sender_credit"),
        )
    if kinds == ["endpoint", "session", "session", "queue"]:
        snd, ss, bs, q = chain
        if snd.get("role") != "sender":
            raise TopologyError(f"{w[0]}.role: expected 'sender'")
        if q.get("leader_changes", 0):  # AMQ-FAULT-LEADER-CHANGE
            raise TopologyError(
                f"{w[3]}.leader_changes: only a consume shape's queue takes credit requests "
                "to re-send"
            )
        credit = credit_policy(bs.get("credit", {"policy": "rabbitmq4"}), f"{w[2]}.credit")
        if not isinstance(credit, RabbitLinkCredit):
            raise TopologyError(f"{w[2]}.credit: the broker session's policy must be 'rabbitmq4'")
        return Topology(
            name,
            "publish",
            initial,
            _int(snd.get("publishes", 3), f"{w[0]}.publishes", high=MAX_SUPPLY),
            window_policy(ss.get("window"), f"{w[1]}.window"),
            ReceiverConfig(None, RabbitSessionWindow(), 0, (), 0),
            _sender_credit(snd.get("sender_credit", {}), f"{w[0]}.sender_credit"),
            broker_window=window_policy(bs.get("window"), f"{w[2]}.window"),
            broker_credit=credit,
            queue=_queue(q, w[3]),
        )
    if kinds == ["queue", "relay", "session", "session", "endpoint"]:
        q, relay, bs, cs, rcv = chain
        qp = _queue(q, w[0])
        if qp.consumer_mode != "credited":
            raise TopologyError(f"{w[0]}.consumer.mode: the relay serves 'credited' consumers only")
        return Topology(
            name,
            "consume",
            initial,
            _int(q.get("ready", 3), f"{w[0]}.ready", high=MAX_SUPPLY),
            window_policy(bs.get("window"), f"{w[2]}.window"),
            _receiver(rcv, window_policy(cs.get("window"), f"{w[3]}.window"), w[4]),
            SenderCredit(),
            broker_window=window_policy(bs.get("window"), f"{w[2]}.window"),
            relay=RelayPolicy(
                _int(relay.get("max_queue_credit", 256), f"{w[1]}.max_queue_credit", 1)
            ),
            queue=qp,
        )
    raise TopologyError(
        f"unsupported shape {' -> '.join(kinds)} (expected link, publish or consume)"
    )


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

    @property
    def name(self) -> str:
        """FAM-READER (the engine's ``Instance``): the topology's name."""
        return self.topology.name

    @property
    def description(self) -> str:
        """AMQ-PRESETS: the topology's shape and the document's own description."""
        about = self.document.get("graph", {}).get("description", "")
        return f"[{self.topology.shape}] {about}".rstrip()


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
        data = json_file_data(path)
        return _read(data, str(path), "file", config) if is_amqp_document(data) else None
    if not path.suffix and "/" not in graph and graph in amqp_preset_names():
        return read_amqp_preset(graph, config)
    return None


def find_amqp_topology(graph: str) -> Topology | None:
    """:func:`find_amqp_input`'s topology."""
    found = find_amqp_input(graph)
    return None if found is None else found.topology
