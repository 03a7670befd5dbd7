"""NET-*: network steps on small hand-made graphs, and graph validation (NET-GRAPH)."""

from __future__ import annotations

import networkx as nx
import pytest

from creditflow.conformance.explore.encoding import (
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    CreditNetwork,
    Step,
)
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph, GraphError, flow_graph_from_networkx


def chain(*specs: tuple[int, int], checks: bool | None = None, stalled_last=False) -> FlowGraph:
    g = nx.DiGraph()
    names = [f"p{i}" for i in range(len(specs) + 1)]
    g.add_node(names[0], source=True, publishes=5)
    for name in names[1:]:
        g.add_node(name)
    if checks is not None:
        for name in names:
            g.nodes[name]["checks_blocked"] = checks
    if stalled_last:
        g.nodes[names[-1]]["stalled"] = True
    for i, spec in enumerate(specs):
        g.add_edge(names[i], names[i + 1], credit=list(spec))
    return flow_graph_from_networkx(g)


def do(net: CreditNetwork, state, step: str):
    kind, rest = step.split("(")
    rest = rest.rstrip(")")
    node, _, peer = rest.partition("<-")
    action = net.encode(Step(kind, node, peer or None))
    assert action in set(net.enabled(state)), f"{step} not enabled"
    return net.apply(state, action)


def edge(net: CreditNetwork, state, sender: str, receiver: str) -> tuple[int, ...]:
    e = net.edge_index[(sender, receiver)]
    return state[5 * e : 5 * e + 5]


def test_net_init():
    """NET-INIT: full credit, counters at M, empty FIFOs, full supply."""
    net = CreditNetwork(chain((3, 2), (4, 1)))
    s = net.initial()
    assert edge(net, s, "p0", "p1") == (3, 2, 0, 0, 0)
    assert edge(net, s, "p1", "p2") == (4, 1, 0, 0, 0)
    assert net.remaining(s, 0) == 5 and net.delivered(s, 2) == 0


def test_net_read_forward_and_block():
    """NET-READ, NET-FORWARD, NET-BLOCKED: a source spends credit per publish and blocks
    at 0; a checking blocked source reads no more (NET-CHECKS-BLOCKED)."""
    net = CreditNetwork(chain((2, 1)))
    s = do(net, net.initial(), "read(p0)")
    assert edge(net, s, "p0", "p1")[CREDIT_FROM] == 1 and net.remaining(s, 0) == 4
    s = do(net, s, "read(p0)")
    assert edge(net, s, "p0", "p1")[:3] == (0, 1, 2)
    assert net.is_blocked(s, 0) and net.blockers(s, 0) == (1,)
    assert net.encode(Step("read", "p0")) not in set(net.enabled(s))


def test_net_take_ack_grant_and_sink():
    """NET-TAKE, NET-SINK, CF-ACK: the receiver acks on receipt and a sink consumes."""
    net = CreditNetwork(chain((2, 1)))
    s = do(net, do(net, net.initial(), "read(p0)"), "take(p1<-p0)")
    assert edge(net, s, "p0", "p1") == (1, 1, 0, 1, 0)
    assert net.delivered(s, 1) == 1
    s = do(net, s, "bump(p0<-p1)")
    assert edge(net, s, "p0", "p1") == (2, 1, 0, 0, 0)


def test_net_take_defers_while_blocked_and_bump_flushes():
    """NET-TAKE, NET-BUMP, CF-DEFER, CF-FLUSH: a non-checking relay blocked downstream
    keeps taking, defers its grants, and flushes them when a bump unblocks it."""
    net = CreditNetwork(chain((3, 1), (1, 1)))
    s = net.initial()
    for step in ("read(p0)", "read(p0)", "take(p1<-p0)", "take(p1<-p0)"):
        s = do(net, s, step)
    # p1 blocked on p2 after its first forward: the first grant went out, the second deferred
    assert net.is_blocked(s, 1)
    assert edge(net, s, "p0", "p1")[BUMPS] == 1 and edge(net, s, "p0", "p1")[DEFERRED] == 1
    assert edge(net, s, "p1", "p2")[CREDIT_FROM] == -1  # CF-NEGATIVE
    s = do(net, s, "take(p2<-p1)")
    s = do(net, s, "bump(p1<-p2)")  # -1 + 1 = 0: no crossing, still blocked
    assert net.is_blocked(s, 1) and edge(net, s, "p0", "p1")[DEFERRED] == 1
    s = do(net, s, "take(p2<-p1)")
    s = do(net, s, "bump(p1<-p2)")  # 0 + 1: crossing, flush
    assert not net.is_blocked(s, 1)
    assert edge(net, s, "p0", "p1")[DEFERRED] == 0 and edge(net, s, "p0", "p1")[BUMPS] == 2


def test_net_flush_waits_for_the_last_blocker():
    """NET-BUMP, CF-FLUSH, CF-MULTISET: blocked on two peers, one bump flushes nothing."""
    g = nx.DiGraph()
    g.add_node("src", source=True, publishes=3)
    g.add_nodes_from(["hub", "a", "b"])
    g.add_edge("src", "hub", credit=[5, 1])
    g.add_edge("hub", "a", credit=[1, 1])
    g.add_edge("hub", "b", credit=[1, 1])
    net = CreditNetwork(flow_graph_from_networkx(g))
    s = net.initial()
    for step in ("read(src)", "read(src)", "take(hub<-src)", "take(hub<-src)"):
        s = do(net, s, step)
    assert set(net.blockers(s, 1)) == {2, 3}
    assert edge(net, s, "src", "hub")[DEFERRED] == 1
    s = do(net, do(net, s, "take(a<-hub)"), "take(a<-hub)")
    s = do(net, s, "bump(hub<-a)")  # -1 -> 0
    s = do(net, s, "bump(hub<-a)")  # 0 -> 1: unblocked on a, still blocked on b
    assert net.blockers(s, 1) == (3,) and edge(net, s, "src", "hub")[DEFERRED] == 1
    s = do(net, do(net, s, "take(b<-hub)"), "take(b<-hub)")
    s = do(net, do(net, s, "bump(hub<-b)"), "bump(hub<-b)")
    assert not net.is_blocked(s, 1) and edge(net, s, "src", "hub")[DEFERRED] == 0


def test_net_stalled_process_does_nothing():
    """NET-STALLED: a stalled process takes nothing and handles no grant."""
    net = CreditNetwork(chain((2, 1), stalled_last=True).with_publishes(2))
    s = do(net, net.initial(), "read(p0)")
    assert list(net.enabled(s)) == [net.encode(Step("read", "p0"))]
    s = do(net, s, "read(p0)")
    assert list(net.enabled(s)) == []
    assert not net.pending_work(s)  # only the stalled mailbox is left


def test_net_all_check_variant():
    """NET-ALL-CHECK, NET-CHECKS-BLOCKED: every blocked process stops taking data."""
    graph = chain((4, 1), (1, 1)).with_all_checking()
    assert all(n.checks_blocked for n in graph.nodes)
    net = CreditNetwork(graph)
    s = do(net, do(net, net.initial(), "read(p0)"), "read(p0)")
    s = do(net, s, "take(p1<-p0)")  # p1 forwards and blocks on p2
    assert net.encode(Step("take", "p1", "p0")) not in set(net.enabled(s))


def test_net_default_checks_is_source():
    """NET-CHECKS-BLOCKED, NET-SOURCE: by default sources check and relays do not."""
    graph = chain((2, 1), (2, 1))
    assert [n.checks_blocked for n in graph.nodes] == [True, False, False]


def test_net_debits_two_sends_two_acks():
    """NET-DEBITS: sends_per_message = 2 debits twice and the receiver acks twice."""
    g = nx.DiGraph()
    g.add_node("ch", source=True, publishes=2)
    g.add_node("mirror")
    g.add_edge("ch", "mirror", credit=[4, 2], sends_per_message=2)
    net = CreditNetwork(flow_graph_from_networkx(g))
    s = do(net, net.initial(), "read(ch)")
    assert edge(net, s, "ch", "mirror")[:3] == (2, 2, 1)
    s = do(net, s, "take(mirror<-ch)")
    assert edge(net, s, "ch", "mirror") == (2, 2, 0, 1, 0)


def test_net_fifo_counts_and_atomic_step():
    """NET-FIFO, NET-ATOMIC: two senders' FIFOs are separate counts; one step does the
    whole take (ack and forward) at once."""
    g = nx.DiGraph()
    g.add_node("a", source=True, publishes=2)
    g.add_node("b", source=True, publishes=2)
    g.add_node("c")
    g.add_edge("a", "c", credit=[3, 1])
    g.add_edge("b", "c", credit=[3, 1])
    net = CreditNetwork(flow_graph_from_networkx(g))
    s = do(net, do(net, do(net, net.initial(), "read(a)"), "read(a)"), "read(b)")
    assert edge(net, s, "a", "c")[DATA] == 2 and edge(net, s, "b", "c")[DATA] == 1
    s2 = do(net, s, "take(c<-b)")
    assert edge(net, s2, "b", "c")[DATA] == 0 and edge(net, s2, "b", "c")[CREDIT_TO] == 1
    assert edge(net, s2, "b", "c")[BUMPS] == 1 and net.delivered(s2, 2) == 1


def test_net_graph_validation_errors():
    """NET-GRAPH, NET-NODE, NET-EDGE: clear errors for malformed graphs."""
    cases = []
    g = nx.DiGraph()
    g.add_node("a", source=True)
    g.add_edge("a", "a", credit=[1, 1])
    cases.append((g, "self-loop"))
    g = nx.DiGraph()
    g.add_node("a", source=True)
    g.add_edge("a", "b")
    cases.append((g, "no credit spec"))
    g = nx.DiGraph()
    g.add_node("a", source=True, checks_blockd=True)
    cases.append((g, "unknown attribute 'checks_blockd'"))
    g = nx.DiGraph()
    g.add_node("a", source=True, publishes=-1)
    cases.append((g, "publishes must be >= 0"))
    g = nx.DiGraph()
    g.add_node("a")
    cases.append((g, "no source node"))
    g = nx.DiGraph()
    g.add_node("a", source=True)
    g.add_edge("a", "b", credit=[1])
    cases.append((g, "credit must be"))
    g = nx.DiGraph()
    g.add_node("a", source="maybe")
    cases.append((g, "must be true or false"))
    cases.append((nx.Graph(), "directed"))
    for graph, message in cases:
        with pytest.raises(GraphError, match=message):
            flow_graph_from_networkx(graph)


def test_net_graph_defaults_and_overrides():
    """NET-NODE, NET-EDGE: graph-level credit and publishes are defaults; overrides apply."""
    g = nx.DiGraph(credit=[3, 1], publishes=7)
    g.add_node("a", source=True)
    g.add_node("b", role="rabbit_channel")
    g.add_edge("a", "b")
    graph = flow_graph_from_networkx(g)
    assert graph.edges[0].credit == CreditSpec(3, 1) and graph.sources[0].publishes == 7
    assert graph.with_credit(CreditSpec(9, 9)).edges[0].credit == CreditSpec(9, 9)
    assert graph.with_publishes(2).sources[0].publishes == 2
    roundtrip = flow_graph_from_networkx(graph.to_networkx())
    assert roundtrip == graph
