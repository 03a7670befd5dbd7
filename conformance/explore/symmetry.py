"""Symmetry reduction for credit networks (EXP-SYMMETRY): states equal up to a graph automorphism.

An automorphism of the labelled process graph (sources, supplies, checking,
stalled flags and every edge's credit spec preserved) maps reachable states to
reachable states and blocked processes to blocked processes, so the explorer
may keep one representative per orbit. Shortest counterexample lengths are
preserved; traces are re-concretized step by step.
"""

from __future__ import annotations

from operator import itemgetter

import networkx as nx
from networkx.algorithms.isomorphism import DiGraphMatcher

from creditflow.conformance.explore.encoding import EDGE_FIELDS, CreditNetwork, State

#: Enumerating more automorphisms than this costs more than it saves; a subset of the
#: group is still sound (fewer states merged).
MAX_AUTOMORPHISMS = 120

#: IN-WORK: the largest graph (nodes + edges) searched for automorphisms. networkx's VF2
#: costs about n² per automorphism (minutes on a 10,000-node chain); a larger graph is
#: explored without symmetry reduction, which is sound (fewer states merged).
SYMMETRY_LIMIT = 400


class Symmetry:
    """Canonicalization of network states under a set of graph automorphisms."""

    def __init__(self, network: CreditNetwork, automorphisms: list[dict[int, int]]) -> None:
        self.size = network.size
        self.n_nodes = network.n_nodes
        self._getters = []
        #: per automorphism, the field each field of an image is read from
        self.permutations: list[tuple[int, ...]] = []
        self.node_frames: list[tuple[int, ...]] = []
        edge_of = {ends: e for e, ends in enumerate(network.edge_ends)}
        for phi in automorphisms:
            perm = list(range(network.size))
            for e, (a, b) in enumerate(network.edge_ends):
                image = edge_of[(phi[a], phi[b])]
                for f in range(EDGE_FIELDS):
                    perm[EDGE_FIELDS * image + f] = EDGE_FIELDS * e + f
            for n, slot in network.remaining_slot.items():
                perm[network.remaining_slot[phi[n]]] = slot
            for n, slot in network.delivered_slot.items():
                perm[network.delivered_slot[phi[n]]] = slot
            inverse = {v: k for k, v in phi.items()}
            # itemgetter of one index returns a scalar; states of size <= 1 map to themselves
            self._getters.append(itemgetter(*perm) if len(perm) > 1 else tuple)
            self.permutations.append(tuple(perm))
            # bit j of a canonical state is process inverse[j] of the state it came from
            self.node_frames.append(tuple(inverse[j] for j in range(self.n_nodes)))

    @property
    def order(self) -> int:
        """How many automorphisms are used (1 = none besides the identity)."""
        return len(self._getters)

    def canonicalize(self, state: State) -> tuple[State, int]:
        """The least image of ``state`` and the index of the automorphism giving it."""
        best, best_id = state, 0
        for i in range(1, len(self._getters)):
            image = self._getters[i](state)
            if image < best:
                best, best_id = image, i
        return best, best_id

    def to_original_frame(self, mask: int, perm_id: int) -> int:
        """Translate a process mask of a canonical state into the frame of the state it
        was computed from with automorphism ``perm_id``."""
        if perm_id == 0:
            return mask
        frame = self.node_frames[perm_id]
        out = 0
        j = 0
        while mask:
            if mask & 1:
                out |= 1 << frame[j]
            mask >>= 1
            j += 1
        return out


def network_symmetry(network: CreditNetwork, limit: int = MAX_AUTOMORPHISMS) -> Symmetry | None:
    """The automorphisms of the labelled graph, or ``None`` when there are none but the
    identity (or the network has one process), or when the graph is larger than
    :data:`SYMMETRY_LIMIT` (IN-WORK)."""
    if network.n_nodes + network.n_edges > SYMMETRY_LIMIT:
        return None
    if network.crashable:
        return None  # EXP-FAULTS: not argued for the fault slots; explored unreduced
    g = nx.DiGraph()
    graph = network.graph
    for i, n in enumerate(graph.nodes):
        g.add_node(i, label=(n.source, n.publishes, n.checks_blocked, n.stalled))
    for e, (a, b) in enumerate(network.edge_ends):
        spec = graph.edges[e]
        g.add_edge(a, b, label=(spec.credit, spec.sends_per_message))
    matcher = DiGraphMatcher(
        g,
        g,
        node_match=lambda x, y: x["label"] == y["label"],
        edge_match=lambda x, y: x["label"] == y["label"],
    )
    identity = {i: i for i in range(network.n_nodes)}
    automorphisms = [identity]
    for phi in matcher.isomorphisms_iter():
        if phi != identity:
            automorphisms.append(dict(phi))
        if len(automorphisms) >= limit:
            break
    if len(automorphisms) == 1:
        return None
    return Symmetry(network, automorphisms)
