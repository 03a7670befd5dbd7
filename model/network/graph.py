"""Process graphs: which processes exist and which pairs use credit flow (NET-GRAPH).

A :class:`FlowGraph` is the validated, immutable form of a networkx ``DiGraph``
whose nodes are processes and whose edges carry a credit spec. Validation is
pure; reading files lives in :mod:`creditflow.conformance.inputs.graphs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import networkx as nx

from creditflow.model.attributes import as_bool, as_int, reject_unknown
from creditflow.model.credit.spec import CreditSpec

#: NET-SOURCE: supply of a source node that gives no ``publishes`` of its own.
DEFAULT_PUBLISHES = 3

NODE_ATTRIBUTES = frozenset(
    {
        "source",
        "publishes",
        "checks_blocked",
        "stalled",
        "role",
        "label",
        "description",
        "may_crash",
        "on_peer_down",
    }
)
EDGE_ATTRIBUTES = frozenset(
    {"credit", "initial_credit", "more_credit_after", "sends_per_message", "label", "description"}
)
GRAPH_ATTRIBUTES = frozenset(
    {
        "name",
        "description",
        "credit",
        "publishes",
        "label",
        "node_default",
        "edge_default",
        "max_crashes",
    }
)

#: NET-DOWN: what a DOWN handler does — CF-PEER-DOWN (RabbitMQ's handlers), nothing, or
#: CF-PEER-DOWN on a DOWN that may overtake the dead peer's messages (NET-DOWN-EARLY).
PEER_DOWN, IGNORE, EARLY = "peer_down", "ignore", "peer_down_early"
ON_PEER_DOWN = (PEER_DOWN, IGNORE, EARLY)

#: IN-LIMITS: the largest process graph accepted (every format, every command).
MAX_NODES = 10_000
#: IN-LIMITS: the most edges (credit-flow pairs) of one graph.
MAX_EDGES = 50_000
#: IN-LIMITS: the largest |InitialCredit| and |MoreCreditAfter| of an edge.
MAX_CREDIT = 1_000_000
#: IN-LIMITS: the largest supply of a source.
MAX_PUBLISHES = 1_000_000
#: IN-LIMITS: the most ``credit_flow:send`` calls per message on one edge.
MAX_SENDS_PER_MESSAGE = 64
#: IN-LIMITS: the longest graph or node name (characters).
MAX_NAME_LENGTH = 1024


class GraphError(ValueError):
    """A graph that does not describe a valid process graph; the message says why."""


@dataclass(frozen=True)
class NodeSpec:
    """A process (NET-NODE): a source reads ``publishes`` external messages (NET-SOURCE);
    ``checks_blocked`` makes it stop taking work while blocked (NET-CHECKS-BLOCKED);
    a ``stalled`` process handles nothing at all (NET-STALLED). A ``may_crash`` process
    may die (NET-CRASH); ``on_peer_down`` is what its DOWN handler does (NET-DOWN)."""

    name: str
    source: bool = False
    publishes: int = 0
    checks_blocked: bool = False
    stalled: bool = False
    role: str = ""
    may_crash: bool = False
    on_peer_down: str = PEER_DOWN

    @property
    def calls_peer_down(self) -> bool:
        """NET-DOWN: whether its DOWN handler calls CF-PEER-DOWN."""
        return self.on_peer_down != IGNORE

    @property
    def down_overtakes(self) -> bool:
        """NET-DOWN-EARLY: whether its DOWN may overtake the dead peer's data."""
        return self.on_peer_down == EARLY


@dataclass(frozen=True)
class EdgeSpec:
    """A credit-flow pair sender -> receiver with its spec (NET-EDGE). The sender calls
    ``send`` ``sends_per_message`` times per message and the receiver ``ack`` as often
    (RabbitMQ 3.10.8 debits classic mirrors twice, NET-DEBITS)."""

    sender: str
    receiver: str
    credit: CreditSpec
    sends_per_message: int = 1


@dataclass(frozen=True)
class FlowGraph:
    """A validated process graph (NET-GRAPH). Node order and edge order are fixed."""

    name: str
    nodes: tuple[NodeSpec, ...]
    edges: tuple[EdgeSpec, ...]
    description: str = ""
    #: NET-FAULT-BOUND: the most crashes in one run; ``None``: every ``may_crash`` node
    max_crashes: int | None = None

    def node(self, name: str) -> NodeSpec:
        return self._by_name[name]

    @cached_property
    def _by_name(self) -> dict[str, NodeSpec]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def _adjacent(self) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        out: dict[str, list[str]] = {n.name: [] for n in self.nodes}
        into: dict[str, list[str]] = {n.name: [] for n in self.nodes}
        for e in self.edges:
            out[e.sender].append(e.receiver)
            into[e.receiver].append(e.sender)
        return ({k: tuple(v) for k, v in out.items()}, {k: tuple(v) for k, v in into.items()})

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)

    @property
    def sources(self) -> tuple[NodeSpec, ...]:
        return tuple(n for n in self.nodes if n.source)

    def successors(self, name: str) -> tuple[str, ...]:
        """Receivers of ``name``'s edges, in edge order (IN-WORK: O(1) after the first call)."""
        return self._adjacent[0].get(name, ())

    def predecessors(self, name: str) -> tuple[str, ...]:
        return self._adjacent[1].get(name, ())

    @property
    def crashable(self) -> tuple[NodeSpec, ...]:
        """The ``may_crash`` processes (NET-FAULT-NODE), in node order."""
        return tuple(n for n in self.nodes if n.may_crash)

    @property
    def has_faults(self) -> bool:
        """Whether a run of this graph may contain a crash (NET-CRASH)."""
        return bool(self.crashable) and self.crash_bound > 0

    @property
    def crash_bound(self) -> int:
        """NET-FAULT-BOUND: the most crashes in one run (default: every ``may_crash``
        node), never more than there are such nodes."""
        n = len(self.crashable)
        return n if self.max_crashes is None else min(self.max_crashes, n)

    def with_max_crashes(self, max_crashes: int) -> FlowGraph:
        """NET-FAULT-BOUND: at most ``max_crashes`` crashes per run (the CLI's
        ``--max-crashes``)."""
        if max_crashes < 0:
            raise GraphError(f"max_crashes must be >= 0, got {max_crashes} (NET-FAULT-BOUND)")
        return replace(self, max_crashes=max_crashes)

    def is_dag(self) -> bool:
        return nx.is_directed_acyclic_graph(self.to_networkx())

    def with_credit(self, spec: CreditSpec) -> FlowGraph:
        """Every edge gets ``spec`` (the CLI's ``--credit``), within IN-LIMITS."""
        check_credit(spec, "credit")
        return replace(self, edges=tuple(replace(e, credit=spec) for e in self.edges))

    def with_publishes(self, publishes: int) -> FlowGraph:
        """Every source gets a supply of ``publishes`` (the CLI's ``--publishes``)."""
        if publishes < 0:
            raise GraphError(f"publishes must be >= 0, got {publishes}")
        if publishes > MAX_PUBLISHES:
            raise GraphError(
                f"publishes {publishes} exceeds the maximum {MAX_PUBLISHES} (IN-LIMITS)"
            )
        return replace(
            self,
            nodes=tuple(replace(n, publishes=publishes) if n.source else n for n in self.nodes),
        )

    def with_supplies(self, supplies: Mapping[str, int]) -> FlowGraph:
        """Each source named in ``supplies`` gets that supply (SCOPE-ORDER's runs: the
        supply a witness read); the other sources keep theirs."""
        return replace(
            self,
            nodes=tuple(
                replace(n, publishes=supplies[n.name]) if n.source and n.name in supplies else n
                for n in self.nodes
            ),
        )

    def with_all_checking(self) -> FlowGraph:
        """NET-ALL-CHECK variant: every process stops taking work while blocked."""
        return replace(self, nodes=tuple(replace(n, checks_blocked=True) for n in self.nodes))

    def to_networkx(self) -> nx.DiGraph:
        g = nx.DiGraph(name=self.name, description=self.description)
        if self.max_crashes is not None:
            g.graph["max_crashes"] = self.max_crashes
        for n in self.nodes:
            attrs: dict[str, object] = {
                "checks_blocked": n.checks_blocked,
                "stalled": n.stalled,
            }
            if n.source:
                attrs["source"] = True
                attrs["publishes"] = n.publishes
            if n.role:
                attrs["role"] = n.role
            if n.may_crash:
                attrs["may_crash"] = True
            if n.on_peer_down != PEER_DOWN:
                attrs["on_peer_down"] = n.on_peer_down
            g.add_node(n.name, **attrs)
        for e in self.edges:
            attrs = {"credit": [e.credit.initial, e.credit.more_after]}
            if e.sends_per_message != 1:
                attrs["sends_per_message"] = e.sends_per_message
            g.add_edge(e.sender, e.receiver, **attrs)
        return g


def _bool(value: object, what: str) -> bool:
    return as_bool(value, what, GraphError)


def _int(value: object, what: str, minimum: int | None = None) -> int:
    return as_int(value, what, minimum, GraphError)


def _unknown(keys: Iterable[str], allowed: frozenset[str], what: str) -> None:
    reject_unknown(keys, allowed, what, GraphError)


def check_credit(spec: CreditSpec, what: str) -> CreditSpec:
    """IN-LIMITS: both numbers of a credit spec within ±:data:`MAX_CREDIT`."""
    if abs(spec.initial) > MAX_CREDIT or abs(spec.more_after) > MAX_CREDIT:
        raise GraphError(
            f"{what} {list(spec)} exceeds the maximum |credit| {MAX_CREDIT} (IN-LIMITS)"
        )
    return spec


def _limited(value: int, what: str, maximum: int) -> int:
    if value > maximum:
        raise GraphError(f"{what} {value} exceeds the maximum {maximum} (IN-LIMITS)")
    return value


def _name(value: object, what: str) -> str:
    text = str(value)
    if len(text) > MAX_NAME_LENGTH:
        raise GraphError(f"{what} is longer than {MAX_NAME_LENGTH} characters (IN-LIMITS)")
    return text


def _credit(value: object, what: str) -> CreditSpec:
    if isinstance(value, str):
        parts = value.strip().strip("{}[]() ").split(",")
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        raise GraphError(f"{what} must be [InitialCredit, MoreCreditAfter], got {value!r}")
    if len(parts) != 2:
        raise GraphError(f"{what} must be [InitialCredit, MoreCreditAfter], got {value!r}")
    return check_credit(
        CreditSpec(_int(parts[0], f"{what}[0]"), _int(parts[1], f"{what}[1]")), what
    )


def _edge_credit(attrs: Mapping[str, object], default: CreditSpec | None, what: str) -> CreditSpec:
    if "credit" in attrs:
        return _credit(attrs["credit"], f"{what} credit")
    if "initial_credit" in attrs or "more_credit_after" in attrs:
        if "initial_credit" not in attrs or "more_credit_after" not in attrs:
            raise GraphError(f"{what}: give both initial_credit and more_credit_after")
        return check_credit(
            CreditSpec(
                _int(attrs["initial_credit"], f"{what} initial_credit"),
                _int(attrs["more_credit_after"], f"{what} more_credit_after"),
            ),
            f"{what} credit",
        )
    if default is None:
        raise GraphError(f"{what} has no credit spec (set 'credit': [I, M] or a graph default)")
    return default


def flow_graph_from_networkx(g: nx.Graph, name: str = "graph") -> FlowGraph:
    """Validate a networkx graph into a :class:`FlowGraph` (NET-GRAPH).

    Raises :class:`GraphError` with a one-line reason naming the node or edge; sizes and
    values beyond IN-LIMITS are refused. Linear in the size of the graph.
    """
    if not isinstance(g, nx.DiGraph) or g.is_multigraph():
        raise GraphError("the graph must be directed and not a multigraph")
    if g.number_of_nodes() == 0:
        raise GraphError("the graph has no nodes")
    if g.number_of_nodes() > MAX_NODES:
        raise GraphError(f"{g.number_of_nodes()} nodes exceed the maximum {MAX_NODES} (IN-LIMITS)")
    if g.number_of_edges() > MAX_EDGES:
        raise GraphError(f"{g.number_of_edges()} edges exceed the maximum {MAX_EDGES} (IN-LIMITS)")
    _unknown(g.graph.keys(), GRAPH_ATTRIBUTES, "graph")
    graph_name = _name(g.graph.get("name") or name, "the graph name")
    default_credit = _credit(g.graph["credit"], "graph credit") if "credit" in g.graph else None
    default_publishes = (
        _limited(_int(g.graph["publishes"], "graph publishes", 0), "graph publishes", MAX_PUBLISHES)
        if "publishes" in g.graph
        else DEFAULT_PUBLISHES
    )
    max_crashes = (
        _int(g.graph["max_crashes"], "graph max_crashes (NET-FAULT-BOUND)", 0)
        if "max_crashes" in g.graph
        else None
    )
    names: dict[object, str] = {}
    seen: set[str] = set()
    nodes: list[NodeSpec] = []
    for raw, attrs in g.nodes(data=True):
        if not isinstance(raw, (str, int)) or isinstance(raw, bool):
            raise GraphError(f"node id {raw!r} must be a string or an integer")
        node = _name(raw, "a node id")
        what = f"node {node!r}"
        if node in seen:
            raise GraphError(f"{what} appears twice (IN-DUPLICATE)")
        seen.add(node)
        names[raw] = node
        _unknown(attrs.keys(), NODE_ATTRIBUTES, what)
        has_publishes = "publishes" in attrs
        source = _bool(attrs["source"], f"{what} source") if "source" in attrs else has_publishes
        publishes = (
            _limited(
                _int(attrs["publishes"], f"{what} publishes", 0), f"{what} publishes", MAX_PUBLISHES
            )
            if has_publishes
            else default_publishes
        )
        if has_publishes and not source:
            raise GraphError(f"{what} has publishes but source is false")
        checks = (
            _bool(attrs["checks_blocked"], f"{what} checks_blocked")
            if "checks_blocked" in attrs
            else source
        )
        nodes.append(
            NodeSpec(
                name=node,
                source=source,
                publishes=publishes if source else 0,
                checks_blocked=checks,
                stalled=_bool(attrs.get("stalled", False), f"{what} stalled"),
                role=str(attrs.get("role", "")),
                may_crash=_bool(attrs.get("may_crash", False), f"{what} may_crash"),
                on_peer_down=_on_peer_down(attrs.get("on_peer_down", PEER_DOWN), what),
            )
        )
    edges: list[EdgeSpec] = []
    for u, v, attrs in g.edges(data=True):
        what = f"edge {names[u]!r}->{names[v]!r}"
        if u == v:
            raise GraphError(f"{what} is a self-loop; a process has no credit toward itself")
        _unknown(attrs.keys(), EDGE_ATTRIBUTES, what)
        edges.append(
            EdgeSpec(
                sender=names[u],
                receiver=names[v],
                credit=_edge_credit(attrs, default_credit, what),
                sends_per_message=_limited(
                    _int(attrs.get("sends_per_message", 1), f"{what} sends_per_message", 1),
                    f"{what} sends_per_message",
                    MAX_SENDS_PER_MESSAGE,
                ),
            )
        )
    if not any(n.source for n in nodes):
        raise GraphError("no source node: mark at least one node with 'source': true")
    paired = {e.sender for e in edges} | {e.receiver for e in edges}
    for n in nodes:
        if n.may_crash and n.name not in paired:
            raise GraphError(
                f"node {n.name!r}: may_crash on a process with no credit pair (NET-FAULT-NODE)"
            )
    return FlowGraph(
        name=graph_name,
        nodes=tuple(nodes),
        edges=tuple(edges),
        description=str(g.graph.get("description", "")),
        max_crashes=max_crashes,
    )


def _on_peer_down(value: object, what: str) -> str:
    """NET-FAULT-NODE: ``on_peer_down`` is one of :data:`ON_PEER_DOWN`."""
    if value not in ON_PEER_DOWN:
        raise GraphError(
            f"{what} on_peer_down must be one of {', '.join(map(repr, ON_PEER_DOWN))}, "
            f"got {value!r} (NET-FAULT-NODE)"
        )
    return str(value)
