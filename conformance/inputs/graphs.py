"""Reading process graphs from files and presets (NET-FILE, NET-GRAPH).

Accepted: networkx node-link JSON (``.json``; ``edges`` or ``links``), GraphML
(``.graphml``) and Graphviz DOT (``.dot``/``.gv``, read through Graphviz's own parser,
``dot -Tdot_json``; presentation attributes such as ``shape`` are ignored). A bare
name such as ``fanout`` is a preset shipped in ``spec/graphs/``. Every problem is a
:class:`GraphFileError` whose message names the file and the problem on one line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import networkx as nx

from creditflow.model.network.graph import FlowGraph, GraphError, flow_graph_from_networkx
from creditflow.spec import spec_dir


class GraphFileError(ValueError):
    """A graph file or preset that cannot be used; ``str()`` is a one-line message."""


def presets_dir() -> Path:
    return spec_dir() / "graphs"


def preset_names() -> list[str]:
    return sorted(p.stem for p in presets_dir().glob("*.json"))


def load_preset(name: str) -> FlowGraph:
    path = presets_dir() / f"{name}.json"
    if not path.is_file():
        raise GraphFileError(
            f"{name}: no such graph file or preset (presets: {', '.join(preset_names())})"
        )
    return load_graph_file(path)


def load_graph(graph: str | Path) -> FlowGraph:
    """A graph file path, or a preset name when no such file exists."""
    path = Path(graph)
    if path.is_file():
        return load_graph_file(path)
    if path.suffix or "/" in str(graph):
        raise GraphFileError(f"{graph}: no such file")
    return load_preset(str(graph))


def networkx_from_node_link(data: object) -> nx.DiGraph:
    """NET-FILE: a networkx graph from a node-link JSON object (``edges`` or ``links``);
    :class:`GraphError` if the object is not a directed, simple node-link graph."""
    if not isinstance(data, dict):
        raise GraphError("expected a node-link JSON object with 'nodes' and 'edges'")
    if "nodes" not in data:
        raise GraphError("node-link JSON needs a 'nodes' list")
    if data.get("directed") is False:
        raise GraphError("the graph must be directed ('directed': true)")
    if data.get("multigraph") is True:
        raise GraphError("multigraphs are not process graphs ('multigraph': false)")
    edges_key = "links" if "links" in data and "edges" not in data else "edges"
    data = {"directed": True, "multigraph": False, "graph": {}, edges_key: [], **data}
    for i, node in enumerate(data["nodes"]):
        if not isinstance(node, dict) or "id" not in node:
            raise GraphError(f"nodes[{i}] must be an object with an 'id'")
    ids = {node["id"] for node in data["nodes"]}
    for i, edge in enumerate(data[edges_key]):
        if not isinstance(edge, dict) or "source" not in edge or "target" not in edge:
            raise GraphError(f"{edges_key}[{i}] must be an object with 'source' and 'target'")
        for end in ("source", "target"):
            if edge[end] not in ids:
                raise GraphError(f"{edges_key}[{i}] {end} {edge[end]!r} is not a node id")
    try:
        g = nx.node_link_graph(data, edges=edges_key)
    except (KeyError, TypeError, nx.NetworkXError) as exc:
        raise GraphError(f"not a valid node-link graph ({exc})") from None
    if len(g.edges) != len(data[edges_key]):
        raise GraphError("an edge appears twice; give each ordered pair once")
    return g


#: Graphviz presentation attributes a DOT file may carry; they mean nothing to the model.
_DOT_PRESENTATION = frozenset(
    {"shape", "color", "fillcolor", "style", "fontname", "fontsize", "fontcolor", "penwidth",
     "width", "height", "pos", "rankdir", "labelloc", "xlabel", "tooltip", "URL", "arrowhead",
     "arrowtail", "dir", "weight", "constraint", "rank", "bb", "splines", "nodesep", "ranksep",
     "label"}
)


_DOT_STRUCTURE = frozenset(
    {"_gvid", "name", "tail", "head", "directed", "strict", "objects", "edges"}
)


def _dot(path: Path) -> nx.DiGraph:
    dot = shutil.which("dot")
    if dot is None:
        raise GraphError("reading DOT needs Graphviz's dot program (apt-get install graphviz)")
    done = subprocess.run(
        [dot, "-Tdot_json", str(path)], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise GraphError(f"not valid DOT ({reason.removeprefix('Error: ')})")
    # Graphviz copies control characters of names into its JSON raw (OUT-NAME makes
    # such names safe for files), so they are accepted here.
    data = json.loads(done.stdout, strict=False)
    if not data.get("directed", False):
        raise GraphError("the graph must be directed (digraph)")
    if not data.get("strict", True) and _has_parallel_edges(data):
        raise GraphError("an edge appears twice; give each ordered pair once")

    def attrs(obj: dict) -> dict:
        return {
            k: v
            for k, v in obj.items()
            if k not in _DOT_PRESENTATION
            and k not in _DOT_STRUCTURE
            and not k.startswith("_")
        }

    g = nx.DiGraph(**attrs(data))
    if data.get("name") and not data["name"].startswith("%"):
        g.graph["name"] = data["name"]
    names = []
    for obj in data.get("objects", []):
        if "nodes" in obj or "subgraphs" in obj:
            continue  # a subgraph/cluster: its nodes are listed on their own
        names.append(obj["name"])
        g.add_node(obj["name"], **attrs(obj))
    by_id = {obj["_gvid"]: obj["name"] for obj in data.get("objects", []) if "name" in obj}
    for edge in data.get("edges", []):
        g.add_edge(by_id[edge["tail"]], by_id[edge["head"]], **attrs(edge))
    return g


def _has_parallel_edges(data: dict) -> bool:
    pairs = [(e["tail"], e["head"]) for e in data.get("edges", [])]
    return len(pairs) != len(set(pairs))


def load_graph_file(path: str | Path) -> FlowGraph:
    """Read and validate a graph file; raise :class:`GraphFileError` naming the file."""
    path = Path(path)
    try:
        if path.suffix.lower() in (".dot", ".gv"):
            g = _dot(path)
        elif path.suffix.lower() == ".graphml":
            try:
                g = nx.read_graphml(path)
            except Exception as exc:  # networkx raises assorted XML/parse errors
                raise GraphError(f"not valid GraphML ({str(exc).splitlines()[0]})") from None
        else:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise GraphError(f"cannot read ({exc.__class__.__name__}: {exc})") from None
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise GraphError(f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
            g = networkx_from_node_link(data)
        return flow_graph_from_networkx(g, name=path.stem)
    except GraphError as exc:
        raise GraphFileError(f"{path}: {exc}") from None


def graph_from_node_link(data: object, name: str = "graph") -> FlowGraph:
    """Validate a node-link document already parsed from JSON (raises :class:`GraphError`)."""
    return flow_graph_from_networkx(networkx_from_node_link(data), name=name)


def graph_to_node_link(graph: FlowGraph) -> dict:
    """The node-link JSON document of a graph (what :func:`load_graph_file` reads)."""
    return nx.node_link_data(graph.to_networkx(), edges="edges")
