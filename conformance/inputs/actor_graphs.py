"""Reading actor graphs from files and presets (AC-GRAPH).

Like :mod:`creditflow.conformance.inputs.graphs`: networkx node-link JSON or GraphML; a bare
name is a preset shipped in ``spec/graphs/accounts/``. Every problem is an
:class:`ActorGraphFileError` whose message names the file and the problem on one line.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from creditflow.conformance.inputs.graphs import GraphFileError, load_graph_file_networkx
from creditflow.conformance.inputs.reading import InputError
from creditflow.model.accounts.graph import ActorGraph, ActorGraphError, actor_graph_from_networkx
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
        return actor_graph_from_networkx(g, name=path.stem)
    except (ActorGraphError, GraphError) as exc:
        raise ActorGraphFileError(f"{path}: {exc}") from None


def actor_graph_to_node_link(graph: ActorGraph) -> dict:
    return nx.node_link_data(graph.to_networkx(), edges="edges")
