"""AC-*: the accounts model, its properties over explored state spaces, the worked example,
and mutants that each property must catch."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings

from creditflow.conformance.explore.explorer import NO_DEADLOCK, explore
from creditflow.model.accounts.graph import (
    ActorGraphError,
    actor_graph_from_networkx,
    seed_example,
)
from creditflow.model.accounts.properties import (
    BORROW_BEFORE_REPAY,
    CHARGE,
    DEBT_SUM,
    OVERSHOOT,
    OVERSHOOT_NAIVE,
    QUIESCENCE,
    SUSPEND_IFF,
    WAIT_OVER_LIMIT,
    overshoot_bounds,
)
from creditflow.model.accounts.rules import (
    READY,
    WAITING,
    AccountsModel,
    Loan,
    Observation,
)
from creditflow.model.accounts.system import CheckedAccounts, actor_symmetry
from tests.model_steps import apply_steps
from tests.strategies import actor_graphs


def explored(graph, naive_bound=False, model=None, symmetry=True):
    system = CheckedAccounts(graph, naive_bound=naive_bound, model=model)
    sym = actor_symmetry(system.model) if symmetry else None
    result = explore(system, symmetry=sym, max_states=200_000)
    assert result.complete
    return system, result


def max_debts(result, n_accounts):
    return [max(s[0].debt[a] for s in result.graph.states) for a in range(n_accounts)]


def graph(name, edges, limit=1, max_hops=None, **nodes):
    g = nx.DiGraph(name=name, limit=limit)
    if max_hops is not None:
        g.graph["max_hops"] = max_hops
    for node, attrs in nodes.items():
        g.add_node(node, **attrs)
    g.add_edges_from(edges)
    return actor_graph_from_networkx(g)


def run(model, state, *steps):
    """Apply named steps ``("turn", "D")`` in order; return the final state and all
    observations."""
    return apply_steps(model, state, steps, lambda outcome: outcome.observations)


# -- the worked example --------------------------------------------------------------------


def test_worked_example():
    """AC-EXAMPLE, AC-READ, AC-FANOUT, AC-BORROW, AC-REPAY, AC-WAIT, AC-NOTIFY: the seed's
    A -> D -> O1..O9 with limit 5: net +9 after D's fan-out, A waits, and wakes exactly
    when the O's repays bring the debt down to 5."""
    model = AccountsModel(seed_example(fanout=9, limit=5, reads=2))
    s = model.initial()
    s, obs = run(model, s, ("read", "A"))
    assert s.debt == (1,) and obs == [Observation("borrow", "A", 1, 1)]
    s, obs = run(model, s, ("turn", "D"))
    assert [o.kind for o in obs] == ["borrow"] * 9  # borrow before repay
    assert s.debt == (10,)
    s, obs = run(model, s, ("repay", "D"))
    assert obs == [Observation("repay", "A", 1, 9)]
    assert s.debt == (9,)  # net +1 -1 +9
    s, obs = run(model, s, ("wait", "A"))
    assert obs == [Observation("suspend", "A", 0, 9, "A")] and s.readers[0].phase == WAITING
    for i, expected in zip(range(1, 5), (8, 7, 6, 5), strict=True):
        s, obs = run(model, s, ("turn", f"O{i}"), ("repay", f"O{i}"))
        assert s.debt == (expected,)
    assert obs[-1] == Observation("wake", "A", 0, 5, "A")  # woken at the threshold
    assert s.readers[0].phase == READY
    assert s.readers[0].phase == READY and s.debt == (5,)
    s, obs = run(model, s, ("read", "A"))  # 5 <= 5: reads again
    assert s.debt == (6,)


def test_initial_state_loans_and_step_kinds():
    """AC-LIMIT, AC-INIT, AC-STEP, AC-LOAN, AC-TURN: the default limit is 100; the initial
    state owes nothing; a queued turn is a loan (account, cost, hop); a turn holds its loan
    until the separate repay step."""
    g = nx.DiGraph()
    g.add_node("A", reads=2, batch=3)
    g.add_edge("A", "D", events=2)
    g.add_edge("D", "O")
    model = AccountsModel(actor_graph_from_networkx(g))
    assert model.limit == 100
    s = model.initial()
    assert s.debt == (0,) and s.permit == (False,) and s.waiters == ((),)
    assert all(a.alive and not a.mailbox and a.held.account < 0 for a in s.actors)
    assert [model.decode(a).kind for a in model.enabled(s)] == ["read"]
    s, _ = run(model, s, ("read", "A"))
    assert s.actors[1].mailbox == (Loan(0, 6, 1),) and s.debt == (6,)
    s, obs = run(model, s, ("turn", "D"))
    assert s.actors[1].held == Loan(0, 6, 1) and s.actors[2].mailbox == (Loan(0, 6, 2),)
    assert obs == [Observation("borrow", "A", 6, 12)]
    assert {model.decode(a).kind for a in model.enabled(s)} == {"read", "repay", "turn"}


# -- explored properties --------------------------------------------------------------------


def test_seed_graph_properties_and_tight_bound():
    """AC-DEBT-SUM, AC-QUIESCENCE, AC-WAIT-OVER-LIMIT, AC-SUSPEND-IFF, AC-CHARGE,
    AC-BORROW-BEFORE-REPAY, AC-NO-DEADLOCK hold on A -> D -> O1..O3; AC-OVERSHOOT holds
    and is tight: the largest debt reached is n*(limit+1)+1."""
    g = seed_example(fanout=3, limit=2, reads=4)
    system, result = explored(g)
    assert result.findings == {}
    (bound,) = system.properties.bounds
    assert bound.bound == 3 * (2 + 1) + 1
    assert max_debts(result, 1) == [bound.bound]


def test_naive_bound_is_refuted_by_a_lagging_dataspace():
    """AC-OVERSHOOT-NAIVE: limit + one read x transitive fan-out fails once D lags;
    shortest counterexample: A reads twice while D is busy, then D fans both out."""
    system, result = explored(seed_example(fanout=3, limit=2, reads=4), naive_bound=True)
    finding = result.findings[OVERSHOOT_NAIVE]
    assert finding.length == 5 and set(result.findings) == {OVERSHOOT_NAIVE}
    steps = [system.describe(a) for a, _ in finding.path[1:]]
    assert steps == ["read(A)", "read(A)", "turn(D)", "repay(D)", "turn(D)"]
    assert [s[0].debt[0] for _, s in finding.path] == [0, 1, 2, 5, 4, 7]
    assert "debt 7 > naive bound 6" in system.explain(finding.path[-1][1], OVERSHOOT_NAIVE)


@pytest.mark.parametrize("fanout,limit", [(1, 0), (3, 2), (2, 4)])
def test_bound_is_tight_for_reader_to_sinks(fanout, limit):
    """AC-OVERSHOOT: for reader -> sinks (depth 1) the bound is limit + fan-out and the
    naive bound coincides with it; both are reached."""
    g = graph("star", [("A", f"O{i}") for i in range(fanout)], limit=limit, A={"reads": limit + 3})
    system, result = explored(g, naive_bound=True)
    assert result.findings == {}
    (bound,) = system.properties.bounds
    assert bound.bound == bound.naive == limit + fanout
    assert max_debts(result, 1) == [bound.bound]


def test_crashes_repay_queued_work():
    """AC-CRASH, AC-DEAD-SEND, AC-QUIESCENCE: actors that die with queued work repay it;
    later sends to them borrow and repay at once; quiescent states have no debt."""
    g = graph(
        "crash",
        [("A", "D"), ("D", "O")],
        limit=1,
        A={"reads": 3},
        D={"may_crash": True},
        O={"may_crash": True},
    )
    system, result = explored(g)
    assert result.findings == {}
    model = system.model
    s, _ = run(model, model.initial(), ("read", "A"), ("read", "A"), ("turn", "D"))
    s, obs = run(model, s, ("crash", "D"))
    assert [(o.kind, o.debt) for o in obs] == [("repay", 2), ("repay", 1), ("notify", 1)]
    assert s.debt == (1,)  # the event D sent to O is still live
    s, obs = run(model, s, ("read", "A"))
    assert [o.kind for o in obs] == ["borrow", "repay"] and s.debt == (1,)
    dead = [st for st in result.graph.states if not st[0].actors[1].alive]
    assert any(model.quiescent(st[0]) for st in dead)
    assert all(st[0].debt == (0,) for st in dead if model.quiescent(st[0]))


def test_timer_charges_its_creating_account():
    """AC-TIMER, AC-CHARGE: T's timer is armed by its first turn, under the account of
    whoever sent that turn, and each firing is charged there; the bound includes it."""
    g = graph(
        "timer",
        [("A", "T"), ("B", "T"), ("T", "O")],
        limit=1,
        A={"reads": 1},
        B={"reads": 1},
        T={"timer": 2},
    )
    system, result = explored(g)
    assert result.findings == {}
    model = system.model
    s, _ = run(model, model.initial(), ("read", "B"), ("turn", "T"), ("repay", "T"))
    assert s.actors[model.actor_index["T"]].timer_account == model.account_names.index("B")
    s, obs = run(model, s, ("fire", "T"))
    assert obs == [Observation("borrow", "B", 1, 2)]
    bounds = {b.account: b for b in system.properties.bounds}
    assert bounds["A"].timer_potential == 2
    # sound, not tight with timers: only one of A and B can arm T
    assert max_debts(result, 2) == [3, 3] and bounds["A"].bound == bounds["B"].bound == 5


def test_cycles_need_max_hops_and_then_terminate():
    """AC-GRAPH, AC-HOPS: a cycle is rejected without max_hops; with it, request/reply
    A <-> B has no deadlock and ends with no debt."""
    g = nx.DiGraph(name="rpc")
    g.add_node("A", reads=3)
    g.add_edges_from([("A", "B"), ("B", "A")])
    with pytest.raises(ActorGraphError, match="max_hops"):
        actor_graph_from_networkx(g)
    g.graph["max_hops"] = 2
    system, result = explored(actor_graph_from_networkx(g))
    assert result.findings == {}
    terminal = [s for i, s in enumerate(result.graph.states) if result.graph.is_terminal(i)]
    assert terminal and all(s[0].debt == (0,) for s in terminal)


def test_shared_account_strands_a_waiter():
    """AC-NOTIFY, AC-WAIT-OVER-LIMIT: two readers on one account; one repay wakes one of
    them and the other sleeps with the account clear."""
    g = graph(
        "shared",
        [("A", "Z"), ("B", "Z")],
        limit=1,
        A={"reads": 2, "account": "acc"},
        B={"reads": 2, "account": "acc"},
    )
    system, result = explored(g)
    finding = result.findings[WAIT_OVER_LIMIT]
    assert finding.length == 6
    assert "waits with debt 1 <= limit 1" in system.explain(finding.path[-1][1], WAIT_OVER_LIMIT)


def test_slow_consumer_throttles_every_producer_only():
    """AC-NO-DEADLOCK, CMP-SLOW-CONSUMER: one stalled consumer S leaves both producers
    waiting forever; D and the fast consumer F never wait, F gets every event read."""
    g = graph(
        "slow",
        [("P1", "D"), ("P2", "D"), ("D", "F"), ("D", "S")],
        limit=1,
        P1={"reads": 4},
        P2={"reads": 4},
        S={"stalled": True},
    )
    system, result = explored(g)
    assert result.deadlock is not None and result.deadlock.kind == "blocked-forever"
    model = system.model
    terminal = [s[0] for i, s in enumerate(result.graph.states) if result.graph.is_terminal(i)]
    assert terminal
    for s in terminal:
        assert {model.actor_names[x] for x in range(5) if model.blocked_mask(s) >> x & 1} == {
            "P1",
            "P2",
        }
        assert not s.actors[model.actor_index["F"]].mailbox
        at_s = [0, 0]
        for loan in s.actors[model.actor_index["S"]].mailbox:
            at_s[loan.account] += loan.cost
        assert list(s.debt) == at_s and all(d > model.limit for d in s.debt)


def test_graph_errors_name_the_problem():
    """AC-GRAPH: bad graphs are rejected with one line naming the actor or attribute."""
    g = nx.DiGraph()
    g.add_node("A", reads=1, bacth=2)
    with pytest.raises(ActorGraphError, match="actor 'A': unknown attribute 'bacth'"):
        actor_graph_from_networkx(g)
    g = nx.DiGraph()
    g.add_node("A")
    with pytest.raises(ActorGraphError, match="no reader"):
        actor_graph_from_networkx(g)
    g = nx.DiGraph(limit=-1)
    g.add_node("A", reads=1)
    with pytest.raises(ActorGraphError, match="limit must be >= 0"):
        actor_graph_from_networkx(g)


# -- random graphs ----------------------------------------------------------------------


# derandomized: a fresh random draw (CI has no example database) once produced a graph of
# more than 200,000 states, which the exploration budget of `explored` refuses
@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(g=actor_graphs(max_actors=4, max_reads=3, max_limit=2))
def test_random_graphs_satisfy_every_property(g):
    """AC-DEBT-SUM, AC-QUIESCENCE, AC-WAIT-OVER-LIMIT, AC-OVERSHOOT, AC-SUSPEND-IFF,
    AC-BORROW-BEFORE-REPAY, AC-CHARGE and AC-NO-DEADLOCK on random acyclic actor graphs
    with crashes and timers (no stalled actor, one reader per account)."""
    system, result = explored(g)
    assert result.findings == {}, {k: v.detail for k, v in result.findings.items()}
    bounds = [b.bound for b in system.properties.bounds]
    assert all(m <= b for m, b in zip(max_debts(result, len(bounds)), bounds, strict=True))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=actor_graphs(max_actors=4, max_reads=2, max_limit=2))
def test_symmetry_reduction_preserves_verdicts(g):
    """EXP-SYMMETRY for actor graphs: the same verdicts and largest debts with and without
    merging interchangeable actors."""
    plain_system, plain = explored(g, symmetry=False)
    _, reduced = explored(g)
    assert reduced.n_states <= plain.n_states
    assert set(reduced.findings) == set(plain.findings)
    n = len(plain_system.model.account_names)
    assert max_debts(reduced, n) == max_debts(plain, n)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=actor_graphs(max_actors=4, max_reads=2, max_limit=2))
def test_twins_leave_the_symmetric_search_unchanged(g):
    """EXP-SYMMETRY-TWINS: leaving out the actions of later twins explores the same
    canonical states, with the same verdicts, shortest counterexamples and debts, as
    the symmetric search that expands every actor."""
    every_actor, full = explored(g)
    twins = CheckedAccounts(g, symmetry=True)
    reduced = explore(twins, symmetry=twins.symmetry, max_states=200_000)
    assert reduced.complete
    assert set(reduced.graph.states) == set(full.graph.states)
    assert {k: f.length for k, f in reduced.findings.items()} == {
        k: f.length for k, f in full.findings.items()
    }
    n = len(every_actor.model.account_names)
    assert max_debts(reduced, n) == max_debts(full, n)


def test_a_wide_star_expands_its_distinct_sinks_only():
    """EXP-SYMMETRY-TWINS, IN-WORK: after the reader's send to 2,000 interchangeable
    sinks, one state's successors are the reader's own step and one sink's turn, not
    2,001 (the 2,000-sink star did not finish --max-states 1000 within 60 s)."""
    g = nx.DiGraph(limit=2)
    g.add_node("hub", reads=4)
    for i in range(2_000):
        g.add_edge("hub", f"s{i}")
    system = CheckedAccounts(actor_graph_from_networkx(g), symmetry=True)
    state = system.initial()
    (read,) = [a for a, _ in system.successors(state)]
    state = dict(system.successors(state))[read]
    kinds = sorted(system.model.decode(a).kind for a, _ in system.successors(state))
    assert len(kinds) <= 3, kinds
    plain = CheckedAccounts(actor_graph_from_networkx(g))
    assert len(plain.successors(state)) > 2_000
    result = explore(system, symmetry=system.symmetry, max_states=300)
    assert result.n_states == 301


# -- mutants: each property can fail ---------------------------------------------------


class ForgetsToNotify(AccountsModel):
    def _repay(self, b, account, amount):
        b.debt[account] -= amount
        b.obs.append(Observation("repay", self.account_names[account], amount, b.debt[account]))


class CrashLeaksLoans(AccountsModel):
    def crash(self, state, x):
        outcome = super().crash(state, x)
        lost = sum(loan.cost for loan in state.actors[x].mailbox)
        debt = list(outcome.state.debt)
        if lost and state.actors[x].mailbox:
            debt[state.actors[x].mailbox[0].account] += lost
        return type(outcome)(outcome.state._replace(debt=tuple(debt)), outcome.observations)


class RepaysOnDequeue(AccountsModel):
    def turn(self, state, x):
        loan = state.actors[x].mailbox[0]
        from creditflow.model.accounts.rules import StateBuilder

        b = StateBuilder(state)
        self._repay(b, loan.account, loan.cost)
        actor = b.actors[x]
        b.actors[x] = actor._replace(mailbox=actor.mailbox[1:])
        self._send(b, x, loan)
        return b.outcome()


class ReadsOnePastTheLimit(AccountsModel):
    def enabled(self, state):
        for action in super().enabled(state):
            kind, r = action >> 20, action & 0xFFFFF
            if kind == 1 and state.debt[self.reader_account[r]] == self.limit + 1:
                yield r
            else:
                yield action


class ChargesTheSender(AccountsModel):
    def _send(self, b, sender, loan):
        r = self.reader_of_actor.get(sender)
        own = self.reader_account[r] if r is not None else 0
        super()._send(b, sender, Loan(own, loan.cost, loan.hop))


MUTANT_GRAPH = {
    "edges": [("A", "D"), ("B", "D"), ("D", "O1"), ("D", "O2")],
    "nodes": {"A": {"reads": 2}, "B": {"reads": 2}, "D": {"may_crash": True}},
}


STAR = {"edges": [("A", "O")], "nodes": {"A": {"reads": 4}}}


@pytest.mark.parametrize(
    "mutant,shape,caught",
    [
        (ForgetsToNotify, MUTANT_GRAPH, {NO_DEADLOCK}),
        (CrashLeaksLoans, MUTANT_GRAPH, {DEBT_SUM, QUIESCENCE}),
        (RepaysOnDequeue, MUTANT_GRAPH, {BORROW_BEFORE_REPAY}),
        (ReadsOnePastTheLimit, STAR, {SUSPEND_IFF, OVERSHOOT}),
        (ChargesTheSender, MUTANT_GRAPH, {CHARGE}),
    ],
)
def test_each_property_catches_a_broken_model(mutant, shape, caught):
    """AC-DEBT-SUM, AC-QUIESCENCE, AC-SUSPEND-IFF, AC-BORROW-BEFORE-REPAY, AC-CHARGE,
    AC-OVERSHOOT and PROP-NO-DEADLOCK each reject a model broken in their way."""
    g = graph("mutant", shape["edges"], limit=1, **shape["nodes"])
    _, result = explored(g, model=mutant(g))
    assert caught <= set(result.findings), set(result.findings)


def test_overshoot_bound_components():
    """AC-OVERSHOOT: the bound's parts for the seed graph: P* = n, one read adds n, D
    holds at most 1."""
    (b,) = overshoot_bounds(AccountsModel(seed_example(fanout=9, limit=5)))
    assert (b.peak_potential, b.read_potential, b.held, b.bound) == (9, 9, 1, 55)
    assert (b.transitive_fanout, b.naive) == (10, 15)


@pytest.mark.parametrize("fanout,limit", [(9, 5), (5, 10), (2, 0), (30, 100)])
def test_seed_bound_is_reached_by_a_lagging_dataspace(fanout, limit):
    """AC-OVERSHOOT is tight on A -> D -> O1..On for any n and limit: A reads limit+1
    packets while D is busy, then D handles them all while the O's are busy; at the last
    commit the debt is n*(limit+1)+1, the bound (the default limit 100 included)."""
    model = AccountsModel(seed_example(fanout=fanout, limit=limit, reads=limit + 2))
    (bound,) = overshoot_bounds(model)
    s, _ = run(model, model.initial(), *[("read", "A")] * (limit + 1))
    s, _ = run(model, s, *[("turn", "D"), ("repay", "D")] * limit, ("turn", "D"))
    assert s.debt == (fanout * (limit + 1) + 1,) == (bound.bound,)
    assert [model.decode(a).kind for a in model.enabled(s) if model.decode(a).actor == "A"] == [
        "wait"
    ]
