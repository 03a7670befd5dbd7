"""The NET transition system of a process graph as Z3 formulas (Z3-ENCODING).

:class:`NetworkEncoding` is generated from the same
:class:`~creditflow.model.network.graph.FlowGraph` and by running the same rule code as the
Python model: the state vector is
:class:`~creditflow.conformance.explore.encoding.CreditNetwork`'s (five integers per edge, then the
sources' supplies, then the sinks' counts), and each action's guard and effect are
obtained by executing ``CreditNetwork.is_enabled`` and ``CreditNetwork.apply`` on
symbolic values (:mod:`creditflow.conformance.symbolic.symbolic`). Credit specs and supplies
may be concrete or symbolic (Z3-SYMBOLIC-CREDITS); sends per message, ``checks_blocked``
and ``stalled`` are structure and stay concrete.

Everything is built over *template* variables ``x`` (one per state slot) and
instantiated for a concrete step with :meth:`NetworkEncoding.at`.

Example::

    >>> from creditflow.conformance.inputs.graphs import load_preset
    >>> enc = NetworkEncoding(load_preset("stalled-queue"))
    >>> enc.slot_names[:3]
    ('credit_from[reader->channel]', 'credit_to[reader->channel]', 'data[reader->channel]')
    >>> len(enc.actions)
    5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from functools import cached_property, partial
from operator import itemgetter
from typing import cast

import networkx as nx
import z3

from creditflow.conformance.explore.encoding import (
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    CreditNetwork,
)
from creditflow.conformance.explore.properties import edge_conserved, sink_path_counts
from creditflow.conformance.symbolic.symbolic import (
    Sym,
    SymBool,
    all_paths,
    as_int,
    merge,
    symbol,
    term,
    truth,
)
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph

FIELD_LABELS = ("credit_from", "credit_to", "data", "bumps", "deferred")


#: Z3-INVARIANT: what each kind of lemma says (``kind[edge]`` in the lemma names).
LEMMA_FORMS = {
    "counts": "data, bumps, deferred >= 0",
    "conservation": "credit_from + k*data + (M - credit_to) + M*(bumps + deferred) = I",
    "counter": "M >= 1 => 1 <= credit_to <= M; M <= 0 => credit_to <= M and no grants",
    "residue": "M - credit_to is a multiple of gcd(k, M)",
    "deferred-blocked": "deferred > 0 => the receiver is blocked",
    "in-flight": "a checking sender: I >= 1 => credit_from >= 1 - k",
    "stalled-receiver": "credit_to = M, no grants in flight or deferred",
    "never-blocked": "the sender is never blocked on the edge",
    "supply": "0 <= publishes_left <= P",
    "consumed": "consumed >= 0 (= 0 if stalled)",
    "nothing-lost": "consumed + paths-weighted data = paths-weighted publishes read",
    "messages": "data in flight + consumed (+ lost to crashes) = publishes read",
    "faults": "alive in {0, 1}, handled in {0, 1, 2}, crashes = dead count <= bound, lost >= 0",
    "dead": "a dead process: nothing waits for it, its credit state is the initial one",
    "down": "a DOWN handled: the peer is dead, credit_from[d] = I after CF-PEER-DOWN, "
    "handled = 2 only with NET-DOWN-EARLY",
}


class Credits(Enum):
    """How credit specs enter the encoding (Z3-SYMBOLIC-CREDITS)."""

    CONCRETE = "concrete"  #: each edge's spec from the graph
    PER_EDGE = "per-edge"  #: each edge its own symbolic ``I[e]``, ``M[e]``
    GLOBAL = "global"  #: one symbolic ``I``, ``M`` shared by every edge


@dataclass(frozen=True)
class EdgeTerms:
    """The parameters of one edge as Z3 terms: ``I``, ``M`` and ``k`` (sends per message)."""

    initial: z3.ArithRef
    more_after: z3.ArithRef
    debits: int


def _conj(parts: Iterable[z3.BoolRef]) -> z3.BoolRef:
    parts = list(parts)
    if not parts:
        return z3.BoolVal(True)
    return parts[0] if len(parts) == 1 else z3.And(*parts)


def _disj(parts: Iterable[z3.BoolRef]) -> z3.BoolRef:
    parts = list(parts)
    if not parts:
        return z3.BoolVal(False)
    return parts[0] if len(parts) == 1 else z3.Or(*parts)


class NetworkEncoding:
    """Z3 formulas for the NET model of ``graph`` (Z3-ENCODING).

    ``credits``: concrete, per-edge symbolic or one global symbolic spec.
    ``symbolic_supply``: each source's ``publishes`` is a symbolic ``P[s] >= 0``.
    """

    def __init__(
        self,
        graph: FlowGraph,
        credits: Credits = Credits.CONCRETE,
        symbolic_supply: bool = False,
    ) -> None:
        self.graph = graph
        self.credits = credits
        self.symbolic_supply = symbolic_supply
        self.params: dict[str, z3.ArithRef] = {}
        edge_names = [f"{e.sender}->{e.receiver}" for e in graph.edges]
        self.edge_names = tuple(edge_names)

        def param(name: str) -> int:
            if name not in self.params:
                self.params[name] = z3.Int(symbol(name))
            return as_int(Sym(self.params[name]))

        edges = []
        for e, name in zip(graph.edges, edge_names, strict=True):
            if credits is Credits.PER_EDGE:
                spec = CreditSpec(param(f"I[{name}]"), param(f"M[{name}]"))
            elif credits is Credits.GLOBAL:
                spec = CreditSpec(param("I"), param("M"))
            else:
                spec = e.credit
            edges.append(replace(e, credit=spec))
        nodes = []
        for node in graph.nodes:
            if symbolic_supply and node.source:
                nodes.append(replace(node, publishes=param(f"P[{node.name}]")))
            else:
                nodes.append(node)
        #: The graph with symbolic specs/supplies, on which the model code runs.
        self.symbolic_graph = replace(graph, edges=tuple(edges), nodes=tuple(nodes))
        self.net = net = CreditNetwork(self.symbolic_graph)
        self.edge_terms = tuple(
            EdgeTerms(term(e.credit.initial), term(e.credit.more_after), e.sends_per_message)
            for e in edges
        )
        names = [""] * net.size
        for i, name in enumerate(edge_names):
            for f, label in enumerate(FIELD_LABELS):
                names[EDGE_FIELDS * i + f] = f"{label}[{name}]"
        node_names = graph.node_names
        for n, slot in net.remaining_slot.items():
            names[slot] = f"publishes_left[{node_names[n]}]"
        for n, slot in net.delivered_slot.items():
            names[slot] = f"consumed[{node_names[n]}]"
        # Z3-FAULT-SLOTS: the flat encoding's fault slots (none without faults)
        for n, slot in net.alive_slot.items():
            names[slot] = f"alive[{node_names[n]}]"
        for (p, d), slot in net.handled_slot.items():
            names[slot] = f"handled[{node_names[p]}<-{node_names[d]}]"
        for (p, d), slot in net.held_from_slot.items():  # CF-ENTRY
            names[slot] = f"holds_credit_from[{node_names[p]}<-{node_names[d]}]"
        for (p, d), slot in net.held_to_slot.items():
            names[slot] = f"holds_credit_to[{node_names[p]}<-{node_names[d]}]"
        if net.crash_count_slot is not None:
            names[net.crash_count_slot] = "crashes"
        for n, slot in net.lost_slot.items():
            names[slot] = f"lost[{node_names[n]}]"
        self.slot_names = tuple(names)
        #: The template state: one integer variable per slot of the model's state.
        self.x = tuple(z3.Int(symbol(f"x.{name}")) for name in names)
        self.actions = net.actions
        self._xs = tuple(as_int(Sym(v)) for v in self.x)

    # -- parameters ----------------------------------------------------------------

    @property
    def param_constraints(self) -> z3.BoolRef:
        """Constraints every parameter valuation satisfies (supplies are >= 0)."""
        return _conj(v >= 0 for k, v in self.params.items() if k.startswith("P["))

    def spec_values(self, model: z3.ModelRef) -> tuple[CreditSpec, ...]:
        """Each edge's concrete spec in ``model`` (Z3-WITNESS)."""
        return tuple(
            CreditSpec(
                model.eval(t.initial, model_completion=True).as_long(),
                model.eval(t.more_after, model_completion=True).as_long(),
            )
            for t in self.edge_terms
        )

    def concrete_graph(self, model: z3.ModelRef) -> FlowGraph:
        """The concrete graph of a model: symbolic credits and supplies replaced by the
        values Z3 chose (Z3-WITNESS)."""
        edges = tuple(
            replace(e, credit=spec)
            for e, spec in zip(self.graph.edges, self.spec_values(model), strict=True)
        )
        nodes = []
        for n in self.graph.nodes:
            name = f"P[{n.name}]"
            if name in self.params:
                value = model.eval(self.params[name], model_completion=True).as_long()
                nodes.append(replace(n, publishes=value))
            else:
                nodes.append(n)
        return replace(self.graph, edges=edges, nodes=tuple(nodes))

    # -- instantiation ---------------------------------------------------------------

    def state(self, prefix: str) -> tuple[z3.ArithRef, ...]:
        """Fresh state variables ``prefix.<slot>``."""
        return tuple(z3.Int(symbol(f"{prefix}.{name}")) for name in self.slot_names)

    def at(self, template: z3.ExprRef, state: Sequence[z3.ExprRef]) -> z3.ExprRef:
        """``template`` with the template state replaced by ``state``."""
        return z3.substitute(template, *zip(self.x, state, strict=True))

    def field(self, state: Sequence[z3.ExprRef], edge: int, f: int) -> z3.ExprRef:
        return state[EDGE_FIELDS * edge + f]

    # -- the transition relation (generated from model code) --------------------------

    def initial(self) -> tuple[z3.ArithRef, ...]:
        """NET-INIT as terms: the model's ``initial()`` run on the symbolic specs."""
        return tuple(term(v) for v in self.net.initial())

    def init_constraint(self, state: Sequence[z3.ExprRef]) -> z3.BoolRef:
        return _conj(s == v for s, v in zip(state, self.initial(), strict=True))

    @cached_property
    def guards(self) -> dict[int, z3.BoolRef]:
        """Per action, its guard over the template state (``CreditNetwork.is_enabled``)."""
        net, xs = self.net, self._xs
        return {a: truth(all_paths(partial(net.is_enabled, xs, a))) for a in self.actions}

    @cached_property
    def nexts(self) -> dict[int, tuple[z3.ArithRef, ...]]:
        """Per action, the next state over the template state (``CreditNetwork.apply``)."""
        net, xs = self.net, self._xs
        out = {}
        for a in self.actions:
            paths = all_paths(partial(net.apply, xs, a))
            out[a] = tuple(z3.simplify(merge(paths, itemgetter(i))) for i in range(net.size))
        return out

    @cached_property
    def changed(self) -> dict[int, frozenset[int]]:
        """Per action, the slots whose value it may change."""
        return {
            a: frozenset(i for i, v in enumerate(nxt) if not z3.eq(v, self.x[i]))
            for a, nxt in self.nexts.items()
        }

    def describe(self, action: int) -> str:
        return self.net.describe(action)

    @cached_property
    def blocked(self) -> tuple[z3.BoolRef, ...]:
        """Per node, NET-BLOCKED over the template state (``CreditNetwork.is_blocked``)."""
        net, xs = self.net, self._xs
        return tuple(truth(all_paths(partial(net.is_blocked, xs, n))) for n in range(net.n_nodes))

    @cached_property
    def blocks_on(self) -> tuple[z3.BoolRef, ...]:
        """Per edge, "its sender is blocked on it" (``CreditNetwork.blocks_on``)."""
        net, xs = self.net, self._xs
        return tuple(truth(all_paths(partial(net.blocks_on, xs, e))) for e in range(net.n_edges))

    @cached_property
    def pending(self) -> z3.BoolRef:
        """Work left for a non-stalled process (``CreditNetwork.pending_work``)."""
        net, xs = self.net, self._xs
        return truth(all_paths(lambda: net.pending_work(xs)))

    @cached_property
    def terminal(self) -> z3.BoolRef:
        """No action is enabled."""
        return z3.Not(_disj(self.guards.values()))

    # -- faults (Z3-FAULT-SLOTS) -----------------------------------------------------------

    def alive(self, node: int) -> z3.BoolRef:
        """NET-CRASH: ``node`` has not died (always, if it may not crash)."""
        slot = self.net.alive_slot.get(node)
        return z3.BoolVal(True) if slot is None else self.x[slot] == 1

    def live_pair(self, edge: int) -> z3.BoolRef:
        """PROP-FAULT-LIVE-PAIRS: both processes of ``edge`` are alive."""
        sender, receiver = self.net.edge_ends[edge]
        return z3.And(self.alive(sender), self.alive(receiver))

    def may_crash_now(self, node: int) -> z3.BoolRef:
        """NET-CRASH, NET-FAULT-BOUND: ``node`` may crash in this state (its crash guard)."""
        net = self.net
        if node not in net.alive_slot or net.crash_count_slot is None:
            return z3.BoolVal(False)
        return z3.And(self.alive(node), self.x[net.crash_count_slot] < net.crash_bound)

    def down_pending(self, watcher: int, dead: int) -> z3.BoolRef:
        """NET-DOWN: ``dead`` is dead and ``watcher`` has not handled its DOWN yet."""
        slot = self.net.handled_slot.get((watcher, dead))
        if slot is None:
            return z3.BoolVal(False)
        return z3.And(z3.Not(self.alive(dead)), self.x[slot] == 0)

    @cached_property
    def quiet(self) -> z3.BoolRef:
        """PROP-RECOVERY: no further crash is possible (``CreditNetwork.quiet``)."""
        net, xs = self.net, self._xs
        return truth(all_paths(lambda: net.quiet(xs)))

    # -- state properties (PROP-*) -----------------------------------------------------

    def conserved_if_live(self, edge: int) -> z3.BoolRef:
        """PROP-CONSERVATION of one edge on a live pair (PROP-FAULT-LIVE-PAIRS)."""
        if not self.net.crashable:
            return self.conserved(edge)
        return z3.Implies(self.live_pair(edge), self.conserved(edge))

    def conserved(self, edge: int) -> z3.BoolRef:
        """PROP-CONSERVATION of one edge: the model's ``edge_conserved`` on terms."""
        t = self.edge_terms[edge]
        credit_from, credit_to, data, bumps, deferred = (
            as_int(Sym(self.x[EDGE_FIELDS * edge + f])) for f in range(EDGE_FIELDS)
        )
        holds = edge_conserved(
            credit_from,
            credit_to,
            data,
            bumps,
            deferred,
            as_int(Sym(t.initial)),
            as_int(Sym(t.more_after)),
            t.debits,
        )
        return cast(SymBool, holds).expr

    def deferred_blocked(self, node: int) -> z3.BoolRef:
        """PROP-DEFERRED-BLOCKED at one node: it holds deferred grants only if blocked."""
        held = _disj(self.x[EDGE_FIELDS * g + DEFERRED] != 0 for g in self.net.in_edges[node])
        return z3.Implies(z3.And(self.alive(node), held), self.blocked[node])

    def in_flight_bounded(self, edge: int) -> z3.BoolRef:
        """PROP-IN-FLIGHT-BOUND of one edge (only constrains a checking sender whose edge
        can block): ``k*data <= I + k - 1`` and ``credit_from >= 1 - k``."""
        sender = self.net.edge_ends[edge][0]
        if not self.net.checks[sender]:
            return z3.BoolVal(True)
        t = self.edge_terms[edge]
        k = t.debits
        data = self.x[EDGE_FIELDS * edge + DATA]
        cf = self.x[EDGE_FIELDS * edge + CREDIT_FROM]
        return z3.Implies(
            z3.And(self.live_pair(edge), t.initial >= 1),
            z3.And(k * data <= t.initial + k - 1, cf >= 1 - k),
        )

    def mailbox(self, node: int) -> z3.ArithRef:
        """Data waiting for ``node`` (``CreditNetwork.mailbox``)."""
        return term(self.net.mailbox(self._xs, node))

    @cached_property
    def path_counts(self) -> dict[int, dict[int, int]] | None:
        """Per sink, the number of paths from each node to it; ``None`` with cycles."""
        return sink_path_counts(self.net)

    def nothing_lost(self) -> z3.BoolRef:
        """PROP-NOTHING-LOST (acyclic graphs; true otherwise)."""
        counts = self.path_counts
        if counts is None:
            return z3.BoolVal(True)
        net, x = self.net, self.x
        parts = []
        for sink, paths in counts.items():
            in_system = x[net.delivered_slot[sink]] + z3.Sum(
                [z3.IntVal(0)]
                + [
                    paths[net.edge_ends[e][1]] * x[EDGE_FIELDS * e + DATA]
                    for e in sorted(e for r in paths for e in net.in_edges[r])
                ]
                # PROP-FAULT-LOST: a message lost to d's crash would have gone on from d
                + [paths[d] * x[slot] for d, slot in net.lost_slot.items() if paths.get(d)]
            )
            published = z3.Sum(
                [z3.IntVal(0)]
                + [
                    paths[n] * (term(self.symbolic_graph.nodes[n].publishes) - x[slot])
                    for n, slot in net.remaining_slot.items()
                    if n in paths
                ]
            )
            parts.append(in_system == published)
        return _conj(parts)

    def property_formulas(self, mailbox_bound: int | None = None) -> dict[str, z3.BoolRef]:
        """Each PROP-* state property as a formula over the template state."""
        net = self.net
        props = {
            "PROP-CONSERVATION": _conj(self.conserved_if_live(e) for e in range(net.n_edges)),
            "PROP-DEFERRED-BLOCKED": _conj(self.deferred_blocked(n) for n in range(net.n_nodes)),
            "PROP-IN-FLIGHT-BOUND": _conj(self.in_flight_bounded(e) for e in range(net.n_edges)),
            "PROP-MAILBOX-BOUND": z3.BoolVal(True),
            "PROP-NOTHING-LOST": self.nothing_lost(),
        }
        if mailbox_bound is not None:
            props["PROP-MAILBOX-BOUND"] = _conj(
                self.mailbox(n) <= mailbox_bound for n in range(net.n_nodes) if net.in_edges[n]
            )
        if net.crashable:
            props["PROP-FAULT-FORGET"] = self.dead_peers_forgotten()
        return props

    def dead_peers_forgotten(self) -> z3.BoolRef:
        """PROP-FAULT-FORGET: no live process that handled a DOWN keeps an entry for the
        dead peer: its handler called CF-PEER-DOWN (not ``ignore``) and no later ack
        re-created the entry (handled slot 2, NET-DOWN-EARLY)."""
        net, x = self.net, self.x
        parts = []
        for (p, d), slot in net.handled_slot.items():
            if net.peer_down[p]:
                leaked = x[slot] == 2
            else:  # CF-ENTRY: only an entry the watcher used can leak
                held = [
                    x[h[(p, d)]] == 1 for h in (net.held_from_slot, net.held_to_slot) if (p, d) in h
                ]
                leaked = z3.And(x[slot] != 0, _disj(held))
            parts.append(z3.Not(z3.And(leaked, self.alive(p))))
        return _conj(parts)

    # -- deadlock witnesses ----------------------------------------------------------------

    def bad_terminal(self) -> z3.BoolRef:
        """Z3-BAD-TERMINAL: nothing can move and work is pending or somebody is blocked."""
        return z3.And(self.terminal, z3.Or(self.pending, _disj(self.blocked)))

    def unrecovered(self, members: Sequence[z3.BoolRef]) -> z3.BoolRef:
        """Z3-FAULT-RECOVERY: a PROP-RECOVERY witness: a quiet state in which somebody is
        blocked forever (blocked in a terminal state, or a dead set ``members``)."""
        return z3.And(
            self.quiet,
            z3.Or(z3.And(self.terminal, _disj(self.blocked)), self.dead_set(members)),
        )

    def dead_clauses(self, members: Sequence[z3.BoolRef]) -> list[z3.BoolRef]:
        """Z3-DEAD-SET, per process ``n``: if ``members[n]`` then ``n`` is blocked and stays
        blocked: it is stalled, or one of its blocking out-edges ``e = n -> r`` can never
        again get positive credit: no grants at all (``M <= 0``); or ``r`` is in the set or
        stalled, so only the grants already in flight can still arrive; or ``n`` checks,
        so it sends nothing more and at most the grants for what is in flight, deferred or
        half-counted can arrive."""
        net, x = self.net, self.x
        clauses = []
        for n in range(net.n_nodes):
            # Z3-FAULT-DEAD-SET: a member is alive and cannot crash any more
            lives = z3.And(self.alive(n), z3.Not(self.may_crash_now(n)))
            if net.stalled[n]:
                clauses.append(z3.Implies(members[n], z3.And(lives, self.blocked[n])))
                continue
            ways = []
            for e in net.out_edges[n]:
                r = net.edge_ends[e][1]
                t = self.edge_terms[e]
                cf, ct, data, bumps, deferred = (x[EDGE_FIELDS * e + f] for f in range(EDGE_FIELDS))
                m = t.more_after
                options = [
                    m <= 0,
                    z3.And(
                        z3.Or(members[r], z3.BoolVal(bool(net.stalled[r]))), cf + m * bumps <= 0
                    ),
                ]
                if net.checks[n]:
                    future = (m - ct + t.debits * data) / m
                    options.append(z3.And(m >= 1, cf + m * (bumps + deferred + future) <= 0))
                if r in net.alive_slot:
                    # Z3-FAULT-DEAD-SET: a dead receiver sends only the grants in flight
                    options.append(z3.And(z3.Not(self.alive(r)), cf + m * bumps <= 0))
                way = z3.And(self.blocks_on[e], z3.Or(*options))
                if r in net.alive_slot and net.peer_down[n]:
                    # ... and its crash, or a DOWN still to come, would release n
                    # (CF-PEER-DOWN; PROP-FAULT-BLOCKED counts crashes still possible)
                    way = z3.And(
                        way, z3.Not(self.may_crash_now(r)), z3.Not(self.down_pending(n, r))
                    )
                ways.append(way)
            clauses.append(z3.Implies(members[n], z3.And(lives, _disj(ways))))
        return clauses

    def dead_set(self, members: Sequence[z3.BoolRef]) -> z3.BoolRef:
        """Z3-DEAD-SET over the template state: ``members`` marks a non-empty set of
        processes each satisfying its :meth:`dead_clauses` clause."""
        return z3.And(_disj(members), *self.dead_clauses(members))

    # -- inductive lemmas (Z3-INVARIANT) ------------------------------------------------------

    def lemmas(self) -> dict[str, z3.BoolRef]:
        """The named conjuncts of Z3-INVARIANT over the template state."""
        net, x = self.net, self.x
        out: dict[str, z3.BoolRef] = {}
        for e, name in enumerate(self.edge_names):
            t = self.edge_terms[e]
            i, m, k = t.initial, t.more_after, t.debits
            cf, ct, data, bumps, deferred = (x[EDGE_FIELDS * e + f] for f in range(EDGE_FIELDS))
            out[f"counts[{name}]"] = z3.And(data >= 0, bumps >= 0, deferred >= 0)
            out[f"conservation[{name}]"] = self.conserved_if_live(e)
            out[f"counter[{name}]"] = z3.And(
                z3.Implies(m >= 1, z3.And(ct >= 1, ct <= m)),
                z3.Implies(m <= 0, z3.And(ct <= m, bumps == 0, deferred == 0)),
            )
            if k > 1:
                # Z3-RESIDUE: acks come k at a time, so M - credit_to is a multiple of
                # gcd(k, M), i.e. of every divisor d of k that divides M.
                out[f"residue[{name}]"] = _conj(
                    z3.Implies(z3.And(m >= 1, m % d == 0), (m - ct) % d == 0)
                    for d in range(2, k + 1)
                    if k % d == 0
                )
            receiver = net.edge_ends[e][1]
            out[f"deferred-blocked[{name}]"] = z3.Implies(deferred > 0, self.blocked[receiver])
            if net.stalled[receiver]:
                out[f"stalled-receiver[{name}]"] = z3.And(ct == m, bumps == 0, deferred == 0)
            if net.checks[net.edge_ends[e][0]]:
                out[f"in-flight[{name}]"] = z3.Implies(i >= 1, cf >= 1 - k)
        for n, slot in net.remaining_slot.items():
            name = self.graph.node_names[n]
            supply = term(self.symbolic_graph.nodes[n].publishes)
            out[f"supply[{name}]"] = z3.And(x[slot] >= 0, x[slot] <= supply)
        for n, slot in net.delivered_slot.items():
            name = self.graph.node_names[n]
            out[f"consumed[{name}]"] = x[slot] == 0 if net.stalled[n] else x[slot] >= 0
        if net.crash_count_slot is not None:
            # Z3-FAULT-SLOTS: the ranges of the fault slots
            alive = [x[slot] for slot in net.alive_slot.values()]
            crashes = x[net.crash_count_slot]
            out["faults"] = z3.And(
                *(z3.Or(a == 0, a == 1) for a in alive),
                *(z3.And(x[h] >= 0, x[h] <= 2) for h in net.handled_slot.values()),
                *(
                    z3.Or(x[h] == 0, x[h] == 1)  # CF-ENTRY
                    for held in (net.held_from_slot, net.held_to_slot)
                    for h in held.values()
                ),
                crashes == z3.Sum([z3.IntVal(0)] + [1 - a for a in alive]),
                crashes <= net.crash_bound,
                *(x[slot] >= 0 for slot in net.lost_slot.values()),
            )
        names = self.graph.node_names
        for d, slot in net.alive_slot.items():
            # Z3-FAULT-SLOTS: a dead process's pairs are as NET-CRASH left them
            parts = []
            for e in net.in_edges[d]:
                base = EDGE_FIELDS * e
                parts += [
                    x[base + DATA] == 0,
                    x[base + DEFERRED] == 0,
                    x[base + CREDIT_TO] == self.edge_terms[e].more_after,
                ]
            for e in net.out_edges[d]:
                base = EDGE_FIELDS * e
                parts += [x[base + BUMPS] == 0, x[base + CREDIT_FROM] == self.edge_terms[e].initial]
            for held in (net.held_from_slot, net.held_to_slot):  # CF-ENTRY: its dictionary
                parts += [x[h] == 0 for (w, _), h in held.items() if w == d]
            out[f"dead[{names[d]}]"] = z3.Implies(x[slot] == 0, _conj(parts))
        for (p, d), slot in net.handled_slot.items():
            # NET-DOWN: only a dead peer's DOWN is handled; CF-PEER-DOWN reset p's credit
            # toward d and NET-DEAD stops its sends; only NET-DOWN-EARLY re-creates
            after = [x[net.alive_slot[d]] == 0]
            edge = net.edge_of.get((p, d))
            if edge is not None:
                after.append(x[EDGE_FIELDS * edge + BUMPS] == 0)  # its grants came first
            if net.peer_down[p] and edge is not None:
                after.append(x[EDGE_FIELDS * edge + CREDIT_FROM] == self.edge_terms[edge].initial)
            into = net.edge_of.get((d, p))
            if not net.down_overtakes[p]:
                after.append(x[slot] <= 1)
                if into is not None:
                    after.append(x[EDGE_FIELDS * into + DATA] == 0)  # and its data
            out[f"down[{names[p]}<-{names[d]}]"] = z3.Implies(x[slot] != 0, _conj(after))
        if self.path_counts is not None:
            out["nothing-lost"] = self.nothing_lost()
        elif all(len(edges) <= 1 for edges in net.out_edges):
            # with cycles but no fan-out, every take forwards exactly one message: the
            # messages in the system are the publishes read
            supply = [
                term(self.symbolic_graph.nodes[n].publishes) - x[slot]
                for n, slot in net.remaining_slot.items()
            ]
            out["messages"] = z3.Sum(
                [z3.IntVal(0)]
                + [x[EDGE_FIELDS * e + DATA] for e in range(net.n_edges)]
                + [x[slot] for slot in net.delivered_slot.values()]
                + [x[slot] for slot in net.lost_slot.values()]  # PROP-FAULT-LOST
            ) == z3.Sum([z3.IntVal(0)] + supply)
        return out

    # -- termination (Z3-RANK) -----------------------------------------------------------------

    @cached_property
    def rank_weights(self) -> tuple[dict[int, int], dict[int, int]] | None:
        """Z3-RANK weights for acyclic graphs, ``None`` with cycles: per edge ``e = S -> R``
        ``W(e) = 1 + k(e) + sum of W over R's out-edges`` (a message on ``e`` still causes
        at most that many steps and grants), per source ``1 + sum of W over its out-edges``."""
        if self.path_counts is None:
            return None
        net = self.net
        g = nx.DiGraph()
        g.add_nodes_from(range(net.n_nodes))
        g.add_edges_from(net.edge_ends)
        below: dict[int, int] = {}  # per node: the weight of what it forwards
        for node in reversed(list(nx.topological_sort(g))):
            below[node] = sum(
                1 + net.debits[e] + below[net.edge_ends[e][1]] for e in net.out_edges[node]
            )
        edge_w = {e: 1 + net.debits[e] + below[r] for e, (_, r) in enumerate(net.edge_ends)}
        source_w = {n: 1 + below[n] for n in net.source_nodes}
        return edge_w, source_w

    def rank(self) -> z3.ArithRef:
        """Z3-RANK over the template state (acyclic graphs only)."""
        weights = self.rank_weights
        if weights is None:
            raise ValueError("the ranking function needs an acyclic graph")
        edge_w, source_w = weights
        net, x = self.net, self.x
        parts: list[z3.ArithRef] = [z3.IntVal(0)]
        for n, slot in net.remaining_slot.items():
            parts.append(source_w[n] * x[slot])
        for e, w in edge_w.items():
            base = EDGE_FIELDS * e
            parts.append(w * x[base + DATA] + x[base + BUMPS] + x[base + DEFERRED])
        # Z3-FAULT-RANK: a crash kills one live process, a DOWN is handled once, and
        # neither adds a message or a grant
        parts += [x[slot] for slot in net.alive_slot.values()]
        parts += [z3.If(x[slot] == 0, 1, 0) for slot in net.handled_slot.values()]
        return z3.Sum(parts)

    def rank_text(self) -> str:
        """Z3-RANK as readable text: ``7*publishes_left[reader] + 6*data[reader->channel]
        + bumps[reader->channel] + ...``."""
        edge_w, source_w = self.rank_weights or ({}, {})
        names = self.graph.node_names
        parts = [f"{w}*publishes_left[{names[n]}]" for n, w in source_w.items()]
        for e, w in edge_w.items():
            name = self.edge_names[e]
            parts.append(f"{w}*data[{name}] + bumps[{name}] + deferred[{name}]")
        parts += [f"alive[{names[n]}]" for n in self.net.alive_slot]
        parts += [f"[handled[{names[p]}<-{names[d]}] = 0]" for p, d in self.net.handled_slot]
        return " + ".join(parts)

    def values(self, model: z3.ModelRef, state: Sequence[z3.ExprRef]) -> tuple[int, ...]:
        """A state's integer values in ``model``."""
        return tuple(model.eval(v, model_completion=True).as_long() for v in state)


def relevant(
    formulas: Mapping[str, z3.BoolRef], variables: Iterable[z3.ExprRef]
) -> dict[str, z3.BoolRef]:
    """The formulas that mention any of ``variables``."""
    wanted = {v.get_id() for v in variables}
    return {
        name: f for name, f in formulas.items() if any(v.get_id() in wanted for v in free_vars(f))
    }


def free_vars(expr: z3.ExprRef) -> list[z3.ExprRef]:
    """The uninterpreted constants of ``expr``."""
    seen: dict[int, z3.ExprRef] = {}
    stack = [expr]
    visited: set[int] = set()
    while stack:
        e = stack.pop()
        if e.get_id() in visited:
            continue
        visited.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            seen[e.get_id()] = e
        else:
            stack.extend(e.children())
    return list(seen.values())
