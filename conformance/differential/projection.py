"""Network runs projected to per-process ops (TRACE-PROJECTION).

One NET step is one process doing a NET-READ, NET-TAKE or NET-BUMP with every CF
operation it implies; :func:`step_ops` lists those operations as protocol ops, so
that a network trace from the explorer can be replayed against an adapter, op by op.
:class:`ProjectedProcesses` runs the same projection through the CF model and checks
that the NET model agrees with it on every pair (tests/test_network_vs_process.py).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence

from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.explore.encoding import (
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    CreditNetwork,
    State,
    Step,
)
from creditflow.model.credit import flow as cf
from creditflow.model.network.graph import EdgeSpec, FlowGraph


def _edge(graph: FlowGraph, sender: str, receiver: str) -> EdgeSpec:
    for e in graph.edges:
        if e.sender == sender and e.receiver == receiver:
            return e
    raise ValueError(f"{graph.name} has no edge {sender} -> {receiver}")


def _forward_ops(
    graph: FlowGraph, node: str, handled: frozenset[tuple[str, str]] = frozenset()
) -> list[Op]:
    """NET-FORWARD: CF-SEND toward every successor, ``sends_per_message`` times each;
    none toward a dead successor whose DOWN ``node`` has handled (NET-DEAD)."""
    return [
        Op("send", node, e.receiver, spec=e.credit)
        for e in graph.edges
        if e.sender == node and (node, e.receiver) not in handled
        for _ in range(e.sends_per_message)
    ]


def step_ops(
    graph: FlowGraph, step: Step, handled: frozenset[tuple[str, str]] = frozenset()
) -> list[Op]:
    """TRACE-PROJECTION: the per-process ops of one network step, in execution order.

    ``read(n)``: NET-READ forwards (sends). ``take(n<-p)``: NET-TAKE acks ``p`` (CF-ACK,
    ``sends_per_message`` times), then forwards. ``bump(n<-p)``: NET-BUMP handles one
    grant of ``p``'s pair, whose amount is the pair's ``MoreCreditAfter`` (CF-BUMP).
    ``crash(d)``: no op of a live process (NET-CRASH). ``down(n<-d)``: CF-PEER-DOWN of
    ``d`` by ``n``, unless ``n``'s handler ignores the DOWN (NET-DOWN). ``handled``: the
    ``(n, d)`` DOWNs handled before the step (NET-DEAD: no send toward ``d`` after).
    """
    if step.kind == "read":
        return _forward_ops(graph, step.node, handled)
    if step.kind == "crash":
        return []
    assert step.peer is not None
    if step.kind == "take":
        edge = _edge(graph, step.peer, step.node)
        acks = [Op("ack", step.node, step.peer, spec=edge.credit)] * edge.sends_per_message
        return acks + _forward_ops(graph, step.node, handled)
    if step.kind == "bump":
        edge = _edge(graph, step.node, step.peer)
        return [Op("bump", step.node, step.peer, amount=edge.credit.more_after)]
    if step.kind == "down":
        if not graph.node(step.node).calls_peer_down:
            return []
        return [Op("peer_down", step.node, step.peer)]
    raise ValueError(f"unknown network step {step.kind!r}")


def run_ops(graph: FlowGraph, steps: Iterable[Step]) -> list[Op]:
    """The ops of a whole run, and nothing else (no ``state`` queries)."""
    ops: list[Op] = []
    handled: frozenset[tuple[str, str]] = frozenset()
    for step in steps:
        ops += step_ops(graph, step, handled)
        if step.kind == "down":
            handled |= {(step.node, str(step.peer))}
    return ops


class ProjectedProcesses:
    """Every process of a network as a CF :class:`~creditflow.model.credit.flow.ProcessCredit`
    plus the grant FIFOs between them, advanced by the projected ops of each step."""

    def __init__(self, net: CreditNetwork) -> None:
        self.net = net
        self.graph = net.graph
        self.procs = {n: cf.INITIAL for n in net.graph.node_names}
        self.grants: dict[tuple[str, str], deque[int]] = {}

    def _emit(self, sender: str, emitted: Sequence[tuple[str, int]]) -> None:
        for to, amount in emitted:
            self.grants.setdefault((sender, to), deque()).append(amount)

    def step(self, action: int) -> None:
        """Apply the projection of one network action (NET-FIFO: a bump takes the
        oldest grant of its pair)."""
        for op in step_ops(self.graph, self.net.decode(action)):
            ps = self.procs[op.proc]
            assert op.peer is not None  # a step's ops all name a peer
            if op.kind == "send":
                assert op.spec is not None
                self.procs[op.proc] = cf.send(ps, op.peer, op.spec)
            elif op.kind == "ack":
                assert op.spec is not None
                self.procs[op.proc], out = cf.ack(ps, op.peer, op.spec)
                self._emit(op.proc, out)
            else:
                amount = self.grants[(op.peer, op.proc)].popleft()
                self.procs[op.proc], out = cf.handle_bump(ps, op.peer, amount)
                self._emit(op.proc, out)

    def disagreements(self, state: State) -> list[str]:
        """Where the NET state differs from the projected CF processes (empty if none):
        credit, counters, deferred and in-flight grants per pair, blockers per process."""
        out = []
        names = self.graph.node_names
        for i, e in enumerate(self.graph.edges):
            s, r = e.sender, e.receiver
            f = state[EDGE_FIELDS * i : EDGE_FIELDS * i + EDGE_FIELDS]
            checks = (
                ("credit_from", self.procs[s].credit_from.get(r, e.credit.initial), f[CREDIT_FROM]),
                ("credit_to", self.procs[r].credit_to.get(s, e.credit.more_after), f[CREDIT_TO]),
                ("deferred", sum(1 for to, _ in self.procs[r].deferred if to == s), f[DEFERRED]),
                ("bumps", len(self.grants.get((r, s), ())), f[BUMPS]),
            )
            out += [f"{s}->{r} {name}: CF {a}, NET {b}" for name, a, b in checks if a != b]
            if f[DATA] < 0:
                out.append(f"{s}->{r} data: {f[DATA]} < 0")
        for n, name in enumerate(names):
            blockers = Counter(names[r] for r in self.net.blockers(state, n))
            if Counter(self.procs[name].blocked) != blockers:
                out.append(
                    f"{name} blocked: CF {list(self.procs[name].blocked)}, "
                    f"NET {sorted(blockers.elements())}"
                )
        return out
