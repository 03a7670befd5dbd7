"""The paging model, rule by rule, against values worked out by hand from RabbitMQ 3.10.8's
``rabbit_variable_queue`` (and confirmed on a real broker where noted)."""

from __future__ import annotations

import pytest

from creditflow.model.credit.spec import CreditSpec
from creditflow.model.paging import operations as paging
from creditflow.model.paging.profile import (
    PROFILE_3_5_5,
    PROFILE_3_10_8,
    next_segment_boundary,
    persists_to_store,
    profile_named,
)
from creditflow.model.paging.properties import check
from creditflow.model.paging.state import (
    PERSISTENT_STORE,
    TRANSIENT_STORE,
    Config,
    Msg,
    PagingState,
    Rates,
    Work,
    initial_state,
)

#: credit {10,5}, segments of 16, io batch 8: the settings of the broker scenarios
TIGHT = PROFILE_3_10_8.with_settings(store_credit=(10, 5), io_batch_size=8, segment_entries=16)
LARGE, SMALL = 5000, 100


def publish_n(cfg: Config, st: PagingState, n: int, size: int, persistent: bool = False):
    for _ in range(n):
        st = paging.publish(cfg, st, size, persistent).state
        assert not check(cfg.profile, st), check(cfg.profile, st)
    return st


def seqs(msgs) -> list[int]:
    return [m.seq for m in msgs]


def test_profiles_and_settings():
    """PG-PROFILE: the two versions differ as the reference says; settings override by
    name; unknown settings and versions are rejected."""
    assert profile_named("3.10.8") is PROFILE_3_10_8
    assert (PROFILE_3_10_8.cap, PROFILE_3_10_8.io_batch_size, PROFILE_3_10_8.segment_entries) == (
        8000,
        4096,
        2048,
    )
    assert PROFILE_3_5_5.store_credit == CreditSpec(2000, 500)
    assert not PROFILE_3_5_5.chunk_cap and not PROFILE_3_5_5.self_bump
    assert PROFILE_3_5_5.gc_threshold is None and PROFILE_3_5_5.read_batch is None
    assert TIGHT.store_credit == CreditSpec(10, 5) and TIGHT.cap == 20
    with pytest.raises(ValueError, match="unknown paging setting"):
        PROFILE_3_10_8.with_settings(bogus=1)
    with pytest.raises(ValueError, match="unknown paging profile"):
        profile_named("2.8.7")


def test_persist_to_boundary():
    """PG-PERSIST-TO: msg_store iff the body, or body + properties, reaches the limit."""
    p = PROFILE_3_10_8
    assert not persists_to_store(p, 4092, 3)
    assert persists_to_store(p, 4093, 3)
    assert persists_to_store(p, 4096, 0)
    assert not persists_to_store(p, 4095, 0)


def test_segments_chunk_and_permitted_betas():
    """PG-SEGMENT, PG-CHUNK, PG-PERMITTED-BETAS."""
    from creditflow.model.paging.phases import chunk_size, permitted_beta_count

    assert next_segment_boundary(TIGHT, 0) == 16
    assert next_segment_boundary(TIGHT, 15) == 16 and next_segment_boundary(TIGHT, 16) == 32
    assert chunk_size(10, None) == 0 and chunk_size(10, 10) == 0 and chunk_size(10, 4) == 6
    cfg = Config(TIGHT)
    w = Work(cfg, initial_state(), "x")
    assert permitted_beta_count(w) is None  # empty queue: infinity
    st = publish_n(cfg, initial_state(), 40, LARGE)
    w = Work(cfg, st._replace(target=0), "x")
    assert permitted_beta_count(w) == 0  # target 0: min(|q3| = 0, segment)
    w = Work(cfg, st._replace(target=5, q3=st.q4[:30], q4=st.q4[30:]), "x")
    # bd = len - |q1| - |q4| = 30; max(16, 30 - 900 // 35) = max(16, 5) = 16
    assert permitted_beta_count(w) == 16
    w = Work(cfg, st._replace(target=100, q3=st.q4[:30], q4=st.q4[30:]), "x")
    assert permitted_beta_count(w) == max(16, 30 - 900 // 130)


def test_publish_placement_and_persistence():
    """PG-PUBLISH, PG-STORES, PG-WRITE-MSG, PG-WRITE-INDEX, PG-CREDIT, PG-INIT, PG-MSG,
    PG-STATE, PG-STEP: q4 while q3 is empty, else q1; a persistent large message is written
    at once (spending credit toward msg_store_persistent); a transient one is not."""
    cfg = Config(TIGHT, durable=True)
    st = initial_state()
    assert st.target is None and st.len == 0 and not st.blocked()
    step = paging.publish(cfg, st, LARGE, persistent=True)
    m = step.state.q4[0]
    assert (m.persistent, m.on_store, m.index_on_disk, m.in_ram, m.embedded) == (
        True,
        True,
        True,
        True,
        False,
    )
    assert step.report.writes == ((0, False),) and step.report.placed == "q4"
    assert step.state.store_credit(PERSISTENT_STORE) == 9
    assert step.state.stores[PERSISTENT_STORE].pending == 1
    assert step.state.disk_writes == 1 and step.state.persistent_count == 1
    st = paging.publish(cfg, step.state, LARGE, persistent=False).state
    assert not st.q4[1].on_store and st.store_credit(TRANSIENT_STORE) is None
    # a non-durable queue makes every message transient
    st = paging.publish(Config(TIGHT, durable=False), initial_state(), SMALL, True).state
    assert not st.q4[0].persistent and st.persistent_count == 0
    # with q3 non-empty, publishes go to q1
    st = st._replace(q3=st.q4, q4=())
    step = paging.publish(Config(TIGHT), st, SMALL)
    assert step.report.placed == "q1" and seqs(step.state.q1) == [1]


def test_one_pass_stops_when_blocked_then_settles():
    """PG-REDUCE, PG-A2B, PG-A2B-BLOCKED, PG-TRIM, PG-SETTLE, PG-STORE-TAKE,
    PG-STORE-PROCESS, PG-BUMP, PG-RESUME, PG-B2D, PG-B2D-BATCH: 40 large transient
    messages, target 0, credit {10,5}: the pass moves 10 from q4's tail and stops blocked;
    settling gives q3 = 0..20, delta = [21, 40) (as the real broker shows)."""
    cfg = Config(TIGHT, durable=False)
    st = publish_n(cfg, initial_state(), 40, LARGE)
    step = paging.set_ram_duration_target(cfg, st, 0)
    st = step.state
    (p,) = step.report.passes
    assert (p.a2b_chunk, p.quota, p.first, p.alphas_moved, p.b2d_moved) == (40, 20, "alphas", 10, 0)
    assert seqs(st.q3) == list(range(30, 40)) and len(st.q4) == 30
    assert st.blocked() and st.store_credit(TRANSIENT_STORE) == 0
    assert st.stores[TRANSIENT_STORE].pending == 10 and not st.waiting_bump
    assert st.ram_msg_count == 30 and all(not m.in_ram and m.on_store for m in st.q3)
    # the msg_store processes 5 writes: one grant of 5 in flight to the queue
    st = paging.store_take(cfg, st, TRANSIENT_STORE, 5).state
    assert st.stores[TRANSIENT_STORE].bumps == (5,)
    step = paging.handle_bump_credit(cfg, st, TRANSIENT_STORE)
    assert step.report.passes[0].alphas_moved == 5 and step.state.blocked()
    settled = paging.settle(cfg, step.state).state
    assert seqs(settled.q3) == list(range(21))
    assert (settled.delta_start, len(settled.delta), settled.delta_end) == (21, 19, 40)
    assert settled.store_credit(TRANSIENT_STORE) == 10 and not settled.has_paging_work()
    assert not check(cfg.profile, settled)


def test_limit_ram_acks_ignores_the_block():
    """PG-ACKS, PG-ORDER-CHOICE, PG-PENDING-ACK: with pending acks growing faster, acks
    go first, largest seq id first, and drive msg_store credit below zero; alphas then
    stay put because the queue is blocked."""
    cfg = Config(TIGHT, durable=False)
    st = publish_n(cfg, initial_state(), 30, LARGE)
    for _ in range(12):
        st = paging.fetch(cfg, st).state
    assert seqs(st.rpa) == list(range(12))
    st = paging.set_rates(cfg, st, Rates(1.0, 0.0, 5.0, 0.0)).state
    step = paging.set_ram_duration_target(cfg, st, 0)
    (p,) = step.report.passes
    assert (p.first, p.acks_moved, p.alphas_moved) == ("acks", 12, 0)
    assert [s for s, _ in step.report.writes] == list(range(11, -1, -1))
    assert step.state.store_credit(TRANSIENT_STORE) == -2 and step.state.blocked()
    assert seqs(step.state.dpa) == list(range(12)) and not step.state.rpa
    # messages first (the default rates): alphas until blocked, then every ack
    st2 = paging.set_rates(cfg, st, Rates(5.0, 0.0, 1.0, 0.0)).state
    (p,) = paging.set_ram_duration_target(cfg, st2, 0).report.passes
    assert (p.first, p.alphas_moved, p.acks_moved) == ("alphas", 10, 10)


def test_embedded_messages_cap_and_self_bump():
    """PG-CAP, PG-CONTINUE, PG-SELF-BUMP: embedded bodies spend no credit, so the pass
    runs into the 2 x I cap, reschedules itself once, and the continuation goes on; the
    bodies stay in RAM until they reach delta (as the broker shows)."""
    cfg = Config(TIGHT)
    st = publish_n(cfg, initial_state(), 50, SMALL)
    step = paging.set_ram_duration_target(cfg, st, 0)
    (p,) = step.report.passes
    assert (p.quota, p.alphas_moved, p.need_more, p.rescheduled) == (20, 20, True, True)
    st = step.state
    assert st.self_bumps == 1 and st.waiting_bump and st.ram_msg_count == 50
    assert not step.report.writes and st.store_credit(TRANSIENT_STORE) is None
    step = paging.handle_bump_reduce_memory_use(cfg, st)
    (p,) = step.report.passes
    assert p.alphas_moved == 20 and p.b2d_moved == 20 and p.rescheduled
    assert step.state.self_bumps == 1
    settled = paging.settle(cfg, step.state).state
    assert len(settled.q3) == 16 and len(settled.delta) == 34 and settled.ram_msg_count == 16
    assert not settled.waiting_bump and settled.self_bumps == 0


def test_b2d_keeps_q3_head_segment_and_needs_a_batch():
    """PG-B2D, PG-B2D-BATCH, PG-EXPAND-DELTA: q3 keeps the entries below the boundary
    after its head; below io_batch_size nothing moves."""
    cfg = Config(TIGHT.with_settings(store_credit=(100, 50)), durable=False)
    st = publish_n(cfg, initial_state(), 23, LARGE)
    st = paging.set_ram_duration_target(cfg, st, 0).state
    # 23 betas: permitted = min(23, 16) = 16, chunk 7 < 8: no b2d
    assert len(st.q3) == 23 and not st.delta
    st = publish_n(cfg, paging.set_ram_duration_target(cfg, st, None).state, 2, LARGE)
    step = paging.set_ram_duration_target(cfg, st, 0)
    (p,) = step.report.passes
    # 25 betas in q3: chunk 9 >= 8: q3's tail from seq 16 on goes to delta
    assert p.b2d_chunk == 9 and p.b2d_moved == 9
    assert seqs(step.state.q3) == list(range(16))
    assert (step.state.delta_start, step.state.delta_end) == (16, 25)


def test_gc_gate_every_1001st_call_and_355_every_call():
    """PG-GC-GATE: 3.10.8 reduces on the (threshold + 1)-th publish; 3.5.5 on every one."""
    cfg = Config(TIGHT.with_settings(gc_threshold=3), durable=False)
    st = paging.set_ram_duration_target(cfg, initial_state(), 0).state
    passes = []
    for _ in range(8):
        step = paging.publish(cfg, st, LARGE)
        st = step.state
        passes.append(len(step.report.passes))
    assert passes == [0, 0, 0, 1, 0, 0, 0, 1]
    cfg355 = Config(PROFILE_3_5_5, durable=False)
    st = paging.set_ram_duration_target(cfg355, initial_state(), 0).state
    assert all(len(paging.publish(cfg355, st, LARGE).report.passes) == 1 for _ in range(2))


def test_355_has_no_cap_and_no_continuation():
    """PG-PROFILE, PG-CAP: 3.5.5 moves the whole chunk in one pass and never reschedules."""
    cfg = Config(
        PROFILE_3_5_5.with_settings(store_credit=(10, 5), segment_entries=16, io_batch_size=8)
    )
    st = initial_state()
    for _ in range(50):
        st = paging.publish(cfg, st, SMALL).state
    step = paging.set_ram_duration_target(cfg, st, 0)
    p = step.report.passes[-1]
    assert (
        p.quota == 50
        and p.alphas_moved + sum(x.alphas_moved for x in step.report.passes[:-1]) >= 50 - 16
    )
    assert step.state.self_bumps == 0 and not step.state.waiting_bump


def test_target_from_duration_and_reduce_only_on_decrease():
    """PG-TARGET, PG-RATES: target = trunc(d x sum of rates); reduce iff it decreased."""
    cfg = Config(TIGHT)
    st = paging.set_rates(cfg, initial_state(), Rates(1.5, 0.5, 0.25, 0.25)).state
    step = paging.set_ram_duration_target(cfg, st, 3.9)
    assert step.state.target == 9 and step.report.reduced and step.report.old_target is None
    step = paging.set_ram_duration_target(cfg, step.state, 5.0)
    assert step.state.target == 12 and not step.report.reduced
    step = paging.set_ram_duration_target(cfg, step.state, 1.0)
    assert step.state.target == 2 and step.report.reduced
    step = paging.set_ram_duration_target(cfg, step.state, None)
    assert step.state.target is None and not step.report.reduced


def test_fetch_loads_delta_and_q1_becomes_q4():
    """PG-FETCH, PG-QUEUE-OUT, PG-D2B, PG-READ: fetching empties q3; the next segment of
    delta is read into q3; when q3 and delta are empty, q1 becomes q4."""
    cfg = Config(TIGHT, durable=False)
    st = publish_n(cfg, initial_state(), 40, LARGE)
    st = paging.settle(cfg, paging.set_ram_duration_target(cfg, st, 0).state).state
    st = paging.set_ram_duration_target(cfg, st, None).state
    st = publish_n(cfg, st, 3, LARGE)
    assert seqs(st.q1) == [40, 41, 42]
    for expected in range(21):
        step = paging.fetch(cfg, st)
        assert step.report.fetched == expected
        st = step.state
    # q3 emptied: delta [21, 40) loads up to the segment boundary 32
    assert seqs(st.q3) == list(range(21, 32)) and st.delta_start == 32
    assert st.disk_reads == 21 and seqs(st.dpa) == list(range(21))
    for _ in range(19):
        st = paging.fetch(cfg, st).state
    assert not st.delta and not st.q3 and seqs(st.q4) == [40, 41, 42] and not st.q1
    assert not check(cfg.profile, st)


def test_read_batch_limits_a_delta_load():
    """PG-D2B: 3.10.8 reads at most read_batch seq ids per load (3.5.5: a segment)."""
    prof = TIGHT.with_settings(segment_entries=64, read_batch=5, store_credit=(100, 50))
    cfg = Config(prof, durable=False)
    st = publish_n(cfg, initial_state(), 100, LARGE)
    st = paging.settle(cfg, paging.set_ram_duration_target(cfg, st, 0).state).state
    assert len(st.q3) == 64 and st.delta_start == 64
    for _ in range(64):
        st = paging.fetch(cfg, st).state
    assert seqs(st.q3) == list(range(64, 69)) and st.delta_start == 69
    cfg355 = Config(prof._replace(read_batch=None), durable=False)
    st = publish_n(cfg355, initial_state(), 100, LARGE)
    st = paging.settle(cfg355, paging.set_ram_duration_target(cfg355, st, 0).state).state
    for _ in range(64):
        st = paging.fetch(cfg355, st).state
    assert seqs(st.q3) == list(range(64, 100)) and not st.delta


def test_ack_and_requeue_placement():
    """PG-ACK, PG-REQUEUE, PG-PENDING-ACK: requeued messages merge back by seq id — into q4
    as alphas (body read back), into q3 as betas (body written), into delta."""
    cfg = Config(TIGHT.with_settings(store_credit=(100, 50)), durable=False)
    st = publish_n(cfg, initial_state(), 40, LARGE)
    for _ in range(3):
        st = paging.fetch(cfg, st).state  # 0, 1, 2 pending in RAM
    st = paging.settle(cfg, paging.set_ram_duration_target(cfg, st, 0).state).state
    assert seqs(st.dpa) == [0, 1, 2] and not st.rpa
    st = paging.set_ram_duration_target(cfg, st, None).state
    step = paging.requeue(cfg, st, [1])
    assert seqs(step.state.q4) == [1] and step.state.q4[0].in_ram
    assert step.state.disk_reads == st.disk_reads + 1
    st = paging.ack(cfg, step.state, [0, 99]).state  # 99 is unknown: ignored
    assert st.removed == 1 and seqs(st.dpa) == [2]
    # fetch everything in q4 and q3 (not delta), requeue one: it lands in delta's range?
    assert not check(cfg.profile, st)
    before = st
    st = paging.requeue(cfg, st, [2]).state
    assert [m.seq for m in st.ready()][:3] == [1, 2, 3]
    assert len(st.ready()) == len(before.ready()) + 1


def test_requeue_into_q3_writes_the_body_and_into_delta():
    """PG-REQUEUE, PG-WRITE-MSG, PG-EXPAND-DELTA: a seq id between q3's head and delta's
    start goes to q3 as a beta (its body written); one inside delta's range goes to delta."""
    cfg = Config(TIGHT.with_settings(store_credit=(100, 50)), durable=False)
    st = publish_n(cfg, initial_state(), 40, LARGE)
    base = st = paging.settle(cfg, paging.set_ram_duration_target(cfg, st, 0).state).state
    # q3 = 0..15 (head segment), delta = [16, 40)
    assert seqs(st.q3) == list(range(16)) and st.delta_start == 16
    synthetic = Msg(
        seq=5,
        size=LARGE,
        persistent=False,
        embedded=False,
        in_ram=True,
        on_store=False,
        index_on_disk=False,
    )
    st = st._replace(
        q3=tuple(m for m in st.q3 if m.seq != 5),
        rpa=(synthetic,),
        len=39,
        bytes=st.bytes - LARGE,
        unacked_bytes=LARGE,
        ram_bytes=LARGE,
    )
    step = paging.requeue(cfg, st, [5])
    m = next(x for x in step.state.q3 if x.seq == 5)
    assert m.on_store and not m.in_ram and step.report.writes == ((5, False),)
    assert not check(cfg.profile, step.state)
    inside = Msg(
        seq=20,
        size=LARGE,
        persistent=False,
        embedded=False,
        in_ram=False,
        on_store=True,
        index_on_disk=True,
    )
    st2 = base._replace(
        delta=tuple(x for x in base.delta if x.seq != 20),
        dpa=(inside,),
        len=39,
        bytes=base.bytes - LARGE,
        unacked_bytes=LARGE,
    )
    assert not check(cfg.profile, st2)
    step = paging.requeue(cfg, st2, [20])
    assert 20 in seqs(step.state.delta) and not check(cfg.profile, step.state)


def test_head_check_moves_an_embedded_beta_to_q4():
    """PG-HEAD-CHECK, PG-IN-R, PG-QUEUE-PROCESS: after basic.get, the expiry check takes
    the head out and puts it back: an embedded beta at q3's head comes back in q4 (what
    the broker shows), a msg_store beta goes back to q3."""
    cfg = Config(TIGHT)
    st = publish_n(cfg, initial_state(), 30, SMALL)
    st = paging.settle(cfg, paging.set_ram_duration_target(cfg, st, 0).state).state
    st = paging.set_ram_duration_target(cfg, st, None).state
    assert not st.q4 and st.q3[0].embedded
    done = paging.basic_get(cfg, st)
    assert done.delivered == (0,) and seqs(done.state.q4) == [1]
    assert [r.op for r in done.reports] == ["fetch", "head_check"]
    cfg_l = Config(TIGHT, durable=False)
    st = publish_n(cfg_l, initial_state(), 30, LARGE)
    st = paging.settle(cfg_l, paging.set_ram_duration_target(cfg_l, st, 0).state).state
    done = paging.basic_get(cfg_l, st)
    assert not done.state.q4 and seqs(done.state.q3)[0] == 1
    # basic_publish checks the head only when one message is left
    assert len(paging.basic_publish(cfg, initial_state(), SMALL).reports) == 2
    assert len(paging.basic_publish(cfg, st, SMALL).reports) == 1
    assert [r.op for r in paging.basic_reject(cfg, done.state, [0]).reports] == [
        "requeue",
        "head_check",
    ]


def test_settle_has_a_budget():
    """PG-SETTLE: a run that does not finish raises instead of looping."""
    cfg = Config(TIGHT, durable=False)
    st = publish_n(cfg, initial_state(), 40, LARGE)
    st = paging.set_ram_duration_target(cfg, st, 0).state
    with pytest.raises(paging.SettleError):
        paging.settle(cfg, st, max_steps=2)


def test_operations_on_nothing_change_nothing():
    """PG-STEP: fetch from an empty queue, a bump with none in flight, a self-bump with
    none outstanding: the state is unchanged."""
    cfg = Config(TIGHT)
    st = initial_state()
    assert paging.fetch(cfg, st).state == st and paging.fetch(cfg, st).report.fetched is None
    assert paging.handle_bump_credit(cfg, st, 0).state == st
    assert paging.handle_bump_reduce_memory_use(cfg, st).state == st
    assert paging.resume(cfg, st).state == st  # target infinity: no pass
    assert paging.store_take(cfg, st, 1, 5).state == st
