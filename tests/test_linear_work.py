"""IN-WORK on the structures issue 20 found non-linear: PROP-NOTHING-LOST's per-action
table (quadratic in the edges: a 10,000-node, 20,000-edge graph ended in MemoryError)
is sparse, AC-OVERSHOOT's potentials are computed without recursion (a 3,000-actor
chain raised RecursionError), and a PG-SIZES pattern is published as one batch.
Structure on moderate sizes, not timings: the before and after figures are in
``benchmarks/big_graph_bench.py``. Cost: ~10 s."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import networkx as nx

from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.explore.properties import NOTHING_LOST, MessageMoves
from creditflow.conformance.inputs.graphs import graph_from_node_link
from creditflow.model.accounts.graph import actor_graph_from_networkx
from creditflow.model.accounts.properties import overshoot_bounds
from creditflow.model.accounts.rules import AccountsModel
from creditflow.model.paging import operations as paging
from creditflow.model.paging.profile import PROFILE_3_10_8
from creditflow.model.paging.state import Config, Work, initial_state


def random_graph(nodes: int, edges: int) -> dict:
    rng = random.Random(1)
    pairs = {(rng.randrange(i), i) for i in range(1, nodes)}
    while len(pairs) < edges:
        a, b = sorted(rng.sample(range(nodes), 2))
        pairs.add((a, b))
    ids = [{"id": f"n{i}"} for i in range(nodes)]
    ids[0]["source"] = True
    return {
        "graph": {"credit": [1, 1]},
        "nodes": ids,
        "edges": [{"source": f"n{a}", "target": f"n{b}"} for a, b in sorted(pairs)],
    }


def test_message_moves_are_sparse_and_still_judge_steps() -> None:
    """IN-WORK, PROP-NOTHING-LOST: each action keeps only the slots it moves (at most
    one taken plus its taker's out-edges), so the table is linear in actions + edges;
    a step that drops a message is still caught."""
    network = CreditNetwork(graph_from_node_link(random_graph(1_000, 3_000)), count_consumed=False)
    moves = MessageMoves(network)
    entries = sum(len(m) for m in moves._moves.values())
    assert len(moves.slots) > 3_000
    assert entries <= len(network.actions) + 2 * network.n_edges * 3
    assert entries < len(network.actions) * len(moves.slots) / 100  # not a dense table
    state = network.initial()
    for action in network.actions:
        if network.is_enabled(state, action):
            after = network.apply(state, action)
            assert moves.violations(state, action, after) == ()
            dense = moves.change(action)
            assert sum(1 for d in dense if d) == len(moves._moves[action])
            lost = list(after)
            moved = [moves.slots[i] for i, d in moves._moves[action] if d > 0]
            lost[moved[0]] -= 1  # a message put on an out-edge vanishes
            assert moves.violations(state, action, tuple(lost)) == (NOTHING_LOST,)
            break
    else:
        raise AssertionError("no action enabled in the initial state")


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def test_overshoot_bounds_need_no_recursion() -> None:
    """IN-WORK, AC-OVERSHOOT: the potentials of a 3,000-actor chain (and 2,000 hops
    round a cycle) are computed under a recursion limit of 150, and agree with the
    closed form: along a chain every event causes one more downstream."""
    chain = nx.DiGraph()
    chain.add_node("a0", reads=1)
    nx.add_path(chain, [f"a{i}" for i in range(3_000)])
    cycle = nx.DiGraph(max_hops=2_000)
    cycle.add_node("a", reads=1)
    nx.add_cycle(cycle, ["a", "b"])
    with recursion_limit(150):
        (chain_bound,) = overshoot_bounds(AccountsModel(actor_graph_from_networkx(chain)))
        (cycle_bound,) = overshoot_bounds(AccountsModel(actor_graph_from_networkx(cycle)))
    assert chain_bound.transitive_fanout == 2_999
    assert cycle_bound.transitive_fanout == 2_000


def test_a_size_pattern_is_published_as_one_batch(monkeypatch) -> None:
    """PG-SIZES, IN-WORK: a pattern's messages, published as one batch, give the same
    state and reports as one publish per message; the state is frozen once, not once
    per message (100,000 messages of a pattern took 94 s, of one size 1.6 s)."""
    cfg = Config(PROFILE_3_10_8.with_settings(store_credit=(10, 5), segment_entries=16))
    sizes = [100, 5_000, 0, 70_000] * 30
    st, one_by_one = initial_state(), []
    for size in sizes:
        done = paging.basic_publish(cfg, st, size, True)
        st = done.state
        one_by_one += done.reports
    batch = paging.basic_publish_sizes(cfg, initial_state(), sizes, True)
    assert batch.state == st and list(batch.reports) == one_by_one
    frozen = []
    freeze = Work.freeze
    monkeypatch.setattr(Work, "freeze", lambda self: frozen.append(1) or freeze(self))
    paging.basic_publish_sizes(cfg, initial_state(), sizes * 10)
    assert frozen == [1]
