"""PROP-PG-*: each property fails on a state or report broken in its own way, holds on
every preset scenario, and the explorer checks all of them in every reachable state of
bounded scenarios (PG-EXPLORE) — and finds a shortest counterexample when 3.5.5's
behaviour is held to 3.10.8's cap (CF10)."""

from __future__ import annotations

import pytest

from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.inputs.itf import trace_document
from creditflow.conformance.inputs.paging_scenarios import load_scenario, preset_names, run_scenario
from creditflow.conformance.traces.network import run_states
from creditflow.model.paging import operations as paging
from creditflow.model.paging.profile import PROFILE_3_5_5, PROFILE_3_10_8
from creditflow.model.paging.properties import ALL_PROPERTIES, check, violations
from creditflow.model.paging.state import (
    TRANSIENT_STORE,
    Config,
    PassReport,
    Rates,
    Report,
    initial_state,
)
from creditflow.model.paging.system import SMALL_BOUNDS, Explored, PagingSystem

TIGHT = PROFILE_3_10_8.with_settings(store_credit=(10, 5), io_batch_size=8, segment_entries=16)


@pytest.fixture(scope="module")
def paged():
    """A queue with every part in use: delta, q3, q1, pending acks of all three kinds,
    writes and a grant in flight."""
    cfg = Config(TIGHT, durable=True)
    st = initial_state()
    for i in range(40):
        st = paging.publish(cfg, st, 5000 if i % 3 else 100, persistent=i % 4 == 0).state
    for _ in range(4):
        st = paging.fetch(cfg, st).state
    st = paging.settle(cfg, paging.set_ram_duration_target(cfg, st, 0).state).state
    st = paging.set_ram_duration_target(cfg, st, None).state
    for _ in range(3):
        st = paging.publish(cfg, st, 5000).state
    st = paging.set_ram_duration_target(cfg, st, 0).state
    assert st.q1 or st.q2
    assert st.delta and st.q3 and st.dpa and st.qpa
    assert not check(cfg.profile, st), check(cfg.profile, st)
    return cfg, st


def _pass(**kw) -> PassReport:
    base = dict(
        target=0,
        a2b_chunk=5,
        quota=5,
        first="alphas",
        alphas_moved=5,
        acks_moved=0,
        alpha_moves_while_blocked=0,
        b2d_chunk=0,
        b2d_moved=0,
        q3_pushed_below_boundary=0,
        need_more=False,
        blocked_after=False,
        rescheduled=False,
        waiting_after=False,
    )
    base.update(kw)
    return PassReport(**base)


def test_properties_hold_on_a_busy_queue(paged):
    cfg, st = paged
    assert violations(cfg.profile, st) == ()


def test_each_state_property_detects_its_corruption(paged):
    """PROP-PG-CONSERVED, PROP-PG-ORDER, PROP-PG-SHAPE, PROP-PG-COUNTERS, PROP-PG-DELTA,
    PROP-PG-MSG, PROP-PG-KINDS, PROP-PG-CREDIT, PROP-PG-CONTINUATION."""
    cfg, st = paged
    p = cfg.profile
    m0 = st.q3[0]
    broken = {
        "PROP-PG-CONSERVED": st._replace(removed=st.removed + 1),
        "PROP-PG-ORDER": st._replace(q3=st.q3[1:2] + st.q3[:1] + st.q3[2:]),
        "PROP-PG-SHAPE": st._replace(
            q1=st.q3, q2=(), q3=(), delta=(), delta_start=None, delta_end=None
        ),
        "PROP-PG-COUNTERS": st._replace(ram_msg_count=st.ram_msg_count + 1),
        "PROP-PG-DELTA": st._replace(delta_start=st.delta[0].seq + 1),
        "PROP-PG-MSG": st._replace(
            q3=(m0._replace(persistent=True, index_on_disk=False),) + st.q3[1:]
        ),
        "PROP-PG-KINDS": st._replace(dpa=(st.dpa[0]._replace(in_ram=True),) + st.dpa[1:]),
        "PROP-PG-CREDIT": st._replace(
            stores=tuple(s._replace(pending=s.pending + 1) for s in st.stores)
        ),
        "PROP-PG-CONTINUATION": st._replace(self_bumps=1, waiting_bump=False),
    }
    for pid, bad in broken.items():
        assert pid in violations(p, bad), (pid, check(p, bad))


def test_each_transition_property_detects_its_report(paged):
    """PROP-PG-FIFO, PROP-PG-PLACEMENT, PROP-PG-QUOTA, PROP-PG-NO-A2B-WHILE-BLOCKED,
    PROP-PG-B2D, PROP-PG-EMBEDDED, PROP-PG-TARGET, PROP-PG-CONTINUATION."""
    cfg, st = paged
    p = cfg.profile
    reports = {
        "PROP-PG-FIFO": Report("fetch", fetched=7, head_before=3),
        "PROP-PG-PLACEMENT": Report("publish", placed="q1", q3_was_empty=True),
        "PROP-PG-QUOTA": Report("target", passes=(_pass(a2b_chunk=50, quota=50, alphas_moved=50),)),
        "PROP-PG-NO-A2B-WHILE-BLOCKED": Report(
            "bump", passes=(_pass(alpha_moves_while_blocked=1),)
        ),
        "PROP-PG-B2D": Report("bump", passes=(_pass(q3_pushed_below_boundary=1),)),
        "PROP-PG-EMBEDDED": Report("publish", writes=((3, True),), placed="q1", q3_was_empty=False),
        "PROP-PG-TARGET": Report("target", old_target=None, reduced=False),
        "PROP-PG-CONTINUATION": Report("bump", passes=(_pass(need_more=True),)),
    }
    st0 = st._replace(target=0)
    for pid, report in reports.items():
        assert pid in violations(p, st0, [report]), (pid, check(p, st0, [report]))
    # a b2d batch below io_batch_size also breaks the quota rule
    small = Report("target", passes=(_pass(b2d_chunk=3, b2d_moved=3),))
    assert "PROP-PG-QUOTA" in violations(p, st0, [small])


@pytest.mark.parametrize("name", preset_names())
def test_presets_satisfy_every_property(name):
    scenario = load_scenario(name)
    run = run_scenario(scenario)
    for res in run.results:
        for st in (res.after, res.settled):
            assert check(scenario.profile, st, res.reports) == {}, (res.index, res.step)


def test_explorer_small_bounds_holds_everywhere():
    """PG-EXPLORE: two publishes of two kinds, get/ack/requeue, targets 0 and infinity,
    two rate vectors (acks first / messages first), msg_store credit {2,1}, index
    segments of one entry (so that two messages can reach delta): every
    property holds in every one of the reachable states, and no deadlock."""
    profile = SMALL_BOUNDS.profile.with_settings(segment_entries=1)
    system = PagingSystem(SMALL_BOUNDS._replace(publishes=2, profile=profile))
    result = explore(system)
    assert result.complete and result.n_states > 10_000
    assert result.holds == {pid: True for pid in (*ALL_PROPERTIES, "PROP-NO-DEADLOCK")}
    # the exploration really pages: some state has a blocked queue and a delta
    assert any(s.queue.blocked() for s in result.graph.states)
    assert any(s.queue.delta for s in result.graph.states)


def test_explorer_three_publishes_cap_and_continuation():
    """PG-EXPLORE, PG-CONTINUE: three publishes with credit {1,1} (a cap of 2 per pass):
    passes reschedule themselves, writes queue up at the msg_store, all properties hold."""
    profile = SMALL_BOUNDS.profile.with_settings(store_credit=(1, 1))
    system = PagingSystem(SMALL_BOUNDS._replace(requeue=False, rates=(Rates(),), profile=profile))
    result = explore(system)
    assert result.complete and not result.findings
    assert any(s.queue.self_bumps for s in result.graph.states)
    assert max(s.queue.stores[TRANSIENT_STORE].pending for s in result.graph.states) >= 2


def test_355_checked_against_310_cap_gives_a_shortest_counterexample(tmp_path):
    """PROP-PG-QUOTA, PG-CAP (CF10): 3.5.5 moves a whole chunk of embedded messages in
    one pass; held to 3.10.8's 2 x I cap, the explorer's shortest counterexample is five
    publishes and one target 0. Its trace renders as ITF."""
    old = PROFILE_3_5_5.with_settings(store_credit=(2, 1), segment_entries=2, io_batch_size=1)
    bounds = SMALL_BOUNDS._replace(
        profile=old, publishes=5, requeue=False, rates=(Rates(),), kinds=((100, False),)
    )
    own = explore(PagingSystem(bounds))
    assert own.complete and not own.findings
    system = PagingSystem(bounds, rules=SMALL_BOUNDS.profile)
    result = explore(system)
    finding = result.findings["PROP-PG-QUOTA"]
    steps = [system.describe(a) for a, _ in finding.path[1:]]
    assert steps == ["publish(100 B, transient)"] * 5 + ["target(0)"]
    assert "quota 5" in finding.detail
    states = run_states(system, finding.path)
    doc = trace_document(list(states[0]), states, {"property": finding.property_id})
    last = doc["states"][-1]
    assert last["q4"] == {"#tup": []}
    assert last["q3"] == {"#tup": [{"#bigint": "0"}, {"#bigint": "1"}]}
    assert last["delta"] == {"#tup": [{"#bigint": str(i)} for i in (2, 3, 4)]}


def test_system_interface():
    """PG-EXPLORE: describe, render and action records of the explored system."""
    system = PagingSystem(SMALL_BOUNDS)
    first = system.initial()
    assert first == Explored(initial_state())
    names = sorted(system.describe(a) for a, _ in system.successors(first))
    assert names == [
        "publish(100 B, persistent)",
        "publish(5000 B, transient)",
        "rates(0,1,1,0)",
        "target(0)",
        "target(infinity)",
    ]
    assert system.render(first)["target"] is None
    assert system.action_record(system.enabled(first.queue)[0])[0] == "publish"
    assert system.blocked_mask(first) == 0 and not system.pending_work(first)
