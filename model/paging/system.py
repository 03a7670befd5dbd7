"""A bounded paging scenario as a :class:`~creditflow.model.system.TransitionSystem`
(PG-EXPLORE), so that :func:`creditflow.conformance.explore.explorer.explore` checks every
PROP-PG property in every reachable state.

The bound: a publisher with a supply of ``publishes`` messages, each of one of a few
*kinds* (size, persistent) it may pick; a consumer that may ``basic.get`` (with or
without ack), ack or requeue the oldest or newest pending ack; the memory monitor may set
any of a few RAM durations; a few rate vectors; each msg_store processes one write at a
time; the queue handles ``bump_credit`` and its own ``bump_reduce_memory_use`` whenever
they are there. Every interleaving is explored.

    >>> from creditflow.conformance.explore.explorer import explore
    >>> result = explore(PagingSystem(SMALL_BOUNDS), max_states=500)  # the first ~500 states
    >>> result.n_states >= 500, result.findings
    (True, {})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from creditflow.model.credit.spec import CreditSpec
from creditflow.model.paging import operations as paging
from creditflow.model.paging.operations import Batch
from creditflow.model.paging.profile import DEFAULT_PROFILE, PagingProfile
from creditflow.model.paging.properties import ALL_PROPERTIES, check
from creditflow.model.paging.state import (
    STORE_NAMES,
    Config,
    PagingState,
    Rates,
    Report,
    Step,
    initial_state,
)

PUBLISH, GET, ACK, REQUEUE, TARGET, RATES, STORE, BUMP, SELF_BUMP = range(9)
ACTION_NAMES = (
    "publish",
    "basic_get",
    "ack",
    "requeue",
    "target",
    "rates",
    "store_take",
    "bump_credit",
    "bump_reduce_memory_use",
)
SHIFT = 20


class Bounds(NamedTuple):
    """What a bounded exploration may do (PG-EXPLORE)."""

    #: message kinds the publisher may pick: (body size, persistent)
    kinds: tuple[tuple[int, bool], ...]
    publishes: int
    profile: PagingProfile = DEFAULT_PROFILE
    durable: bool = True
    durations: tuple[float | None, ...] = (0, None)
    rates: tuple[Rates, ...] = (Rates(),)
    no_ack: bool = False
    requeue: bool = True


#: A small bound used by the tests and the doctest: credit {2,1}, segments of 2, io batch
#: 1, a gc threshold of 1; one large transient, one small persistent kind; 3 publishes.
SMALL_BOUNDS = Bounds(
    kinds=((5000, False), (100, True)),
    publishes=3,
    profile=DEFAULT_PROFILE.with_settings(
        store_credit=CreditSpec(2, 1),
        segment_entries=2,
        io_batch_size=1,
        gc_threshold=1,
        read_batch=2,
    ),
    rates=(Rates(), Rates(0.0, 1.0, 1.0, 0.0)),
)


class Explored(NamedTuple):
    """An explored state: the queue and the reports of the step that reached it."""

    queue: PagingState
    last: tuple[Report, ...] = ()


def _normalise(st: PagingState) -> PagingState:
    """Drop the disk read/write tallies: they only grow (e.g. over requeue cycles) and
    no property reads them, so keeping them would make the state space infinite."""
    if st.disk_reads or st.disk_writes:
        return st._replace(disk_reads=0, disk_writes=0)
    return st


class PagingSystem:
    """The paging model within :class:`Bounds`, with the PROP-PG properties."""

    process_names: Sequence[str] = ("queue", *STORE_NAMES)
    property_ids: Sequence[str] = ALL_PROPERTIES

    def __init__(self, bounds: Bounds, rules: PagingProfile | None = None) -> None:
        """``rules``: the profile whose properties are checked (default: the one that
        runs), e.g. to check 3.5.5's behaviour against 3.10.8's cap and continuation."""
        self.bounds = bounds
        self.rules = rules or bounds.profile
        self.config = Config(bounds.profile, bounds.durable)

    def initial(self) -> Explored:
        return Explored(initial_state())

    def _apply(self, kind: int, param: int, st: PagingState) -> Batch | Step:
        cfg, b = self.config, self.bounds
        if kind == PUBLISH:
            size, persistent = b.kinds[param]
            return paging.basic_publish(cfg, st, size, persistent)
        if kind == GET:
            return paging.basic_get(cfg, st, bool(param))
        if kind in (ACK, REQUEUE):
            pending = [m.seq for m in st.pending_acks()]
            seq = min(pending) if param == 0 else max(pending)
            if kind == ACK:
                return paging.basic_ack(cfg, st, [seq])
            return paging.basic_reject(cfg, st, [seq])
        if kind == TARGET:
            return paging.set_ram_duration_target(cfg, st, b.durations[param])
        if kind == RATES:
            return paging.set_rates(cfg, st, b.rates[param])
        if kind == STORE:
            return paging.store_take(cfg, st, param, 1)
        if kind == BUMP:
            return paging.handle_bump_credit(cfg, st, param)
        return paging.handle_bump_reduce_memory_use(cfg, st)

    def enabled(self, st: PagingState) -> list[int]:
        b = self.bounds
        acts: list[int] = []
        if st.next_seq_id < b.publishes:
            acts += [PUBLISH << SHIFT | k for k in range(len(b.kinds))]
        if st.len:
            acts.append(GET << SHIFT | 1)
            if b.no_ack:
                acts.append(GET << SHIFT)
        n_pending = len(st.rpa) + len(st.dpa) + len(st.qpa)
        if n_pending:
            ends = (0,) if n_pending == 1 else (0, 1)
            acts += [ACK << SHIFT | e for e in ends]
            if b.requeue:
                acts += [REQUEUE << SHIFT | e for e in ends]
        acts += [TARGET << SHIFT | i for i in range(len(b.durations))]
        acts += [RATES << SHIFT | i for i, r in enumerate(b.rates) if r != st.rates]
        acts += [STORE << SHIFT | i for i, s in enumerate(st.stores) if s.pending]
        acts += [BUMP << SHIFT | i for i, s in enumerate(st.stores) if s.bumps]
        if st.self_bumps:
            acts.append(SELF_BUMP << SHIFT)
        return acts

    def successors(self, state: Explored) -> list[tuple[int, Explored]]:
        out = []
        for action in self.enabled(state.queue):
            done = self._apply(action >> SHIFT, action & ((1 << SHIFT) - 1), state.queue)
            reports = done.reports if isinstance(done, Batch) else (done.report,)
            out.append((action, Explored(_normalise(done.state), reports)))
        return out

    def describe(self, action: int) -> str:
        kind, param = action >> SHIFT, action & ((1 << SHIFT) - 1)
        name = ACTION_NAMES[kind]
        if kind == PUBLISH:
            size, persistent = self.bounds.kinds[param]
            return f"publish({size} B, {'persistent' if persistent else 'transient'})"
        if kind == GET:
            return "basic_get(ack)" if param else "basic_get(no ack)"
        if kind in (ACK, REQUEUE):
            return f"{name}({'oldest' if param == 0 else 'newest'})"
        if kind == TARGET:
            d = self.bounds.durations[param]
            return f"target({'infinity' if d is None else d})"
        if kind == RATES:
            return f"rates({','.join(f'{r:g}' for r in self.bounds.rates[param])})"
        if kind in (STORE, BUMP):
            return f"{name}({STORE_NAMES[param]})"
        return name

    def violations(self, state: Explored) -> tuple[str, ...]:
        found = check(self.rules, state.queue, state.last)
        return tuple(pid for pid in ALL_PROPERTIES if pid in found)

    def explain(self, state: Explored, property_id: str) -> str:
        return check(self.rules, state.queue, state.last).get(property_id, "")

    def blocked_mask(self, state: Explored) -> int:
        return 1 if state.queue.blocked() else 0

    def pending_work(self, state: Explored) -> bool:
        return state.queue.has_paging_work()

    def render(self, state: Explored) -> Mapping[str, Any]:
        st = state.queue

        def seqs(msgs: tuple) -> tuple[int, ...]:
            return tuple(m.seq for m in msgs)

        return {
            "q1": seqs(st.q1),
            "q2": seqs(st.q2),
            "q3": seqs(st.q3),
            "q4": seqs(st.q4),
            "delta": seqs(st.delta),
            "delta_range": (st.delta_start, st.delta_end),
            "ram_pending_ack": seqs(st.rpa),
            "disk_pending_ack": seqs(st.dpa),
            "qi_pending_ack": seqs(st.qpa),
            "in_ram": frozenset(m.seq for m in st.ready() + st.pending_acks() if m.in_ram),
            "len": st.len,
            "ram_msg_count": st.ram_msg_count,
            "target": st.target,
            "store_credit": tuple(st.store_credit(i) for i in range(len(STORE_NAMES))),
            "blocked": frozenset(st.credit.blocked),
            "store_pending": tuple(s.pending for s in st.stores),
            "grants_in_flight": tuple(len(s.bumps) for s in st.stores),
            "waiting_bump": st.waiting_bump,
            "self_bumps": st.self_bumps,
            "removed": st.removed,
        }

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        kind, param = action >> SHIFT, action & ((1 << SHIFT) - 1)
        return ACTION_NAMES[kind], {"param": param, "step": self.describe(action)}
