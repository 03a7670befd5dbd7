"""Reading process graphs from files and presets (NET-FILE, NET-GRAPH).

Accepted: networkx node-link JSON (``.json``; ``edges`` or ``links``), GraphML
(``.graphml``) and Graphviz DOT (``.dot``/``.gv``, read through Graphviz's own parser,
``dot -Tdot_json``; presentation attributes such as ``shape`` are ignored). A bare
name such as ``fanout`` is a preset shipped in ``spec/graphs/``. Every problem is a
:class:`GraphFileError` whose message names the file and the problem on one line.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import networkx as nx

from creditflow.conformance.inputs.presets import preset_names, presets_dir
from creditflow.conformance.inputs.reading import InputError, load_json, parse_json, read_text
from creditflow.conformance.inputs.schemas import NodeLinkGraph, validate
from creditflow.model.network.graph import FlowGraph, GraphError, flow_graph_from_networkx


class GraphFileError(InputError):
    """A graph file or preset that cannot be used; ``str()`` is a one-line message."""


def load_preset(name: str) -> FlowGraph:
    path = presets_dir() / f"{name}.json"
    if not path.is_file():
        raise GraphFileError(
            f"{name}: no such graph file or preset (presets: {', '.join(preset_names())})"
        )
    return load_graph_file(path)


def input_warnings(graph: FlowGraph, source: str | Path) -> tuple[str, ...]:
    """NET-FAULT-NOOP: one line per node whose ``on_peer_down`` cannot matter because none
    of its peers may crash (no DOWN ever reaches it), naming ``source`` and the node."""
    crashable = {n.name for n in graph.nodes if n.may_crash} if graph.crash_bound else set()
    found = []
    for node in graph.nodes:
        if node.calls_peer_down and not node.down_overtakes:
            continue  # the default handler
        peers = set(graph.successors(node.name)) | set(graph.predecessors(node.name))
        if not peers & crashable:
            found.append(
                f"{source}: node {node.name!r} has on_peer_down {node.on_peer_down!r} but "
                "none of its peers may crash, so it has no effect (NET-FAULT-NOOP)"
            )
    return tuple(found)


def load_graph(graph: str | Path) -> FlowGraph:
    """A graph file path, or a preset name when no such file exists."""
    path = Path(graph)
    if path.is_file():
        return load_graph_file(path)
    if path.suffix or "/" in str(graph):
        raise GraphFileError(f"{graph}: no such file")
    return load_preset(str(graph))


def networkx_from_node_link(data: object, where: str = "graph") -> nx.DiGraph:
    """NET-FILE: a networkx graph from a node-link JSON object (``edges`` or ``links``);
    :class:`GraphError` if the object is not a directed, simple node-link graph.

    The shape and types are checked by the schema first (IN-SCHEMA: ``nodes`` a list,
    ids strings or integers, ``directed`` a real boolean, ...); then duplicate node ids
    (IN-DUPLICATE, ``1`` and ``"1"`` are the same process) and edges to undeclared
    nodes (IN-DANGLING) are refused. Linear in the size of the document."""
    if not isinstance(data, dict):
        raise GraphError("expected a node-link JSON object with 'nodes' and 'edges'")
    try:
        doc = validate(NodeLinkGraph, data, where)
    except InputError as exc:
        raise GraphError(f"{exc.path}: {exc.problem}" if exc.path else exc.problem) from None
    if not doc.directed:
        raise GraphError("the graph must be directed ('directed': true)")
    if doc.multigraph:
        raise GraphError("multigraphs are not process graphs ('multigraph': false)")
    if doc.edges is not None and doc.links is not None:
        raise GraphError("give the edges once, as 'edges' or as 'links'")
    key, edges = ("links", doc.links) if doc.links is not None else ("edges", doc.edges or [])
    g = nx.DiGraph()
    g.graph.update(doc.graph)
    ids: dict[str, object] = {}
    for i, node in enumerate(doc.nodes):
        name = str(node.id)
        if name in ids:
            raise GraphError(f"nodes[{i}].id: {node.id!r} appears twice (IN-DUPLICATE)")
        ids[name] = node.id
        g.add_node(node.id, **node.attributes())
    for i, edge in enumerate(edges):
        for end, value in (("source", edge.source), ("target", edge.target)):
            if str(value) not in ids or ids[str(value)] != value:
                raise GraphError(f"{key}[{i}].{end}: {value!r} is not a node id (IN-DANGLING)")
        if g.has_edge(edge.source, edge.target):
            raise GraphError(
                f"{key}[{i}]: the edge {edge.source!r}->{edge.target!r} appears "
                "twice; give each ordered pair once (IN-DUPLICATE)"
            )
        g.add_edge(edge.source, edge.target, **(edge.model_extra or {}))
    return g


#: NET-DOT: every attribute Graphviz itself defines (graphs, clusters, nodes, edges) is
#: presentation — layout, drawing, ports — and means nothing to the model.
_DOT_PRESENTATION = frozenset(
    """
    _background area arrowhead arrowsize arrowtail bb beautify bgcolor center charset class
    cluster clusterrank color colorscheme comment compound concentrate constraint Damping
    decorate defaultdist dim dimen dir diredgeconstraints distortion dpi edgehref edgetarget
    edgetooltip edgeURL epsilon esep fillcolor fixedsize fontcolor fontname fontnames
    fontpath fontsize forcelabels gradientangle group head_lp headclip headhref headlabel
    headport headtarget headtooltip headURL height href id image imagepath imagepos
    imagescale inputscale K label label_scheme labelangle labeldistance labelfloat
    labelfontcolor labelfontname labelfontsize labelhref labeljust labelloc labeltarget
    labeltooltip labelURL landscape layer layerlistsep layers layerselect layersep layout
    len levels levelsgap lhead lheight linelength lp ltail lwidth margin maxiter mclimit
    mindist minlen mode model newrank nodesep nojustify normalize notranslate nslimit
    nslimit1 oneblock ordering orientation outputorder overlap overlap_scaling
    overlap_shrink pack packmode pad page pagedir pencolor penwidth peripheries pin pos
    quadtree quantum radius rank rankdir ranksep ratio rects regular remincross
    repulsiveforce resolution root rotate rotation samehead sametail samplepoints scale
    searchsize sep shape shapefile showboxes sides size skew smoothing sortv splines start
    style stylesheet tail_lp tailclip tailhref taillabel tailport tailtarget tailtooltip
    tailURL target TBbalance tooltip truecolor URL vertices viewport voro_margin weight
    width xdotversion xlabel xlp z
    """.split()  # noqa: SIM905 — Graphviz's attribute table, as a paragraph
)


_DOT_STRUCTURE = frozenset(
    {
        "_gvid",
        "_subgraph_cnt",
        "name",
        "tail",
        "head",
        "directed",
        "strict",
        "objects",
        "edges",
        "nodes",
        "subgraphs",
    }
)

#: NET-DOT: how Graphviz is asked to read a file: ``nop`` (no layout, whatever the size;
#: every node given a position so that ``nop`` has none to compute) into ``dot_json``.
_DOT_COMMAND = ("-Knop", "-Npos=0,0", "-Tdot_json")


def _dot(path: Path) -> nx.DiGraph:
    """NET-FILE (DOT) / IN-READ / NET-DOT: one ``digraph`` per file, read by Graphviz
    without a layout; subgraphs and clusters are no processes, presentation (Graphviz's
    own attributes, ports) is ignored."""
    text = read_text(path)
    if not text.strip():
        raise GraphError("empty file (expected one digraph)")
    dot = shutil.which("dot")
    if dot is None:
        raise GraphError("reading DOT needs Graphviz's dot program (apt-get install graphviz)")
    try:
        done = subprocess.run(
            [dot, *_DOT_COMMAND], input=text, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        raise GraphError("Graphviz took more than 60 s to read it") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise GraphError(f"not valid DOT ({reason.removeprefix('Error: ')})")
    if not done.stdout.strip():
        raise GraphError("no graph in the file (expected one digraph)")
    try:
        # Graphviz copies control characters of names into its JSON raw (OUT-NAME makes
        # such names safe for files), so they are accepted here.
        data = parse_json(done.stdout, "dot", strict=False)
    except InputError as exc:
        if "more than one" in exc.problem:
            raise GraphError("more than one graph in one DOT file (give one digraph)") from None
        raise GraphError(f"Graphviz's reading cannot be used ({exc.problem})") from None
    if not isinstance(data, dict):
        raise GraphError("Graphviz's reading cannot be used")
    if not data.get("directed", False):
        raise GraphError("the graph must be directed (digraph)")
    if not data.get("strict", True) and _has_parallel_edges(data):
        raise GraphError("an edge appears twice; give each ordered pair once (IN-DUPLICATE)")

    def attrs(obj: dict) -> dict:
        return {
            k: v
            for k, v in obj.items()
            if k not in _DOT_PRESENTATION and k not in _DOT_STRUCTURE and not k.startswith("_")
        }

    g = nx.DiGraph()
    g.graph.update(attrs(data))
    if data.get("name") and not data["name"].startswith("%"):
        g.graph["name"] = data["name"]
    # dot_json lists every subgraph (nested ones too) first, then the nodes.
    subgraphs = data.get("_subgraph_cnt", 0)
    objects = data.get("objects", [])
    for obj in objects[:subgraphs]:
        # A subgraph inherits the graph's attributes; one of its own that the model
        # would read belongs on its nodes or edges (node [...], edge [...]).
        own = {
            k: v for k, v in attrs(obj).items() if g.graph.get(k) != v and not k.startswith("x-")
        }
        if own:
            raise GraphError(
                f"subgraph {obj.get('name')!r}: attribute {next(iter(own))!r} means nothing "
                "on a subgraph, which is no process; set it with node [...] or edge [...] "
                "inside it (NET-DOT)"
            )
    for obj in objects[subgraphs:]:
        g.add_node(obj["name"], **attrs(obj))
    by_id = {obj["_gvid"]: obj["name"] for obj in objects if "name" in obj}
    for edge in data.get("edges", []):
        g.add_edge(by_id[edge["tail"]], by_id[edge["head"]], **attrs(edge))
    return g


def _has_parallel_edges(data: dict) -> bool:
    pairs = [(e["tail"], e["head"]) for e in data.get("edges", [])]
    return len(pairs) != len(set(pairs))


def _graphml(path: Path) -> nx.DiGraph:
    """NET-FILE (GraphML) / IN-READ: no DTD or entities; one graph; every node declared
    once (IN-DUPLICATE) and every edge between declared nodes (IN-DANGLING)."""
    text = read_text(path)
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise GraphError("DTDs and entities are not accepted in GraphML (IN-READ)")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise GraphError(f"not valid GraphML ({exc})") from None
    graphs = [el for el in root.iter() if _tag(el) == "graph"]
    if len(graphs) != 1:
        raise GraphError(f"expected one <graph>, found {len(graphs)}")
    declared: set[str] = set()
    for el in root.iter():
        if _tag(el) == "node":
            node = el.get("id")
            if node is None or node in declared:
                raise GraphError(f"node {node!r} is declared twice or has no id (IN-DUPLICATE)")
            declared.add(node)
    for el in root.iter():
        if _tag(el) in ("edge", "hyperedge"):
            if _tag(el) == "hyperedge":
                raise GraphError("hyperedges are not credit-flow pairs")
            for end in ("source", "target"):
                if el.get(end) not in declared:
                    raise GraphError(
                        f"edge {el.get('source')!r}->{el.get('target')!r}: "
                        f"{end} {el.get(end)!r} is not a declared node "
                        "(IN-DANGLING)"
                    )
    try:
        return nx.parse_graphml(text)
    except Exception as exc:  # networkx raises assorted XML/parse errors
        reason = (str(exc).splitlines() or [exc.__class__.__name__])[0]
        raise GraphError(f"not valid GraphML ({reason})") from None


def _tag(el: ElementTree.Element) -> str:
    return el.tag.rpartition("}")[2] if isinstance(el.tag, str) else ""


def load_graph_file_networkx(path: str | Path) -> nx.DiGraph:
    """IN-READ, IN-SCHEMA: a graph file (JSON, GraphML, DOT) as a networkx graph, shape
    checked; :class:`GraphFileError` naming the file (IN-ONE-LINE)."""
    path = Path(path)
    try:
        if path.suffix.lower() in (".dot", ".gv"):
            return _dot(path)
        if path.suffix.lower() == ".graphml":
            return _graphml(path)
        return networkx_from_node_link(load_json(path))
    except InputError as exc:
        raise GraphFileError(str(exc)) from None
    except GraphError as exc:
        raise GraphFileError(f"{path}: {exc}") from None


def load_graph_file(path: str | Path) -> FlowGraph:
    """Read and validate a graph file; raise :class:`GraphFileError` naming the file
    (IN-ONE-LINE)."""
    path = Path(path)
    g = load_graph_file_networkx(path)
    try:
        return flow_graph_from_networkx(g, name=path.stem)
    except InputError as exc:
        raise GraphFileError(str(exc)) from None
    except GraphError as exc:
        raise GraphFileError(f"{path}: {exc}") from None


def graph_from_node_link(data: object, name: str = "graph") -> FlowGraph:
    """Validate a node-link document already parsed from JSON (raises :class:`GraphError`)."""
    return flow_graph_from_networkx(networkx_from_node_link(data), name=name)


def graph_to_node_link(graph: FlowGraph) -> dict:
    """The node-link JSON document of a graph (what :func:`load_graph_file` reads)."""
    return nx.node_link_data(graph.to_networkx(), edges="edges")
