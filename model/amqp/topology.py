"""The ``"family": "amqp"`` topology (AMQ-TOPOLOGY): a node-link document turned into
one of the three shapes the transition system runs. Pure: takes the parsed JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

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


class TopologyError(ValueError):
    """A topology the model cannot run; the message names the place (AMQ-TOPOLOGY)."""


Shape = Literal["link", "publish", "consume"]


@dataclass(frozen=True)
class Topology:
    """A checked topology (AMQ-TOPOLOGY). ``supply`` is the sender's ``publishes`` (link,
    publish) or the queue's ``ready`` (consume)."""

    name: str
    shape: Shape
    initial: int
    supply: int
    sender_window: WindowPolicy  # the sending side's session policy (its incoming window)
    receiver: ReceiverConfig  # link, consume: the client receiver
    sender_credit: SenderCredit
    broker_window: WindowPolicy | None = (
        None  # publish: the broker session; consume: the broker session
    )
    broker_credit: RabbitLinkCredit | None = None  # publish
    relay: RelayPolicy | None = None  # consume
    queue: QueuePolicy | None = None  # publish, consume


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


def _int(v: Any, where: str, low: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise TopologyError(f"{where}: expected an integer ≥ {low}, got {v!r}")
    return v


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
            raise TopologyError(f"nodes[{i}].id: expected a string")
        if nid in by_id:
            raise TopologyError(f"nodes[{i}]: duplicate id {nid!r}")
        kind = n.get("kind")
        if kind not in _NODE_KEYS:
            raise TopologyError(f"nodes[{i}] ({nid}).kind: unknown kind {kind!r}")
        _keys(n, _NODE_KEYS[kind], f"nodes[{i}] ({nid})")
        by_id[nid] = n
    succ: dict[str, str] = {}
    pred: dict[str, str] = {}
    for i, e in enumerate(edges):
        e = _obj(e, f"edges[{i}]")
        s, t = e.get("source"), e.get("target")
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
    """Check a node-link document and build its :class:`Topology` (AMQ-TOPOLOGY)."""
    graph = _obj(doc.get("graph", {}), "graph")
    if graph.get("family") != "amqp":
        raise TopologyError("graph.family: expected 'amqp'")
    name = str(graph.get("name", name))
    initial = _int(graph.get("initial", 0), "graph.initial")
    if initial >= 2**32:
        raise TopologyError("graph.initial: must be below 2^32")
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
            _int(snd.get("publishes", 3), f"{w[0]}.publishes"),
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
            _int(snd.get("publishes", 3), f"{w[0]}.publishes"),
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
            _int(q.get("ready", 3), f"{w[0]}.ready"),
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
