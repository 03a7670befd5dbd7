"""EXP-*: the explorer's verdicts, shortest counterexamples, reductions and budget."""

from __future__ import annotations

from hypothesis import assume, given, settings

from creditflow.conformance.explore.check import CheckOptions, check_graph, exit_code
from creditflow.conformance.explore.deadlock import blocked_forever
from creditflow.conformance.explore.encoding import CreditNetwork
from creditflow.conformance.explore.explorer import NO_DEADLOCK
from creditflow.conformance.explore.symmetry import network_symmetry
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.model.credit.spec import CreditSpec
from tests.strategies import process_graphs


def verdicts(graph, **options):
    _, result = check_graph(graph, CheckOptions(max_states=20_000, **options))
    if not result.complete:
        return None
    return {pid: (f.length, f.kind) for pid, f in result.findings.items()}


@settings(max_examples=120, deadline=None)
@given(graph=process_graphs(max_nodes=4, max_publishes=3))
def test_reductions_preserve_verdicts_and_shortest_lengths(graph):
    """EXP-SAFE, EXP-SYMMETRY, EXP-SHORTEST: with or without the safe-action and symmetry
    reductions the same properties are violated, with the same shortest lengths and
    deadlock kinds."""
    full = verdicts(graph, symmetry=False, reduce=False)
    assume(full is not None)  # cycles with fan-out multiply messages without bound
    assert verdicts(graph, symmetry=True, reduce=True) == full
    assert verdicts(graph, symmetry=False, reduce=True) == full
    assert verdicts(graph, symmetry=True, reduce=False) == full


def test_safe_reduction_and_symmetry_shrink_fanout():
    """EXP-SAFE, EXP-SYMMETRY: fan-out's two queues are symmetric; the store's takes and
    the channel's bumps are safe."""
    graph = load_preset("fanout")
    options = {"credit": CreditSpec(3, 1), "publishes": 6}
    _, plain = check_graph(graph, CheckOptions(symmetry=False, reduce=False, **options))
    _, reduced = check_graph(graph, CheckOptions(**options))
    assert reduced.symmetry_order == 2 and reduced.reduced
    assert reduced.n_states * 5 < plain.n_states
    assert plain.findings == reduced.findings == {}


def test_blocked_forever_is_not_terminal_and_has_a_lasso():
    """PROP-NO-DEADLOCK, EXP-DEADLOCK, EXP-LASSO: in the faithful 2-cycle a process is
    blocked forever while others still move; the continuation keeps it blocked."""
    system, result = check_graph(load_preset("cycle2"), CheckOptions(credit=CreditSpec(2, 1)))
    deadlock = result.findings[NO_DEADLOCK]
    assert deadlock.kind == "blocked-forever"
    end = deadlock.path[-1][1]
    assert system.successors(end), "not terminal: something can still move"
    assert deadlock.continuation
    net = system.network
    for _, state in deadlock.continuation:
        for name in deadlock.processes:
            assert net.is_blocked(state, net.node_index[name])
    if deadlock.loop_start is not None:
        run = deadlock.path + deadlock.continuation
        assert run[deadlock.loop_start][1] in {s for _, s in run[deadlock.loop_start + 1 :]}


def test_blocked_forever_fixpoint_on_a_cyclic_state_graph():
    """EXP-DEADLOCK: free(s) is a least fixpoint; a blocked process in a cycle of states
    that never unblocks it is blocked forever, one that a branch unblocks is not."""
    # states: 0 -> 1 -> 2 -> 1 (cycle, process 0 blocked in 1 and 2), 0 -> 3 (all free)
    blocked = [0b00, 0b01, 0b01, 0b00]
    offsets = [0, 2, 3, 4, 4]
    targets = [1, 3, 2, 1]
    depth = [0, 1, 2, 1]
    assert list(blocked_forever(blocked, offsets, targets, depth, 2)) == [0, 1, 1, 0]
    # give state 2 an exit to a free state: nobody is stuck any more
    offsets = [0, 2, 3, 5, 5]
    targets = [1, 3, 2, 1, 3]
    assert list(blocked_forever(blocked, offsets, targets, depth, 2)) == [0, 0, 0, 0]


def test_blocked_forever_with_more_than_64_processes():
    """EXP-DEADLOCK: masks wider than one machine word."""
    high = 1 << 69
    assert list(blocked_forever([high, high], [0, 1, 1], [1], [0, 1], 70)) == [high, high]
    assert list(blocked_forever([high, 0], [0, 1, 1], [1], [0, 1], 70)) == [0, 0]


def test_budget_gives_an_incomplete_verdict():
    """EXP-BUDGET: a search cut by --max-states decides nothing it has not seen."""
    _, result = check_graph(
        load_preset("fanout"),
        CheckOptions(credit=CreditSpec(3, 1), publishes=10, max_states=50),
    )
    assert not result.complete
    assert NO_DEADLOCK not in result.findings
    assert exit_code(result) == 4


def test_symmetry_finds_the_queue_swap():
    """EXP-SYMMETRY: fan-out has exactly one non-trivial automorphism."""
    sym = network_symmetry(CreditNetwork(load_preset("fanout")))
    assert sym is not None and sym.order == 2
    assert network_symmetry(CreditNetwork(load_preset("rabbitmq-publish"))) is None


def test_explorer_doctest():
    """EXP-BFS: the module example runs."""
    import doctest

    import creditflow.conformance.explore.explorer as module

    assert doctest.testmod(module).failed == 0
