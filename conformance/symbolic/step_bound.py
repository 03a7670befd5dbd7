"""Z3-STEP-BOUND: no run blocks anybody in fewer steps than this.

Every step of a network run is one read, one take or one bump (NET-ATOMIC), so a run's
length is the sum of its counters: reads ``r[s]`` per source, takes ``t[e]`` and bumps
``b[e]`` per edge. Those counters obey linear constraints whatever the interleaving:

* a process handles ``h(n) = r[n] + Σ_{f into n} t[f]`` messages and sends each on every
  out-edge, so ``sent[e] = h(sender(e))`` (NET-FORWARD);
* ``t[e] <= sent[e]`` (NET-FIFO) and a stalled process takes and bumps nothing
  (NET-STALLED);
* grants on ``e`` come every ``M`` acks, ``k`` acks per message (CF-ACK, NET-DEBITS):
  ``M·b[e] <= k·t[e]`` if ``M >= 1``, no bump at all if ``M <= 0``;
* a checking sender was not blocked before its last message (NET-CHECKS-BLOCKED):
  ``I − k·(sent[e] − 1) + M·b[e] >= 1`` on each of its edges that can block, when
  ``sent[e] >= 1``.

A process is blocked on ``e = S -> R`` (NET-BLOCKED) only when ``I >= 1`` and
``I − k·sent[e] + M·b[e] <= 0``. The least ``Σ r + Σ t + Σ b`` subject to these
constraints and "somebody is blocked" is therefore a lower bound on the length of
every run into a state where somebody is blocked, so on every PROP-NO-DEADLOCK
counterexample (a terminal deadlock and a blocked-forever process both need a blocked
process). Z3 Optimize computes it per edge; the counters are free integers, so the
bound holds for every supply. A witness run of exactly that length is a shortest one.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from creditflow.conformance.symbolic.symbolic import symbol
from creditflow.model.network.graph import FlowGraph


@dataclass(frozen=True)
class StepBound:
    """Z3-STEP-BOUND of one graph: ``steps`` is the least run length into a state where
    somebody is blocked (``None``: nobody can ever be blocked), ``per_edge`` the least
    length for the sender of each blocking edge, ``reads`` the least total supply read
    by such a run."""

    steps: int | None
    per_edge: dict[str, int]
    reads: int | None

    def per_edge_min(self, sender: str) -> int:
        """The least bound over the edges ``sender`` sends on (0 if none can block)."""
        mine = [v for k, v in self.per_edge.items() if k.split("->")[0] == sender]
        return min(mine, default=0)


def step_bound(graph: FlowGraph, timeout_ms: int = 10_000) -> StepBound:
    """Z3-STEP-BOUND for ``graph`` (concrete credits): one Z3 Optimize query per edge
    that can block. An edge whose query is not answered within ``timeout_ms`` counts
    as 0 (the bound stays a lower bound)."""
    per_edge: dict[str, int] = {}
    least_reads: int | None = None
    for target, edge in enumerate(graph.edges):
        if not edge.credit.blocks:
            continue
        name = f"{edge.sender}->{edge.receiver}"
        steps, reads = _least_run(graph, target, timeout_ms)
        if steps is None:
            continue
        per_edge[name] = steps
        if reads is not None:
            least_reads = reads if least_reads is None else min(least_reads, reads)
    steps_all = min(per_edge.values()) if per_edge else None
    return StepBound(steps_all, per_edge, least_reads)


def _least_run(graph: FlowGraph, target: int, timeout_ms: int) -> tuple[int | None, int | None]:
    """The least run length (and the least reads) for the sender of edge ``target`` to
    be blocked on it; ``(None, None)`` when no counters allow it, ``(0, 0)`` when Z3
    gives up (a trivial lower bound)."""
    reads = {n.name: z3.Int(symbol(f"r[{n.name}]")) for n in graph.nodes if n.source}
    takes = [z3.Int(f"t[{i}]") for i in range(len(graph.edges))]
    bumps = [z3.Int(f"b[{i}]") for i in range(len(graph.edges))]
    handled: dict[str, z3.ArithRef] = {n.name: reads.get(n.name, z3.IntVal(0)) for n in graph.nodes}
    for i, e in enumerate(graph.edges):
        handled[e.receiver] = handled[e.receiver] + takes[i]
    stalled = {n.name for n in graph.nodes if n.stalled}
    checks = {n.name for n in graph.nodes if n.checks_blocked}
    facts: list[z3.BoolRef] = [r >= 0 for r in reads.values()]
    facts += [reads[s] == 0 for s in reads if s in stalled]
    for i, e in enumerate(graph.edges):
        sent = handled[e.sender]
        i_credit, m, k = e.credit.initial, e.credit.more_after, e.sends_per_message
        facts += [takes[i] >= 0, takes[i] <= sent, bumps[i] >= 0]
        if e.receiver in stalled:
            facts.append(takes[i] == 0)
        if e.sender in stalled or m <= 0:
            facts.append(bumps[i] == 0)
        else:
            facts.append(m * bumps[i] <= k * takes[i])
        if e.sender in checks and e.credit.blocks:
            facts.append(z3.Implies(sent >= 1, i_credit - k * (sent - 1) + m * bumps[i] >= 1))
    edge = graph.edges[target]
    blocked = (
        edge.credit.initial
        - edge.sends_per_message * handled[edge.sender]
        + edge.credit.more_after * bumps[target]
        <= 0
    )
    steps = z3.Sum([*reads.values(), *takes, *bumps]) if graph.edges else z3.IntVal(0)
    total_reads = z3.Sum(list(reads.values())) if reads else z3.IntVal(0)
    least_steps = _minimum(facts + [blocked], steps, timeout_ms)
    if least_steps is None:
        return None, None
    least_reads = _minimum(facts + [blocked], total_reads, timeout_ms)
    return least_steps, least_reads


def _minimum(facts: list[z3.BoolRef], objective: z3.ArithRef, timeout_ms: int) -> int | None:
    """The least value of ``objective`` under ``facts``; ``None`` when unsatisfiable, 0
    when the solver gives up (still a lower bound: every objective here is >= 0)."""
    opt = z3.Optimize()
    opt.set("timeout", timeout_ms)
    opt.add(*facts)
    handle = opt.minimize(objective)
    answer = opt.check()
    if answer == z3.unsat:
        return None
    if answer != z3.sat:
        return 0
    value = opt.lower(handle)
    return value.as_long() if z3.is_int_value(value) else 0
