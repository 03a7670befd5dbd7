"""The state of a classic queue's backing queue (``rabbit_variable_queue``), PG-STATE.

Read next to ``spec/paging.md``. A :class:`PagingState` is immutable and hashable. Every
operation (see :mod:`creditflow.model.paging.operations`) thaws it into a :class:`Work` (mutable,
with deques), runs RabbitMQ's steps on it and freezes the result, so that long queues
cost O(n) per operation rather than O(n) per message moved.

Messages are :class:`Msg` records (the fields of RabbitMQ's ``msg_status`` the paging
logic reads). ``delta`` is kept as the messages themselves, sorted by seq id, beside the
range ``[delta_start, delta_end)`` RabbitMQ keeps in its ``#delta{}`` term.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable
from typing import Any, NamedTuple

from creditflow.model.credit import flow as cf
from creditflow.model.credit.flow import ProcessCredit
from creditflow.model.paging.profile import DEFAULT_PROFILE, PagingProfile

#: The two message stores (PG-STORES): persistent messages of durable queues use the first.
STORE_NAMES = ("msg_store_persistent", "msg_store_transient")
PERSISTENT_STORE, TRANSIENT_STORE = 0, 1
#: The queue's name as a peer in the msg_stores' credit_flow dictionaries.
QUEUE_PEER = "queue"


class Msg(NamedTuple):
    """One message's status (PG-MSG): ``embedded`` is ``persist_to = queue_index``;
    ``in_ram``: the body is in RAM; ``on_store``: ``msg_location = rabbit_msg_store``."""

    seq: int
    size: int
    persistent: bool
    embedded: bool
    in_ram: bool
    on_store: bool
    index_on_disk: bool

    @property
    def store(self) -> int:
        """PG-STORES: the msg_store this message's body is written to."""
        return PERSISTENT_STORE if self.persistent else TRANSIENT_STORE


class MsgStore(NamedTuple):
    """One msg_store process as the queue sees it (PG-STORE-PROCESS): writes in its
    mailbox, its own credit_flow dictionary, and its ``bump_credit`` grants in flight
    to the queue (amounts, oldest first)."""

    pending: int = 0
    credit: ProcessCredit = cf.INITIAL
    bumps: tuple[int, ...] = ()


class Rates(NamedTuple):
    """The four EWMA rates (messages/s) ``#rates{}`` holds (PG-RATES)."""

    ingress: float = 0.0
    egress: float = 0.0
    ack_ingress: float = 0.0
    ack_egress: float = 0.0

    @property
    def total(self) -> float:
        return self.egress + self.ingress + self.ack_egress + self.ack_ingress


class PagingState(NamedTuple):
    """PG-STATE: the backing-queue state. ``target`` ``None`` is ``infinity``."""

    q1: tuple[Msg, ...] = ()
    q2: tuple[Msg, ...] = ()
    delta: tuple[Msg, ...] = ()
    q3: tuple[Msg, ...] = ()
    q4: tuple[Msg, ...] = ()
    delta_start: int | None = None
    delta_end: int | None = None
    rpa: tuple[Msg, ...] = ()
    dpa: tuple[Msg, ...] = ()
    qpa: tuple[Msg, ...] = ()
    next_seq_id: int = 0
    next_deliver_seq_id: int = 0
    len: int = 0
    bytes: int = 0
    unacked_bytes: int = 0
    persistent_count: int = 0
    persistent_bytes: int = 0
    ram_msg_count: int = 0
    ram_bytes: int = 0
    target: int | None = None
    rates: Rates = Rates()
    run_count: int = 0
    waiting_bump: bool = False
    self_bumps: int = 0
    credit: ProcessCredit = cf.INITIAL
    stores: tuple[MsgStore, ...] = (MsgStore(), MsgStore())
    removed: int = 0
    disk_reads: int = 0
    disk_writes: int = 0

    # -- derived views ------------------------------------------------------------------

    def ready(self) -> tuple[Msg, ...]:
        """Ready messages in consumption order: q4, q3, delta, q2, q1 (PG-ORDER)."""
        return self.q4 + self.q3 + self.delta + self.q2 + self.q1

    def pending_acks(self) -> tuple[Msg, ...]:
        return self.rpa + self.dpa + self.qpa

    def blocked(self) -> bool:
        """CF-BLOCKED of the queue process."""
        return bool(self.credit.blocked)

    def store_credit(self, store: int) -> int | None:
        """The queue's ``credit_from`` toward a msg_store (``None`` before the first write)."""
        return self.credit.credit_from.get(STORE_NAMES[store])

    def has_paging_work(self) -> bool:
        """Writes or grants in flight, or a continuation outstanding (PG-SETTLE)."""
        return self.self_bumps > 0 or any(s.pending or s.bumps for s in self.stores)


class Config(NamedTuple):
    """What does not change during a queue's life: the profile and ``durable``."""

    profile: PagingProfile = DEFAULT_PROFILE
    durable: bool = True


def initial_state() -> PagingState:
    """PG-INIT: an empty, freshly declared queue (target ``infinity``, rates 0)."""
    return PagingState()


class PassReport(NamedTuple):
    """What one ``reduce_memory_use`` pass did (checked by PROP-PG-QUOTA and friends)."""

    target: int
    a2b_chunk: int
    quota: int
    first: str
    alphas_moved: int
    acks_moved: int
    alpha_moves_while_blocked: int
    b2d_chunk: int
    b2d_moved: int
    q3_pushed_below_boundary: int
    need_more: bool
    blocked_after: bool
    rescheduled: bool
    #: whether a ``bump_reduce_memory_use`` is outstanding after the pass
    waiting_after: bool


class Report(NamedTuple):
    """What one operation did, beyond the state it leaves (PROP-PG-* transition facts)."""

    op: str
    #: seq ids written to a msg_store in this operation, with their ``embedded`` flag
    writes: tuple[tuple[int, bool], ...] = ()
    passes: tuple[PassReport, ...] = ()
    #: fetch: the seq id delivered and the ready head before the fetch
    fetched: int | None = None
    head_before: int | None = None
    #: publish: where the message went and whether q3 was empty
    placed: str | None = None
    q3_was_empty: bool | None = None
    #: set_ram_duration_target: the old target, and whether a reduction ran
    old_target: int | None = None
    reduced: bool | None = None
    #: ``bump_credit`` grants the queue sent upstream (CF-FLUSH on unblock; network mode)
    grants: tuple[tuple[object, int], ...] = ()


class Step(NamedTuple):
    """The result of an operation (PG-STEP): the new state and what happened."""

    state: PagingState
    report: Report


class Work:
    """A mutable copy of a :class:`PagingState` for one operation (never escapes it)."""

    def __init__(self, config: Config, st: PagingState, op: str) -> None:
        self.config = config
        self.profile = config.profile
        self.op = op
        self.q1 = deque(st.q1)
        self.q2 = deque(st.q2)
        self.q3 = deque(st.q3)
        self.q4 = deque(st.q4)
        self.delta = list(st.delta)
        self.delta_start = st.delta_start
        self.delta_end = st.delta_end
        self.rpa = {m.seq: m for m in st.rpa}
        self.dpa = {m.seq: m for m in st.dpa}
        self.qpa = {m.seq: m for m in st.qpa}
        self.next_seq_id = st.next_seq_id
        self.next_deliver_seq_id = st.next_deliver_seq_id
        self.len = st.len
        self.bytes = st.bytes
        self.unacked_bytes = st.unacked_bytes
        self.persistent_count = st.persistent_count
        self.persistent_bytes = st.persistent_bytes
        self.ram_msg_count = st.ram_msg_count
        self.ram_bytes = st.ram_bytes
        self.target = st.target
        self.rates = st.rates
        self.run_count = st.run_count
        self.waiting_bump = st.waiting_bump
        self.self_bumps = st.self_bumps
        self.credit = st.credit
        self.stores = list(st.stores)
        self.removed = st.removed
        self.disk_reads = st.disk_reads
        self.disk_writes = st.disk_writes
        self.writes: list[tuple[int, bool]] = []
        self.passes: list[PassReport] = []
        self.emitted: list[cf.Grant] = []
        self.reports: list[Report] = []

    def freeze(self) -> PagingState:
        return PagingState(
            q1=tuple(self.q1),
            q2=tuple(self.q2),
            delta=tuple(self.delta),
            q3=tuple(self.q3),
            q4=tuple(self.q4),
            delta_start=self.delta_start,
            delta_end=self.delta_end,
            rpa=tuple(self.rpa[k] for k in sorted(self.rpa)),
            dpa=tuple(self.dpa[k] for k in sorted(self.dpa)),
            qpa=tuple(self.qpa[k] for k in sorted(self.qpa)),
            next_seq_id=self.next_seq_id,
            next_deliver_seq_id=self.next_deliver_seq_id,
            len=self.len,
            bytes=self.bytes,
            unacked_bytes=self.unacked_bytes,
            persistent_count=self.persistent_count,
            persistent_bytes=self.persistent_bytes,
            ram_msg_count=self.ram_msg_count,
            ram_bytes=self.ram_bytes,
            target=self.target,
            rates=self.rates,
            run_count=self.run_count,
            waiting_bump=self.waiting_bump,
            self_bumps=self.self_bumps,
            credit=self.credit,
            stores=tuple(self.stores),
            removed=self.removed,
            disk_reads=self.disk_reads,
            disk_writes=self.disk_writes,
        )

    def cut(self, op: str | None = None, **report: Any) -> Report:
        """Close the report of one operation run on this Work (several can run on one
        Work, e.g. a batch of publishes) and start collecting the next."""
        done = Report(
            op=op or self.op,
            writes=tuple(self.writes),
            passes=tuple(self.passes),
            grants=tuple(self.emitted),
            **report,
        )
        self.writes, self.passes, self.emitted = [], [], []
        self.reports.append(done)
        return done

    def step(self, **report: Any) -> Step:
        """Freeze after a single operation: the new state and its report."""
        return Step(self.freeze(), self.cut(**report))

    def has_paging_work(self) -> bool:
        return self.self_bumps > 0 or any(s.pending or s.bumps for s in self.stores)

    # -- small shared pieces ------------------------------------------------------------

    def blocked(self) -> bool:
        return bool(self.credit.blocked)

    def delta_empty(self) -> bool:
        return not self.delta

    def write_msg(self, m: Msg, force: bool) -> Msg:
        """PG-WRITE-MSG (``maybe_write_msg_to_disk``): a body still only in memory goes to
        its msg_store when forced or persistent, spending one credit (CF-SEND) and adding
        one write to the store's mailbox; an embedded body is never written there."""
        if m.on_store or m.embedded or not (force or m.persistent):
            return m
        peer = STORE_NAMES[m.store]
        self.credit = cf.send(self.credit, peer, self.profile.store_credit)
        s = self.stores[m.store]
        self.stores[m.store] = s._replace(pending=s.pending + 1)
        self.writes.append((m.seq, m.embedded))
        self.disk_writes += 1
        return m._replace(on_store=True)

    def write_index(self, m: Msg, force: bool) -> Msg:
        """PG-WRITE-INDEX: the index entry is written when forced or persistent (an
        embedded body is written with it and counts as a disk write)."""
        if m.index_on_disk or not (force or m.persistent):
            return m
        if m.embedded:
            self.disk_writes += 1
        return m._replace(index_on_disk=True)

    def trim(self, m: Msg) -> Msg:
        """PG-TRIM (``trim_msg_status``): drop a msg_store body from RAM; an embedded body
        stays."""
        return m if m.embedded else m._replace(in_ram=False)

    def read_body(self, m: Msg) -> Msg:
        """PG-READ: a body not in RAM is read back from its msg_store (a disk read)."""
        if m.in_ram:
            return m
        self.disk_reads += 1
        return m._replace(in_ram=True)

    def expand_delta(self, m: Msg) -> None:
        """PG-EXPAND-DELTA (``expand_delta``): add a message to delta, widening its range."""
        if not self.delta or self.delta_start is None or self.delta_end is None:
            self.delta_start, self.delta_end = m.seq, m.seq + 1
        elif m.seq < self.delta_start:
            self.delta_start = m.seq
        elif m.seq >= self.delta_end:
            self.delta_end = m.seq + 1
        bisect.insort(self.delta, m)

    def record_pending_ack(self, m: Msg) -> None:
        """PG-PENDING-ACK: a body not in RAM -> disk; embedded -> qi; else -> ram."""
        if not m.in_ram:
            self.dpa[m.seq] = m
        elif m.embedded:
            self.qpa[m.seq] = m
        else:
            self.rpa[m.seq] = m

    def advance_deliver(self, seq: int) -> None:
        if seq == self.next_deliver_seq_id:
            self.next_deliver_seq_id = seq + 1


def sorted_msgs(msgs: Iterable[Msg]) -> tuple[Msg, ...]:
    return tuple(sorted(msgs))
