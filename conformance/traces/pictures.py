"""Pictures of a network state (EXP-PICTURE): DOT text, and SVG through Graphviz.

:func:`deadlock_dot` is pure; :func:`write_picture` writes ``.dot`` and, when the
``dot`` program is installed, ``.svg`` next to it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import cast

import networkx as nx

from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.explore.encoding import (
    BUMPS,
    CREDIT_FROM,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    State,
)
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.outputs import write_atomic
from creditflow.conformance.outputs.streams import encoded


def wait_for_edges(
    system: CheckedNetwork, state: State, stuck: Iterable[str] = ()
) -> list[tuple[str, str]]:
    """The wait-for cycle of ``state`` as edges (sender, receiver); without a cycle, the
    longest chain of waits from a blocked process (``S`` waits for ``R`` when S is
    blocked on R).

    EXP-PICTURE-BLAME: a wait that lasts (on a dead, stalled or blocked-forever ``R``,
    ``stuck``) is preferred to one a live process will end: a channel blocked on a
    healthy master and on a dead mirror is drawn waiting for the mirror."""
    net = system.network
    names = system.process_names
    stuck = set(stuck)
    waits = nx.DiGraph()
    lasting = nx.DiGraph()
    for n in range(net.n_nodes):
        for r in net.blockers(state, n):
            waits.add_edge(names[n], names[r])
            spec = system.graph.nodes[r]
            if not net.alive(state, r) or spec.stalled or spec.name in stuck:
                lasting.add_edge(names[n], names[r])
    for chosen in (lasting, waits):
        if chosen.number_of_edges() == 0:
            continue
        try:
            return [(u, v) for u, v, *_ in nx.find_cycle(chosen)]
        except nx.NetworkXNoCycle:
            pass
        path = nx.dag_longest_path(chosen)
        if chosen is lasting:  # extend back through the processes waiting for its start
            while True:
                before = [u for u in waits.predecessors(path[0]) if u not in path]
                if not before:
                    break
                path.insert(0, before[0])
        return list(zip(path, path[1:], strict=False))
    return []


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def deadlock_dot(
    system: CheckedNetwork,
    state: State,
    stuck: Iterable[str] = (),
    title: str = "",
    first: Iterable[str] = (),
) -> str:
    """DOT text of ``state`` (EXP-PICTURE): every process blocked forever in it
    (``stuck``) red, those blocked forever first (``first``, at the first violating
    state) labelled so, other blocked ones orange, stalled grey; blocked edges red; the
    wait-for cycle or chain thick, ending at the process that never releases it
    (EXP-PICTURE-BLAME). On a graph with faults (NET-CRASH) a dead process is
    drawn black and dashed, labelled DEAD with what died with it (NET-LOST-TO-CRASH),
    a live one that may still crash says so, and the pairs of a dead one are dashed."""
    net = system.network
    names = system.process_names
    first = set(first)
    stuck = set(stuck) | first
    highlight = set(wait_for_edges(system, state, stuck))
    lines = [
        f"digraph {_quote(system.graph.name)} {{",
        "  rankdir=LR;",
        '  node [shape=ellipse, style=filled, fillcolor=white, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    if title:
        lines.append(f"  labelloc=t; label={_quote(title)};")
    for n, spec in enumerate(system.graph.nodes):
        blocked = net.is_blocked(state, n)
        color = "white"
        if spec.stalled:
            color = "grey80"
        if blocked:
            color = "orange"
        if spec.name in stuck:
            color = "tomato"
        label = spec.name + (f"\n({spec.role})" if spec.role else "")
        if spec.source:
            label += f"\npublishes left: {net.remaining(state, n)}"
        if spec.stalled:
            label += "\nstalled"
        if spec.name in first and len(first) < len(stuck):
            label += "\nBLOCKED FOREVER (first)"
        elif spec.name in stuck:
            label += "\nBLOCKED FOREVER"
        elif blocked:
            label += "\nblocked"
        extra = ""
        if not net.alive(state, n):
            lost = net.lost_slot.get(n)
            label += "\nDEAD (crashed)" + (f", lost {state[lost]}" if lost is not None else "")
            color, extra = "black", ', fontcolor=white, style="filled,dashed"'
        elif n in net.alive_slot:
            label += "\nmay crash"
        shape = "box" if spec.source else "ellipse"
        lines.append(
            f"  {_quote(spec.name)} [label={_quote(label)}, shape={shape}, "
            f"fillcolor={color}{extra}];"
        )
    for e, (s, r) in enumerate(net.edge_ends):
        edge = system.graph.edges[e]
        f = state[EDGE_FIELDS * e : EDGE_FIELDS * (e + 1)]
        label = (
            f"{edge.credit} credit {f[CREDIT_FROM]}\n"
            f"data {f[DATA]}, grants {f[BUMPS]}, deferred {f[DEFERRED]}"
        )
        attrs = [f"label={_quote(label)}"]
        if edge.credit.blocks and f[CREDIT_FROM] <= 0:
            attrs.append("color=red, fontcolor=red")
        if (names[s], names[r]) in highlight:
            attrs.append("penwidth=3.5")
        if not (net.alive(state, s) and net.alive(state, r)):
            attrs.append("style=dashed")
        lines.append(f"  {_quote(names[s])} -> {_quote(names[r])} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def finding_dot(system: CheckedNetwork, finding: Finding, title: str) -> str:
    """The picture of a counterexample (EXP-PICTURE): the violating state, the end of
    ``path`` (for a deadlock, the state where the victims become blocked forever, not
    the end of the lasso continuation), with every process blocked forever there
    marked."""
    end = cast(State, finding.path[-1][1])  # a network run
    return deadlock_dot(system, end, finding.processes, title)


#: EXP-PICTURE-SIZE: the most DOT lines (one per process and per pair) laid out as SVG.
MAX_LAYOUT_LINES = 1_600


def layout_refusal(dot_text: str) -> str | None:
    """EXP-PICTURE-SIZE: why no SVG is drawn of ``dot_text`` (one line), or ``None``."""
    lines = dot_text.count("\n")
    if lines <= MAX_LAYOUT_LINES:
        return None
    return (
        f"no SVG drawn: the picture has {lines:,} DOT lines, more than {MAX_LAYOUT_LINES:,} "
        "(Graphviz's layout would take minutes; EXP-PICTURE-SIZE); the DOT file is written"
    )


def write_picture(dot_text: str, path: str | Path) -> tuple[Path, Path | None]:
    """Write ``path`` (DOT) and, if Graphviz's ``dot`` is on PATH and the picture is not
    too large to lay out (EXP-PICTURE-SIZE), the SVG next to it, both through the one
    output writer (OUT-ATOMIC, OUT-SYMLINK): Graphviz renders to a pipe, never to a
    path. Raises :class:`~creditflow.conformance.outputs.OutputError`."""
    path = write_atomic(path, dot_text)
    dot = shutil.which("dot")
    if dot is None or layout_refusal(dot_text) is not None:
        return path, None
    try:
        done = subprocess.run(
            [dot, "-Tsvg"], input=encoded(dot_text), capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return path, None
    if done.returncode != 0 or not done.stdout:
        return path, None
    return path, write_atomic(path.with_suffix(".svg"), done.stdout)
