"""Credit flow vs accounts on the same topologies (CMP-CYCLE, CMP-SLOW-CONSUMER).

Each comparison explores a credit network (NET, :mod:`creditflow.conformance.explore.check`) and
an actor graph (AC, :mod:`creditflow.conformance.families.accounts.explore`) of one topology and
reports, for each: the deadlock verdict, who is blocked forever, who is blocked at the
end of every maximal run, and a per-topology figure. ``spec/credit-vs-accounts.md``
quotes the results; ``tests/test_compare.py`` checks them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import networkx as nx

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.counterexamples import DeadlockKind, deadlock_kind
from creditflow.conformance.explore.encoding import State
from creditflow.conformance.explore.explorer import ExplorationResult
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.families.accounts.explore import AccountsOptions, check_actor_graph
from creditflow.model.accounts.graph import actor_graph_from_networkx
from creditflow.model.accounts.system import CheckedAccounts
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import flow_graph_from_networkx


@dataclass(frozen=True)
class Verdict:
    """One mechanism's result on one topology."""

    mechanism: str
    states: int
    deadlock: DeadlockKind | None  #: ``None``: no deadlock
    blocked_forever: tuple[str, ...]
    shortest: int | None
    #: the processes blocked in the states where nothing can move, over all such states
    blocked_at_end: frozenset[frozenset[str]]
    #: the steps of the shortest deadlock counterexample
    steps: tuple[str, ...] = ()
    figures: dict[str, int] = field(default_factory=dict)

    def ends(self) -> list[list[str]]:
        """Who is blocked in the states where nothing can move, sorted."""
        return sorted(sorted(s) for s in self.blocked_at_end)

    def to_json(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "states": self.states,
            "deadlock": self.deadlock,
            "blocked_forever": list(self.blocked_forever),
            "shortest": self.shortest,
            "blocked_at_end": self.ends(),
            "steps": list(self.steps),
            "figures": dict(self.figures),
        }


@dataclass(frozen=True)
class Comparison:
    """CMP-CYCLE, CMP-SLOW-CONSUMER: both mechanisms' verdicts on one topology."""

    rule: str
    topology: str
    credit: Verdict
    accounts: Verdict

    def to_json(self) -> list[dict[str, Any]]:
        """OUT-JSON-SCHEMA: this topology's rows of ``accounts compare --json``
        (accounts-compare.json), credit flow first."""
        return [
            {"rule": self.rule, "topology": self.topology, **v.to_json()}
            for v in (self.credit, self.accounts)
        ]


def network_states(result: ExplorationResult) -> Sequence[State]:
    """The explored states of a credit network."""
    return cast("Sequence[State]", result.graph.states)


def accounts_states(result: ExplorationResult) -> Sequence[tuple[Any, int]]:
    """The explored states of an accounts model: (model state, step bits)."""
    return cast("Sequence[tuple[Any, int]]", result.graph.states)


def _verdict(
    model: str,
    system: CheckedNetwork | CheckedAccounts,
    result: ExplorationResult,
    states: Iterable[Any],
    blocked: Callable[[Any], frozenset[str]],
) -> Verdict:
    """One model's verdict: its deadlock, the blocked sets of its end states, the steps."""
    ends = frozenset(blocked(s) for i, s in enumerate(states) if result.graph.is_terminal(i))
    d = result.deadlock
    return Verdict(
        model,
        result.n_states,
        deadlock_kind(d),
        d.processes if d else (),
        d.length if d else None,
        ends,
        tuple(system.describe(a) for a, _ in d.path[1:] if a is not None) if d else (),
    )


def _credit_verdict(
    g: nx.DiGraph, options: CheckOptions
) -> tuple[Verdict, CheckedNetwork, ExplorationResult]:
    system, result = check_graph(flow_graph_from_networkx(g), options)
    net, names = system.network, system.process_names

    def blocked(s: Any) -> frozenset[str]:
        return frozenset(names[n] for n in range(net.n_nodes) if net.is_blocked(s, n))

    states = network_states(result)
    return _verdict("credit_flow", system, result, states, blocked), system, result


def _accounts_verdict(g: nx.DiGraph) -> tuple[Verdict, CheckedAccounts, ExplorationResult]:
    system, result = check_actor_graph(actor_graph_from_networkx(g), AccountsOptions())
    names = system.process_names

    def blocked(s: Any) -> frozenset[str]:
        return frozenset(names[x] for x in range(len(names)) if system.blocked_mask(s) >> x & 1)

    states = accounts_states(result)
    return _verdict("accounts", system, result, states, blocked), system, result


def cycle_comparison(publishes: int = 3) -> Comparison:
    """CMP-CYCLE: request/reply between A and B. Per-edge credit `{1,1}` with every
    process checking (A stops taking replies while blocked on B) deadlocks; accounts,
    where only A's input loop waits and B's replies are always handled, do not."""
    credit = nx.DiGraph(name="rpc-credit", credit=[1, 1])
    credit.add_node("A", source=True, publishes=publishes, checks_blocked=True)
    credit.add_node("B", checks_blocked=True)
    credit.add_edges_from([("A", "B"), ("B", "A")])
    actors = nx.DiGraph(name="rpc", limit=1, max_hops=2)
    actors.add_node("A", reads=publishes)
    actors.add_edges_from([("A", "B"), ("B", "A")])
    c, _, _ = _credit_verdict(credit, CheckOptions(credit=CreditSpec(1, 1)))
    a, system, result = _accounts_verdict(actors)
    a.figures["debt_at_end"] = max(
        (
            max(s[0].debt)
            for i, s in enumerate(accounts_states(result))
            if result.graph.is_terminal(i)
        ),
        default=0,
    )
    return Comparison("CMP-CYCLE", "A <-> B request/reply", c, a)


def slow_consumer_comparison(publishes: int = 4) -> Comparison:
    """CMP-SLOW-CONSUMER: producers P1, P2 -> D -> fast F and stalled S. With accounts
    only the producers wait (both, forever) while D and F keep working; with credit flow
    (RabbitMQ's wiring: only sources check) D is blocked too."""
    credit = nx.DiGraph(name="slow-consumer-credit", credit=[2, 1])
    actors = nx.DiGraph(name="slow-consumer", limit=1)
    for g in (credit, actors):
        g.add_edges_from([("P1", "D"), ("P2", "D"), ("D", "F"), ("D", "S")])
    for p in ("P1", "P2"):
        credit.nodes[p].update(source=True, publishes=publishes)
        actors.nodes[p]["reads"] = publishes
    credit.nodes["S"]["stalled"] = True
    actors.nodes["S"]["stalled"] = True
    c, csys, cres = _credit_verdict(credit, CheckOptions())
    a, asys, ares = _accounts_verdict(actors)
    net = csys.network
    s_edge = net.edge_index[("D", "S")]
    c.figures["backlog_at_S"] = max(
        net.field(s, s_edge, 2)
        for i, s in enumerate(network_states(cres))
        if cres.graph.is_terminal(i)
    )
    s_index = asys.model.actor_index["S"]
    a.figures["backlog_at_S"] = max(
        sum(loan.cost for loan in s[0].actors[s_index].mailbox)
        for i, s in enumerate(accounts_states(ares))
        if ares.graph.is_terminal(i)
    )
    return Comparison("CMP-SLOW-CONSUMER", "P1, P2 -> D -> F, S (stalled)", c, a)
