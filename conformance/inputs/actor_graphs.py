"""Reading actor graphs from files and presets (AC-GRAPH).

Like :mod:`creditflow.conformance.inputs.graphs`: networkx node-link JSON or GraphML; a bare
name is a preset shipped in ``spec/graphs/accounts/``. Every problem is an
:class:`ActorGraphFileError` whose message names the file and the problem on one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx

from creditflow.conformance.inputs.graphs import networkx_from_node_link
from creditflow.model.accounts.graph import ActorGraph, ActorGraphError, actor_graph_from_networkx
from creditflow.model.network.graph import GraphError
from creditflow.spec import spec_dir


class ActorGraphFileError(ValueError):
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
        if path.suffix.lower() == ".graphml":
            try:
                g = nx.read_graphml(path)
            except Exception as exc:  # networkx raises assorted XML errors
                raise ActorGraphError(f"not valid GraphML ({str(exc).splitlines()[0]})") from None
        else:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise ActorGraphError(f"cannot read ({exc.__class__.__name__}: {exc})") from None
            except json.JSONDecodeError as exc:
                raise ActorGraphError(f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
            try:
                g = networkx_from_node_link(data)
            except GraphError as exc:
                raise ActorGraphError(str(exc)) from None
        return actor_graph_from_networkx(g, name=path.stem)
    except ActorGraphError as exc:
        raise ActorGraphFileError(f"{path}: {exc}") from None


def actor_graph_to_node_link(graph: ActorGraph) -> dict:
    return nx.node_link_data(graph.to_networkx(), edges="edges")
