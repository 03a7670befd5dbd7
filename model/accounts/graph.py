"""Actor graphs for Syndicate-style accounts (AC-GRAPH).

An :class:`ActorGraph` is the validated, immutable form of a networkx ``DiGraph``
whose nodes are actors and whose edges say where an actor sends events: for every
event an actor handles it sends ``events`` events along each out-edge. Readers
(actors with an input loop, like a relay reading a socket) have a supply of
``reads`` packets of ``batch`` events each, and an account. Validation is pure;
files are read in :mod:`creditflow.conformance.inputs.actor_graphs`.

Example (the seed's: A reads a socket, the dataspace D fans out to O1..O3)::

    >>> import networkx as nx

from creditflow.model.attributes import as_bool, as_int, reject_unknown
    >>> g = nx.DiGraph(limit=5)
    >>> g.add_node("A", reads=2)
    >>> g.add_edges_from([("A", "D")] + [("D", f"O{i}") for i in (1, 2, 3)])
    >>> actor_graph_from_networkx(g).readers
    ('A',)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import networkx as nx

from creditflow.model.attributes import as_bool, as_int, reject_unknown
from creditflow.model.network.graph import MAX_EDGES, MAX_NODES

#: AC-LIMIT: syndicate-rs' default ``SYNDICATE_CREDIT``.
DEFAULT_LIMIT = 100

NODE_ATTRIBUTES = frozenset(
    {"reads", "batch", "account", "stalled", "may_crash", "timer", "role", "label", "description"}
)
EDGE_ATTRIBUTES = frozenset({"events", "label", "description"})
GRAPH_ATTRIBUTES = frozenset({"name", "description", "limit", "max_hops", "label"})


class ActorGraphError(ValueError):
    """A graph that does not describe a valid actor graph; the message says why."""


@dataclass(frozen=True)
class ActorSpec:
    """An actor (AC-GRAPH). A *reader* (``reads`` given) runs an input loop charged to
    ``account`` (AC-READ); ``stalled`` actors never run a turn (a consumer that never
    catches up); ``may_crash`` actors may die once (AC-CRASH); ``timer`` firings are
    armed by the actor's first turn and charged to that turn's account (AC-TIMER)."""

    name: str
    reads: int | None = None
    batch: int = 1
    account: str = ""
    stalled: bool = False
    may_crash: bool = False
    timer: int = 0
    role: str = ""

    @property
    def is_reader(self) -> bool:
        return self.reads is not None


@dataclass(frozen=True)
class SendSpec:
    """Per event handled, ``sender`` sends ``events`` events to ``receiver`` (AC-FANOUT)."""

    sender: str
    receiver: str
    events: int = 1


@dataclass(frozen=True)
class ActorGraph:
    """A validated actor graph. Actor and edge order are fixed; ``accounts`` lists the
    accounts in order of their first reader."""

    name: str
    actors: tuple[ActorSpec, ...]
    sends: tuple[SendSpec, ...]
    limit: int = DEFAULT_LIMIT
    max_hops: int | None = None
    description: str = ""

    @property
    def actor_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actors)

    @property
    def readers(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actors if a.is_reader)

    @property
    def accounts(self) -> tuple[str, ...]:
        seen: list[str] = []
        for a in self.actors:
            if a.is_reader and a.account not in seen:
                seen.append(a.account)
        return tuple(seen)

    def actor(self, name: str) -> ActorSpec:
        for a in self.actors:
            if a.name == name:
                return a
        raise KeyError(name)

    def successors(self, name: str) -> tuple[SendSpec, ...]:
        return tuple(s for s in self.sends if s.sender == name)

    def with_limit(self, limit: int) -> ActorGraph:
        if limit < 0:
            raise ActorGraphError(f"limit must be >= 0, got {limit}")
        return replace(self, limit=limit)

    def with_reads(self, reads: int) -> ActorGraph:
        """Every reader gets a supply of ``reads`` packets."""
        if reads < 0:
            raise ActorGraphError(f"reads must be >= 0, got {reads}")
        return replace(
            self, actors=tuple(replace(a, reads=reads) if a.is_reader else a for a in self.actors)
        )

    def to_networkx(self) -> nx.DiGraph:
        g = nx.DiGraph(name=self.name, description=self.description, limit=self.limit)
        if self.max_hops is not None:
            g.graph["max_hops"] = self.max_hops
        for a in self.actors:
            attrs: dict[str, object] = {}
            if a.is_reader:
                attrs.update(reads=a.reads, batch=a.batch, account=a.account)
            for key in ("stalled", "may_crash"):
                if getattr(a, key):
                    attrs[key] = True
            if a.timer:
                attrs["timer"] = a.timer
            if a.role:
                attrs["role"] = a.role
            g.add_node(a.name, **attrs)
        for s in self.sends:
            g.add_edge(s.sender, s.receiver, events=s.events)
        return g


#: IN-LIMITS: the largest number any actor-graph attribute (reads, batch, limit, events,
#: timer, max_hops) may hold; sizes are bounded like process graphs' (MAX_NODES, MAX_EDGES).
MAX_ACTOR_VALUE = 1_000_000


def _int(value: object, what: str, minimum: int) -> int:
    number = as_int(value, what, minimum, ActorGraphError)
    if number > MAX_ACTOR_VALUE:
        raise ActorGraphError(f"{what} {number} exceeds the maximum {MAX_ACTOR_VALUE} (IN-LIMITS)")
    return number


def _bool(value: object, what: str) -> bool:
    return as_bool(value, what, ActorGraphError)


def _unknown(keys: Iterable[str], allowed: frozenset[str], what: str) -> None:
    reject_unknown(keys, allowed, what, ActorGraphError)


def actor_graph_from_networkx(g: nx.Graph, name: str = "actors") -> ActorGraph:
    """Validate a networkx graph into an :class:`ActorGraph` (AC-GRAPH).

    Raises :class:`ActorGraphError` with a one-line reason naming the actor or edge.
    """
    if not isinstance(g, nx.DiGraph) or g.is_multigraph():
        raise ActorGraphError("the actor graph must be directed and not a multigraph")
    if g.number_of_nodes() == 0:
        raise ActorGraphError("the actor graph has no actors")
    if g.number_of_nodes() > MAX_NODES or g.number_of_edges() > MAX_EDGES:
        raise ActorGraphError(f"more than {MAX_NODES} actors or {MAX_EDGES} edges (IN-LIMITS)")
    _unknown(g.graph.keys(), GRAPH_ATTRIBUTES, "graph")
    limit = _int(g.graph.get("limit", DEFAULT_LIMIT), "graph limit", 0)
    max_hops = g.graph.get("max_hops")
    max_hops = None if max_hops is None else _int(max_hops, "graph max_hops", 1)
    actors: list[ActorSpec] = []
    names: dict[object, str] = {}
    seen: set[str] = set()
    for raw, attrs in g.nodes(data=True):
        if not isinstance(raw, (str, int)) or isinstance(raw, bool):
            raise ActorGraphError(f"actor id {raw!r} must be a string or an integer")
        actor = str(raw)
        what = f"actor {actor!r}"
        if actor in seen:
            raise ActorGraphError(f"{what} appears twice (IN-DUPLICATE)")
        seen.add(actor)
        names[raw] = actor
        _unknown(attrs.keys(), NODE_ATTRIBUTES, what)
        reads = _int(attrs["reads"], f"{what} reads", 0) if "reads" in attrs else None
        if reads is None and ("batch" in attrs or "account" in attrs):
            raise ActorGraphError(f"{what} has batch or account but is no reader (give reads)")
        actors.append(
            ActorSpec(
                name=actor,
                reads=reads,
                batch=_int(attrs.get("batch", 1), f"{what} batch", 1),
                account=str(attrs.get("account", actor)) if reads is not None else "",
                stalled=_bool(attrs.get("stalled", False), f"{what} stalled"),
                may_crash=_bool(attrs.get("may_crash", False), f"{what} may_crash"),
                timer=_int(attrs.get("timer", 0), f"{what} timer", 0),
                role=str(attrs.get("role", "")),
            )
        )
    sends: list[SendSpec] = []
    for u, v, attrs in g.edges(data=True):
        what = f"edge {names[u]!r}->{names[v]!r}"
        _unknown(attrs.keys(), EDGE_ATTRIBUTES, what)
        events = _int(attrs.get("events", 1), f"{what} events", 1)
        sends.append(SendSpec(names[u], names[v], events))
    if not any(a.is_reader for a in actors):
        raise ActorGraphError("no reader: give at least one actor 'reads': N")
    if max_hops is None and not nx.is_directed_acyclic_graph(g):
        cycle = " -> ".join(str(u) for u, _ in nx.find_cycle(g))
        raise ActorGraphError(
            f"the actor graph has a cycle ({cycle}); set the graph's max_hops so that "
            "events stop circulating"
        )
    return ActorGraph(
        name=str(g.graph.get("name") or name),
        actors=tuple(actors),
        sends=tuple(sends),
        limit=limit,
        max_hops=max_hops,
        description=str(g.graph.get("description", "")),
    )


def seed_example(fanout: int = 9, limit: int = 5, reads: int = 1) -> ActorGraph:
    """The worked example of Syndicate's flow-control note: reader A (threshold
    ``limit``) -> dataspace D -> O1..O``fanout``."""
    g = nx.DiGraph(
        name=f"seed-a-d-o{fanout}",
        limit=limit,
        description="A reads a socket; D fans every event out to the O's",
    )
    g.add_node("A", reads=reads, role="relay input loop")
    g.add_node("D", role="dataspace")
    for i in range(1, fanout + 1):
        g.add_edge("D", f"O{i}")
    g.add_edge("A", "D")
    return actor_graph_from_networkx(g)
