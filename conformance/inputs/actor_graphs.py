"""Reading actor graphs from files and presets (AC-GRAPH).

Like :mod:`creditflow.conformance.inputs.graphs`: networkx node-link JSON or GraphML; a bare
name is a preset shipped in ``spec/graphs/accounts/``. Every problem is an
:class:`ActorGraphFileError` whose message names the file and the problem on one line.
"""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx

from creditflow.conformance.inputs.bounds import MAX_OVERSHOOT_PLACES, MAX_POTENTIAL_BITS
from creditflow.conformance.inputs.graphs import GraphFileError, load_graph_file_networkx
from creditflow.conformance.inputs.reading import InputError, checked_name
from creditflow.model.accounts.graph import ActorGraph, ActorGraphError, actor_graph_from_networkx
from creditflow.model.accounts.rules import AccountsModel
from creditflow.model.network.graph import GraphError
from creditflow.spec import spec_dir


class ActorGraphFileError(InputError):
    """An actor-graph file or preset that cannot be used; ``str()`` is one line."""


def actor_presets_dir() -> Path:
    return spec_dir() / "graphs" / "accounts"


def actor_preset_names() -> list[str]:
    return sorted(p.stem for p in actor_presets_dir().glob("*.json"))


def load_actor_graph(graph: str | Path) -> ActorGraph:
    """An actor-graph file, or a preset name when no such file exists."""
    path = Path(graph)
    if not path.is_file():
        if path.suffix or "/" in str(graph):
            raise ActorGraphFileError(f"{graph}: no such file")
        path = actor_presets_dir() / f"{graph}.json"
        if not path.is_file():
            raise ActorGraphFileError(
                f"{graph}: no such actor-graph file or preset "
                f"(presets: {', '.join(actor_preset_names())})"
            )
    try:
        g = load_graph_file_networkx(path)
    except GraphFileError as exc:
        raise ActorGraphFileError(str(exc)) from None
    try:
        if "name" in g.graph:  # IN-LIMITS for GraphML too (node-link: IN-SCHEMA)
            checked_name(g.graph["name"], "the graph name")
        actors = actor_graph_from_networkx(g, name=path.stem)
    except (ActorGraphError, GraphError, ValueError) as exc:
        raise ActorGraphFileError(f"{path}: {exc}") from None
    check_overshoot_work(actors, str(path))
    return actors


def overshoot_places(model: AccountsModel, most: int) -> int:
    """IN-OVERSHOOT-WORK: the (actor, hop) places AC-OVERSHOOT's bounds visit, summed over
    accounts (the places each account's reads and reachable timers send to, hops counted
    only under ``max_hops``), as :func:`~creditflow.model.accounts.properties.overshoot_bounds`
    walks them; exact up to ``most``, else some number above it: counting stops there."""
    hop_key = (lambda h: h) if model.max_hops is not None else (lambda h: 0)
    total = 0
    for a in range(len(model.account_names)):
        roots = [model.reader_actor[r] for r, acc in enumerate(model.reader_account) if acc == a]
        seen = {(x, 0) for x in roots}
        reached: set[int] = set()
        for timers in (False, True):
            if timers:
                armed = [t for t in reached if model.timer[t] > 0]
                frontier = [(t, 0) for t in armed if (t, 0) not in seen]
                seen.update(frontier)
            else:
                frontier = list(seen)
            while frontier:
                x, h = frontier.pop()
                if not model.forwards(h):
                    continue
                for y, _events in model.out[x]:
                    if not timers:
                        reached.add(y)
                    place = (y, hop_key(h + 1))
                    if place not in seen:
                        seen.add(place)
                        frontier.append(place)
                        if total + len(seen) > most:
                            return total + len(seen)
        total += len(seen)
    return total


def potential_bits(model: AccountsModel) -> float:
    """IN-OVERSHOOT-WORK: an upper estimate of ``log2 P`` (AC-OVERSHOOT) from the graph
    alone: the heaviest forwarding walk's sum of ``log2`` of the events an actor sends per
    event handled (``P(x) <= sum e * max P(y)``); under ``max_hops`` at most that many
    sends of the heaviest actor's bits each (all a cycle that multiplies events gets)."""
    weight = [math.log2(max(1, sum(e for _y, e in out))) for out in model.out]
    g = nx.DiGraph()
    g.add_nodes_from(range(len(weight)))
    g.add_edges_from((x, y) for x, out in enumerate(model.out) for y, _e in out)
    # any walk makes at most max_hops sends, each of at most the heaviest actor's bits
    capped = math.inf if model.max_hops is None else model.max_hops * max(weight)
    scc = nx.condensation(g)
    heaviest: dict[int, float] = {}
    for c in reversed(list(nx.topological_sort(scc))):
        members = scc.nodes[c]["members"]
        own = max(weight[x] for x in members)
        if own > 0 and (len(members) > 1 or any(x in dict(model.out[x]) for x in members)):
            return capped  # a cycle that multiplies events (cyclic graphs have max_hops)
        heaviest[c] = own + max((heaviest[d] for d in scc.successors(c)), default=0.0)
    return min(capped, max(heaviest.values(), default=0.0))


def check_overshoot_work(graph: ActorGraph, where: str) -> None:
    """IN-OVERSHOOT-WORK: refuse, before any work, an actor graph whose AC-OVERSHOOT bounds
    would be computed over more than :data:`MAX_OVERSHOOT_PLACES` (actor, hop) places or
    from potentials of more than :data:`MAX_POTENTIAL_BITS` bits (one line, exit 2)."""
    model = AccountsModel(graph)
    places = overshoot_places(model, MAX_OVERSHOOT_PLACES)
    if places > MAX_OVERSHOOT_PLACES:
        raise ActorGraphFileError(
            f"{where}: the overshoot bounds (AC-OVERSHOOT) would need more than "
            f"{MAX_OVERSHOOT_PLACES:,} (actor, hop) places (IN-OVERSHOOT-WORK); "
            f"lower max_hops (now {graph.max_hops})"
            if graph.max_hops is not None
            else f"{where}: the overshoot bounds (AC-OVERSHOOT) would need more than "
            f"{MAX_OVERSHOOT_PLACES:,} (account, actor) places (IN-OVERSHOOT-WORK)"
        )
    bits = potential_bits(model)
    if bits > MAX_POTENTIAL_BITS:
        raise ActorGraphFileError(
            f"{where}: the overshoot bounds (AC-OVERSHOOT) could reach 2^{bits:,.0f}, more "
            f"than 2^{MAX_POTENTIAL_BITS:,} (IN-OVERSHOOT-WORK); fewer events per send"
            + (" or a lower max_hops" if graph.max_hops is not None else "")
        )


def actor_graph_to_node_link(graph: ActorGraph) -> dict:
    return nx.node_link_data(graph.to_networkx(), edges="edges")
