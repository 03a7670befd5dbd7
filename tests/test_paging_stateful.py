"""A Hypothesis stateful machine over the paging model: random publishes (small, large,
at the embedding boundary, persistent or not), basic.get with and without ack, acks,
requeues, RAM targets, rates, msg_store progress one write at a time, bump_credit and
bump_reduce_memory_use in any order — with every PROP-PG property checked after every
step, and an independent oracle (a sorted list of ready seq ids and a set of pending ones)
that every delivery must match (PROP-PG-FIFO, PROP-PG-CONSERVED)."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from creditflow.model.paging import operations as paging
from creditflow.model.paging.operations import Batch
from creditflow.model.paging.profile import PROFILE_3_5_5, PROFILE_3_10_8
from creditflow.model.paging.properties import check
from creditflow.model.paging.state import Config, Rates, Step, initial_state
from tests.stateful_machines import machine_test_case

SMALL_PROFILES = {
    "3.10.8": PROFILE_3_10_8.with_settings(
        store_credit=(2, 1), segment_entries=4, io_batch_size=2, gc_threshold=3, read_batch=3
    ),
    "3.5.5": PROFILE_3_5_5.with_settings(store_credit=(2, 1), segment_entries=4, io_batch_size=2),
}
SIZES = st.sampled_from([10, 100, 4092, 4093, 5000])
DURATIONS = st.sampled_from([0, 0.5, 2.0, 10.0, None])
RATES = st.builds(Rates, *(st.sampled_from([0.0, 0.5, 1.0, 3.0]) for _ in range(4)))


class PagingMachine(RuleBasedStateMachine):
    """PG-QUEUE-PROCESS operations in random order, checked after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.cfg = Config()
        self.state = initial_state()
        self.ready: list[int] = []
        self.pending: set[int] = set()
        self.reports: list = []

    @initialize(version=st.sampled_from(sorted(SMALL_PROFILES)), durable=st.booleans())
    def choose(self, version: str, durable: bool) -> None:
        self.cfg = Config(SMALL_PROFILES[version], durable)

    def _apply(self, done: Batch | Step) -> Batch | Step:
        self.state = done.state
        self.reports = list(done.reports) if isinstance(done, Batch) else [done.report]
        return done

    @rule(size=SIZES, persistent=st.booleans(), count=st.integers(1, 6))
    def publish(self, size: int, persistent: bool, count: int) -> None:
        for _ in range(count):
            seq = self.state.next_seq_id
            self._apply(paging.basic_publish(self.cfg, self.state, size, persistent))
            self.ready.append(seq)
            self.properties_hold()

    @rule(ack=st.booleans())
    def get(self, ack: bool) -> None:
        done = self._apply(paging.basic_get(self.cfg, self.state, ack))
        fetched = done.reports[0].fetched
        if not self.ready:
            assert fetched is None
            return
        assert fetched == self.ready.pop(0)
        if ack:
            self.pending.add(fetched)

    @precondition(lambda self: self.pending)
    @rule(data=st.data(), requeue=st.booleans())
    def settle_ack(self, data, requeue: bool) -> None:
        seq = data.draw(st.sampled_from(sorted(self.pending)))
        self.pending.discard(seq)
        if requeue:
            self._apply(paging.basic_reject(self.cfg, self.state, [seq]))
            self.ready = sorted([*self.ready, seq])
        else:
            self._apply(paging.basic_ack(self.cfg, self.state, [seq]))

    @rule(duration=DURATIONS)
    def target(self, duration: float | None) -> None:
        self._apply(paging.set_ram_duration_target(self.cfg, self.state, duration))

    @rule(rates=RATES)
    def rates(self, rates: Rates) -> None:
        self._apply(paging.set_rates(self.cfg, self.state, rates))

    @precondition(lambda self: any(s.pending for s in self.state.stores))
    @rule(store=st.sampled_from([0, 1]), count=st.integers(1, 3))
    def store_take(self, store: int, count: int) -> None:
        self._apply(paging.store_take(self.cfg, self.state, store, count))

    @precondition(lambda self: any(s.bumps for s in self.state.stores))
    @rule(store=st.sampled_from([0, 1]))
    def bump(self, store: int) -> None:
        self._apply(paging.handle_bump_credit(self.cfg, self.state, store))

    @precondition(lambda self: self.state.self_bumps)
    @rule()
    def self_bump(self) -> None:
        self._apply(paging.handle_bump_reduce_memory_use(self.cfg, self.state))

    @rule()
    def settle(self) -> None:
        self._apply(paging.settle(self.cfg, self.state))
        assert not self.state.has_paging_work()

    @invariant()
    def properties_hold(self) -> None:
        problems = check(self.cfg.profile, self.state, self.reports)
        assert not problems, problems

    @invariant()
    def oracle_agrees(self) -> None:
        assert [m.seq for m in self.state.ready()] == self.ready
        assert {m.seq for m in self.state.pending_acks()} == self.pending


TestPagingMachine = machine_test_case(PagingMachine, max_examples=80, steps=50)
