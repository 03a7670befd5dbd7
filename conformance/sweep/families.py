"""Graph families of a sweep, generated with networkx (SW-FAMILIES, SW-BROKER, SW-SEED,
SW-FAULTS).

Each family kind has named parameters (a sweep file gives each one value or a list of
values to sweep over) and a generator ``build(params, rng) -> nx.DiGraph`` that draws
every random choice from ``rng`` alone, so an instance is a pure function of its
parameters and its seed (SW-SEED). Every kind also takes the fault settings
``may_crash``, ``on_peer_down`` and ``max_crashes`` (SW-FAULTS), applied by
:meth:`FamilyKind.generate` after ``build``. Generated graphs use the NET-NODE/NET-EDGE
attributes; credit specs and supplies are set per case (:mod:`.cases`).

Example::

    >>> import random
    >>> g = FAMILY_KINDS["broker"].build(
    ...     {**FAMILY_KINDS["broker"].defaults(), "mirrors": 1}, random.Random(0))
    >>> sorted(d.get("sends_per_message", 1) for _, _, d in g.edges(data=True))[-1]
    2
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from creditflow.conformance.inputs.schemas import boolean
from creditflow.conformance.sweep import amqp
from creditflow.conformance.sweep.param_checks import word_or_count
from creditflow.model.network.graph import MAX_NODES, ON_PEER_DOWN

Params = Mapping[str, Any]


class ParamError(ValueError):
    """A parameter value a family kind does not accept; the message says why."""


@dataclass(frozen=True)
class Param:
    """One parameter of a family kind: ``check`` validates and normalises one value."""

    name: str
    default: Any
    check: Callable[[Any], Any]
    doc: str
    #: a single value is itself a list (``widths``): a list of lists sweeps over lists
    list_valued: bool = False


@dataclass(frozen=True)
class FamilyKind:
    kind: str
    doc: str
    params: tuple[Param, ...]
    build: Callable[[Params, random.Random], nx.DiGraph]
    #: cross-parameter validation of one parameter point
    check_point: Callable[[Params], None] = lambda params: None
    #: the model the family's cases run: ``net`` (a process graph, NET-GRAPH) or
    #: ``amqp`` (an AMQP topology document, SW-AMQP: :meth:`document`, not ``build``)
    model: str = "net"

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def generate(self, params: Params, rng: random.Random) -> nx.DiGraph:
        """The instance of one parameter point: the kind's graph with the fault
        settings applied (SW-FAULTS)."""
        g = self.build(params, rng)
        apply_faults(g, params)
        return g

    def document(self, params: Params) -> dict[str, Any]:
        """SW-AMQP: the AMQP topology document of one parameter point (kind ``amqp``)."""
        try:
            return amqp.amqp_document(dict(params))
        except amqp.AmqpFamilyError as exc:
            raise ParamError(str(exc)) from None


# -- parameter checks ------------------------------------------------------------------


#: IN-LIMITS: the largest value of any size parameter of a family (processes, edges,
#: layer widths); a generated graph is also bounded by MAX_NODES and MAX_EDGES.
MAX_FAMILY_SIZE = 1_000


def _int_at_least(minimum: int, maximum: int | None = MAX_FAMILY_SIZE) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError(f"must be an integer, got {value!r}")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
            raise ParamError(f"must be {bound}, got {value}")
        return value

    return check


def _probability(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ParamError(f"must be in [0, 1], got {value}")
    return float(value)


def _boolean(value: Any) -> bool:
    try:
        return boolean(value)  # IN-BOOL: the input layer's one check
    except ValueError as exc:
        raise ParamError(str(exc)) from None


_routes = word_or_count("all", 1, ParamError)


def _widths(value: Any) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= MAX_FAMILY_SIZE:
        raise ParamError(f"must be a list of at least two layer widths, got {value!r}")
    out = []
    for w in value:
        if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= MAX_FAMILY_SIZE:
            raise ParamError(
                f"layer widths must be integers in 1..{MAX_FAMILY_SIZE}, got {value!r}"
            )
        out.append(w)
    if sum(out) > MAX_NODES:
        raise ParamError(
            f"layers of {sum(out)} processes in all, more than {MAX_NODES} (IN-LIMITS)"
        )
    return tuple(out)


# -- helpers ---------------------------------------------------------------------------


def _connect_components(g: nx.DiGraph, rng: random.Random, acyclic_order: bool) -> None:
    """Join weakly connected components with one edge each (lower -> higher node index
    when ``acyclic_order``, so a DAG stays a DAG)."""
    components = sorted((sorted(c) for c in nx.weakly_connected_components(g)), key=min)
    for a, b in zip(components, components[1:], strict=False):
        u, v = rng.choice(a), rng.choice(b)
        if acyclic_order and u > v:
            u, v = v, u
        g.add_edge(u, v)


def _mark_sources(g: nx.DiGraph, sources: set[Any]) -> None:
    for n in g.nodes:
        if n in sources:
            g.nodes[n].update(source=True, publishes=1)


def _relabel(g: nx.DiGraph, prefix: str) -> nx.DiGraph:
    return nx.relabel_nodes(g, {n: f"{prefix}{n}" for n in g.nodes})


# -- the families ----------------------------------------------------------------------


def build_broker(params: Params, rng: random.Random) -> nx.DiGraph:
    """SW-BROKER: RabbitMQ's publish path. Every reader feeds its own channels; each
    channel publishes to ``routes`` queues (all, or a seeded random choice covering every
    queue); every queue master writes to the one ``msg_store`` (when ``persistent``); each
    of a queue's ``mirrors`` receives every message its master receives, directly from the
    channel, with 3.10.8's double debit (``sends_per_message = 2``, NET-DEBITS). The first
    ``stalled_queues`` queues are suspended (NET-STALLED)."""
    readers, per_reader = params["readers"], params["channels_per_reader"]
    n_queues, mirrors, routes = params["queues"], params["mirrors"], params["routes"]
    g = nx.DiGraph()
    channels: list[str] = []
    for r in range(readers):
        reader = f"reader{r}"
        g.add_node(reader, source=True, publishes=1, role="rabbit_reader")
        for c in range(per_reader):
            channel = f"channel{r}.{c}" if per_reader > 1 else f"channel{r}"
            g.add_node(channel, role="rabbit_channel")
            g.add_edge(reader, channel)
            channels.append(channel)
    queues = [f"queue{q}" for q in range(n_queues)]
    for q, queue in enumerate(queues):
        g.add_node(queue, role="rabbit_amqqueue_process", stalled=q < params["stalled_queues"])
        for m in range(mirrors):
            g.add_node(f"{queue}.mirror{m}", role="rabbit_mirror_queue_slave")
    if params["persistent"]:
        g.add_node("msg_store", role="rabbit_msg_store")
        for queue in queues:
            g.add_edge(queue, "msg_store")
    if routes == "all" or routes >= n_queues:
        chosen = {ch: list(range(n_queues)) for ch in channels}
    else:
        chosen = {ch: sorted(rng.sample(range(n_queues), routes)) for ch in channels}
        for q in range(n_queues):  # every queue gets at least one publisher
            if not any(q in qs for qs in chosen.values()):
                chosen[rng.choice(channels)].append(q)
    for ch in channels:
        for q in sorted(chosen[ch]):
            g.add_edge(ch, queues[q])
            for m in range(mirrors):
                g.add_edge(ch, f"{queues[q]}.mirror{m}", sends_per_message=2)
    return g


def _check_broker(params: Params) -> None:
    processes = (
        params["readers"] * (1 + params["channels_per_reader"])
        + params["queues"] * (1 + params["mirrors"])
        + 1
    )
    if processes > MAX_NODES:
        raise ParamError(
            f"the broker graph would have {processes} processes, more than {MAX_NODES} (IN-LIMITS)"
        )
    if params["stalled_queues"] > params["queues"]:
        raise ParamError(
            f"stalled_queues ({params['stalled_queues']}) exceeds queues ({params['queues']})"
        )
    _check_broker_faults(params)


def build_random_dag(params: Params, rng: random.Random) -> nx.DiGraph:
    """A random DAG: nodes ``n0 … n{k-1}``, each pair ``i < j`` an edge with probability
    ``edge_probability``, weak components joined (lower -> higher index). Nodes without
    predecessors are the sources."""
    n, p = params["nodes"], params["edge_probability"]
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < p:
                g.add_edge(i, j)
    _connect_components(g, rng, acyclic_order=True)
    _mark_sources(g, {v for v in g.nodes if g.in_degree(v) == 0})
    return _relabel(g, "n")


def build_random_cyclic(params: Params, rng: random.Random) -> nx.DiGraph:
    """A random digraph with at least one cycle: ``edges`` distinct ordered pairs drawn
    uniformly, weak components joined, and — if still acyclic — the reverse of a random
    edge added. Nodes without predecessors are sources; more are drawn until there are
    ``sources`` of them (a source with predecessors relays, NET-SOURCE)."""
    n, m = params["nodes"], params["edges"]
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    g.add_edges_from(rng.sample(pairs, m))
    _connect_components(g, rng, acyclic_order=False)
    if nx.is_directed_acyclic_graph(g):
        u, v = rng.choice(sorted(g.edges))
        g.add_edge(v, u)
    sources = {v for v in g.nodes if g.in_degree(v) == 0}
    others = sorted(set(g.nodes) - sources)
    rng.shuffle(others)
    while len(sources) < params["sources"] and others:
        sources.add(others.pop())
    _mark_sources(g, sources)
    return _relabel(g, "n")


def _check_cyclic(params: Params) -> None:
    n = params["nodes"]
    if params["edges"] > n * (n - 1):
        raise ParamError(f"edges ({params['edges']}) exceeds nodes*(nodes-1) = {n * (n - 1)}")
    if params["sources"] > n:
        raise ParamError(f"sources ({params['sources']}) exceeds nodes ({n})")


def build_layered(params: Params, rng: random.Random) -> nx.DiGraph:
    """Layered fan-in/fan-out: layer ``k`` has ``widths[k]`` processes ``L{k}.{i}``; each
    pair of consecutive-layer processes is an edge with probability ``edge_probability``
    (1.0: complete bipartite), then every process gets at least one predecessor (except
    layer 0, the sources) and one successor (except the last layer, the sinks), and
    weak components are joined by one consecutive-layer edge each."""
    widths, p = params["widths"], params["edge_probability"]
    g = nx.DiGraph()
    layers = [[f"L{k}.{i}" for i in range(w)] for k, w in enumerate(widths)]
    for layer in layers:
        g.add_nodes_from(layer)
    for upper, lower in zip(layers, layers[1:], strict=False):
        for u in upper:
            for v in lower:
                if p >= 1.0 or rng.random() < p:
                    g.add_edge(u, v)
        for v in lower:
            if g.in_degree(v) == 0:
                g.add_edge(rng.choice(upper), v)
        for u in upper:
            if g.out_degree(u) == 0:
                g.add_edge(u, rng.choice(lower))
    # join weak components: each spans every layer, so an edge between consecutive
    # layers of two components always exists
    layer_of = {n: k for k, layer in enumerate(layers) for n in layer}
    components = sorted((sorted(c) for c in nx.weakly_connected_components(g)), key=min)
    for comp in components[1:]:
        main = nx.node_connected_component(g.to_undirected(as_view=True), components[0][0])
        pairs = [(u, v) for u in sorted(main) for v in comp if layer_of[v] == layer_of[u] + 1]
        g.add_edge(*rng.choice(pairs))
    _mark_sources(g, set(layers[0]))
    return g


# -- fault settings (SW-FAULTS) --------------------------------------------------------

#: SW-FAULTS: ``may_crash`` selectors every kind accepts, and the broker's roles
#: (NET-NODE ``role``) that the broker kind accepts besides.
CRASH_SELECTORS = ("none", "sources", "sinks", "relays", "all")
BROKER_CRASH_ROLES = {
    "reader": "rabbit_reader",
    "channel": "rabbit_channel",
    "queue": "rabbit_amqqueue_process",
    "mirror": "rabbit_mirror_queue_slave",
    "msg_store": "rabbit_msg_store",
}
#: SW-FAULTS: the fault parameters every kind takes (not part of an instance's seed)
FAULT_PARAMS = ("may_crash", "on_peer_down", "max_crashes")


def _one_of(allowed: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise ParamError(f"must be one of {', '.join(allowed)}, got {value!r}")
        return value

    return check


def _max_crashes(value: Any) -> int | str:
    if value == "all":
        return "all"
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_NODES:
        raise ParamError(f'must be "all" or an integer in 0..{MAX_NODES}, got {value!r}')
    return value


def _fault_params(selectors: tuple[str, ...]) -> tuple[Param, ...]:
    return (
        Param("may_crash", "none", _one_of(selectors), "which processes may crash (SW-FAULTS)"),
        Param("on_peer_down", "peer_down", _one_of(ON_PEER_DOWN), "every DOWN handler"),
        Param("max_crashes", "all", _max_crashes, 'crashes per run, or "all" (NET-FAULT-BOUND)'),
    )


def crash_selected(g: nx.DiGraph, selector: str) -> list[Any]:
    """SW-FAULTS: the processes of ``g`` that ``selector`` names, in node order."""

    def chosen(n: Any) -> bool:
        if selector == "all":
            return True
        if selector == "sources":
            return bool(g.nodes[n].get("source"))
        if selector == "sinks":
            return g.out_degree(n) == 0
        if selector == "relays":
            return not g.nodes[n].get("source") and g.in_degree(n) > 0 and g.out_degree(n) > 0
        return g.nodes[n].get("role") == BROKER_CRASH_ROLES.get(selector)

    return [n for n in g.nodes if selector != "none" and chosen(n)]


def apply_faults(g: nx.DiGraph, params: Params) -> None:
    """SW-FAULTS: mark the selected processes ``may_crash`` (NET-FAULT-NODE), give every
    process the ``on_peer_down`` handler, and bound the crashes (NET-FAULT-BOUND). The
    defaults (``none``, ``peer_down``, ``all``) leave the graph as built."""
    for n in crash_selected(g, params.get("may_crash", "none")):
        g.nodes[n]["may_crash"] = True
    handler = params.get("on_peer_down", "peer_down")
    if handler != "peer_down":
        for n in g.nodes:
            g.nodes[n]["on_peer_down"] = handler
    if params.get("max_crashes", "all") != "all":
        g.graph["max_crashes"] = params["max_crashes"]


def _check_broker_faults(params: Params) -> None:
    """SW-FAULTS: a broker role that the parameter point does not build crashes nothing."""
    if params.get("may_crash") == "mirror" and params["mirrors"] == 0:
        raise ParamError('may_crash = "mirror" needs mirrors >= 1')
    if params.get("may_crash") == "msg_store" and not params["persistent"]:
        raise ParamError('may_crash = "msg_store" needs persistent = true')


# -- AMQP families (SW-AMQP) -------------------------------------------------------------


def _amqp_check(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def wrapped(value: Any) -> Any:
        try:
            return check(value)
        except amqp.AmqpFamilyError as exc:
            raise ParamError(str(exc)) from None

    return wrapped


def _amqp_not_a_graph(params: Params, rng: random.Random) -> nx.DiGraph:
    """An AMQP family has no process graph (SW-AMQP): its cases are topology documents
    (:meth:`FamilyKind.document`)."""
    raise TypeError("an AMQP family builds topology documents, not process graphs")


def _check_amqp_point(params: Params) -> None:
    """SW-AMQP, SW-FILE: a point whose topology the model cannot run is refused."""
    FAMILY_KINDS[amqp.AMQP_KIND].document(params)


_AMQP_DEFAULTS = amqp.AMQP_PARAMS_DEFAULTS
AMQP_FAMILY = FamilyKind(
    amqp.AMQP_KIND,
    "AMQP 1.0 topologies: credit and session-window policies x sizes (SW-AMQP)",
    (
        Param(
            "topology",
            _AMQP_DEFAULTS["topology"],
            _amqp_check(amqp.check_topology_param),
            "an AMQP preset name or topology file (AMQ-TOPOLOGY)",
        ),
        Param(
            "credit_policy",
            _AMQP_DEFAULTS["credit_policy"],
            _one_of(amqp.CREDIT_POLICIES),
            "the receiving end's credit policy (AMQ-POL-CREDIT-WINDOW, AMQ-RMQ-LINK-CREDIT)",
        ),
        Param(
            "credit_window",
            _AMQP_DEFAULTS["credit_window"],
            _int_at_least(1, 2**31 - 1),
            "its window W (max_link_credit for rabbitmq4)",
        ),
        Param(
            "credit_threshold",
            _AMQP_DEFAULTS["credit_threshold"],
            _amqp_check(amqp.check_threshold_param),
            'its renewal threshold, or "half" (W div 2)',
        ),
        Param(
            "renew_on",
            _AMQP_DEFAULTS["renew_on"],
            _one_of(amqp.RENEW_ON),
            "renew on arrival or as the application settles",
        ),
        Param(
            "session_policy",
            _AMQP_DEFAULTS["session_policy"],
            _one_of(amqp.SESSION_POLICIES),
            "the receiving session's window policy (AMQ-POL-WINDOW-*, AMQ-RMQ-SESSION-WINDOW)",
        ),
        Param(
            "session_window",
            _AMQP_DEFAULTS["session_window"],
            _int_at_least(1, 2**31 - 1),
            "its window (slots for ring, max_incoming_window for rabbitmq4)",
        ),
        Param(
            "session_threshold",
            _AMQP_DEFAULTS["session_threshold"],
            _amqp_check(amqp.check_threshold_param),
            'the fixed window\'s renewal threshold, or "half"',
        ),
        Param(
            "holds",
            _AMQP_DEFAULTS["holds"],
            _amqp_check(amqp.check_holds_param),
            'deliveries the receiving application never settles (AMQ-APP), or "keep"',
        ),
        Param(
            "leader_changes",
            _AMQP_DEFAULTS["leader_changes"],
            _int_at_least(0, 100),
            "quorum-queue leader changes re-sending a credit request (SW-AMQP-FAULTS)",
        ),
    ),
    _amqp_not_a_graph,
    _check_amqp_point,
    model="amqp",
)


FAMILY_KINDS: dict[str, FamilyKind] = {
    k.kind: k
    for k in (
        FamilyKind(
            "broker",
            "RabbitMQ-shaped: readers -> channels -> queues (+ mirrors, double debit) -> msg_store",
            (
                Param("readers", 1, _int_at_least(1), "reader processes (the sources)"),
                Param("channels_per_reader", 1, _int_at_least(1), "channels of each reader"),
                Param("queues", 1, _int_at_least(1), "classic queue masters"),
                Param("mirrors", 0, _int_at_least(0), "mirrors per queue (double debit)"),
                Param("routes", "all", _routes, 'queues each channel publishes to, or "all"'),
                Param("persistent", True, _boolean, "queues write to the one msg_store"),
                Param("stalled_queues", 0, _int_at_least(0), "suspended queues"),
                *_fault_params(CRASH_SELECTORS + tuple(BROKER_CRASH_ROLES)),
            ),
            build_broker,
            _check_broker,
        ),
        FamilyKind(
            "random-dag",
            "random directed acyclic graphs (G(n,p) over an order)",
            (
                Param("nodes", 4, _int_at_least(2), "processes"),
                Param("edge_probability", 0.4, _probability, "probability of each forward edge"),
                *_fault_params(CRASH_SELECTORS),
            ),
            build_random_dag,
        ),
        FamilyKind(
            "random-cyclic",
            "random digraphs with at least one cycle (G(n,m))",
            (
                Param("nodes", 3, _int_at_least(2), "processes"),
                Param("edges", 3, _int_at_least(1), "edges drawn before joining components"),
                Param("sources", 1, _int_at_least(1), "processes with an external supply"),
                *_fault_params(CRASH_SELECTORS),
            ),
            build_random_cyclic,
            _check_cyclic,
        ),
        FamilyKind(
            "layered",
            "layered fan-in/fan-out between consecutive layers",
            (
                Param("widths", (1, 2, 1), _widths, "processes per layer", list_valued=True),
                Param("edge_probability", 1.0, _probability, "probability of each layer edge"),
                *_fault_params(CRASH_SELECTORS),
            ),
            build_layered,
        ),
        AMQP_FAMILY,
    )
}
