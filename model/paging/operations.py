"""Operations on a classic queue's backing queue (PG-PUBLISH, PG-FETCH, PG-ACK,
PG-REQUEUE, PG-TARGET, PG-STORE-TAKE, PG-BUMP, PG-SELF-BUMP, PG-SETTLE), and what the
queue process does around them for AMQP methods (PG-QUEUE-PROCESS).

Read next to ``spec/paging.md``. Every public function is pure: it takes a
:class:`~creditflow.model.paging.state.Config` and a
:class:`~creditflow.model.paging.state.PagingState` and returns a
:class:`~creditflow.model.paging.state.Step` (the new state and a report of what
happened), or for the AMQP-level and batch functions a :class:`Batch` (the final state
and one report per backing-queue operation, in order). An operation that is not enabled
(fetch from an empty queue, ack of an unknown seq id) changes nothing but is reported.

Each operation is written once, as ``_name(w, …)`` on a
:class:`~creditflow.model.paging.state.Work`; batches run many of them on one Work, so a
step of ``n`` publishes costs O(queue + n), not O(queue x n).

    >>> from creditflow.model.paging.state import Config, initial_state
    >>> cfg = Config()
    >>> st = publish(cfg, initial_state(), size=100).state
    >>> (len(st.q4), st.ram_msg_count)
    (1, 1)
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from typing import NamedTuple

from creditflow.model.credit import flow as cf
from creditflow.model.paging.phases import (
    maybe_deltas_to_betas,
    maybe_reduce_memory_use,
    reduce_memory_use,
)
from creditflow.model.paging.profile import persists_to_store
from creditflow.model.paging.state import (
    QUEUE_PEER,
    STORE_NAMES,
    Config,
    Msg,
    PagingState,
    Rates,
    Report,
    Step,
    Work,
)

#: Props bytes of a pika publish that sets only ``delivery_mode`` (flags 2 + mode 1).
DEFAULT_PROPS_BYTES = 3


class Batch(NamedTuple):
    """The final state of several operations and their reports, in order."""

    state: PagingState
    reports: tuple[Report, ...]
    #: seq ids delivered by the fetches among them, in order
    delivered: tuple[int, ...] = ()


# -- the backing-queue operations, on a Work -------------------------------------------


def _publish(w: Work, size: int, persistent: bool, props_bytes: int) -> Report:
    is_persistent = w.config.durable and persistent
    m = Msg(
        seq=w.next_seq_id,
        size=size,
        persistent=is_persistent,
        embedded=not persists_to_store(w.profile, size, props_bytes),
        in_ram=True,
        on_store=False,
        index_on_disk=False,
    )
    m = w.write_index(w.write_msg(m, force=False), force=False)
    q3_was_empty = not w.q3
    if q3_was_empty:
        w.q4.append(m)
    else:
        w.q1.append(m)
    w.len += 1
    w.bytes += size
    w.ram_msg_count += 1
    w.ram_bytes += size
    if is_persistent:
        w.persistent_count += 1
        w.persistent_bytes += size
    w.next_seq_id += 1
    maybe_reduce_memory_use(w)
    return w.cut("publish", placed="q4" if q3_was_empty else "q1", q3_was_empty=q3_was_empty)


def _queue_out(w: Work) -> Msg | None:
    """PG-QUEUE-OUT: take from q4, else from q3; when q3 empties, load delta (PG-D2B),
    or, with delta empty, q1 becomes q4."""
    if w.q4:
        return w.q4.popleft()
    if not w.q3:
        return None
    m = w.q3.popleft()
    if not w.q3:
        if not w.delta:
            assert not w.q2 and not w.q4, "fetch_from_q3: q2 and q4 must be empty"
            w.q4, w.q1 = w.q1, deque()
        else:
            maybe_deltas_to_betas(w)
    return m


def _fetch(w: Work, ack_required: bool) -> Report:
    head = w.q4[0].seq if w.q4 else (w.q3[0].seq if w.q3 else None)
    m = _queue_out(w)
    if m is None:
        return w.cut("fetch", fetched=None, head_before=None)
    w.read_body(m)
    w.len -= 1
    w.bytes -= m.size
    if m.in_ram:
        w.ram_msg_count -= 1
    if ack_required:
        w.record_pending_ack(m)
        w.unacked_bytes += m.size
    else:
        if m.in_ram:
            w.ram_bytes -= m.size
        _forget(w, m)
    w.advance_deliver(m.seq)
    return w.cut("fetch", fetched=m.seq, head_before=head)


def _in_r(w: Work, m: Msg) -> None:
    """PG-IN-R (``in_r``): put a message back at the head. A body not in RAM goes back
    to q3's front while q4 is empty (else it is read and becomes an alpha); a body in
    RAM (an alpha, or an embedded beta) goes to q4's front."""
    if not m.in_ram:
        if not w.q4:
            w.q3.appendleft(m)
            return
        m = w.read_body(m)
        w.ram_msg_count += 1
        w.ram_bytes += m.size
    w.q4.appendleft(m)


def _head_check(w: Work) -> Report:
    if w.len:
        m = _queue_out(w)
        assert m is not None
        _in_r(w, m)
    return w.cut("head_check")


def _forget(w: Work, m: Msg) -> None:
    if m.persistent:
        w.persistent_count -= 1
        w.persistent_bytes -= m.size
    w.removed += 1


def _take_pending(w: Work, seq: int) -> Msg | None:
    for tree in (w.rpa, w.dpa, w.qpa):
        if seq in tree:
            return tree.pop(seq)
    return None


def _ack(w: Work, seqs: Iterable[int]) -> Report:
    for seq in seqs:
        m = _take_pending(w, seq)
        if m is None:
            continue
        w.unacked_bytes -= m.size
        if m.in_ram:
            w.ram_bytes -= m.size
        _forget(w, m)
    return w.cut("ack")


def _publish_alpha(w: Work, m: Msg) -> Msg:
    m2 = w.read_body(m)
    w.ram_msg_count += 1
    if not m.in_ram:
        w.ram_bytes += m.size
    return m2


def _publish_beta(w: Work, m: Msg) -> Msg:
    m2 = w.trim(w.write_index(w.write_msg(m, force=True), force=False))
    if m2.in_ram:
        w.ram_msg_count += 1
    if m.in_ram and not m2.in_ram:
        w.ram_bytes -= m.size
    return m2


def _queue_merge(
    w: Work, seqs: list[int], q: deque[Msg], limit: int | None, pub: Callable[[Work, Msg], Msg]
) -> tuple[list[int], deque[Msg]]:
    """Merge requeued seq ids below ``limit`` into ``q`` by seq id (``queue_merge``)."""
    front: deque[Msg] = deque()
    i = 0
    while i < len(seqs) and (limit is None or seqs[i] < limit):
        seq = seqs[i]
        while q and q[0].seq < seq:
            front.append(q.popleft())
        m = _take_pending(w, seq)
        i += 1
        if m is not None:
            front.append(pub(w, m))
            w.len += 1
            w.bytes += m.size
            w.unacked_bytes -= m.size
    front.extend(q)
    return seqs[i:], front


def _requeue(w: Work, seqs: Iterable[int]) -> Report:
    ordered = sorted(seqs)
    rest, w.q4 = _queue_merge(w, ordered, w.q4, w.q3[0].seq if w.q3 else None, _publish_alpha)
    rest, w.q3 = _queue_merge(w, rest, w.q3, w.delta_start if w.delta else None, _publish_beta)
    for seq in rest:
        m = _take_pending(w, seq)
        if m is None:
            continue
        m2 = w.write_index(w.write_msg(m, force=True), force=True)
        if m.in_ram:
            w.ram_bytes -= m.size
        w.len += 1
        w.bytes += m.size
        w.unacked_bytes -= m.size
        w.expand_delta(m2._replace(in_ram=False))
    maybe_reduce_memory_use(w)
    return w.cut("requeue")


def _store_take(w: Work, store: int, count: int) -> Report:
    s = w.stores[store]
    credit, bumps = s.credit, list(s.bumps)
    n = min(count, s.pending)
    for _ in range(n):
        credit, emitted = cf.ack(credit, QUEUE_PEER, w.profile.store_credit)
        bumps.extend(amount for _, amount in emitted)
    w.stores[store] = s._replace(pending=s.pending - n, credit=credit, bumps=tuple(bumps))
    return w.cut("store")


def _bump(w: Work, store: int) -> Report:
    s = w.stores[store]
    if s.bumps:
        amount = s.bumps[0]
        w.stores[store] = s._replace(bumps=s.bumps[1:])
        w.credit, emitted = cf.handle_bump(w.credit, STORE_NAMES[store], amount)
        w.emitted.extend(emitted)
        reduce_memory_use(w)
    return w.cut("bump")


def _self_bump(w: Work) -> Report:
    if w.self_bumps:
        w.self_bumps -= 1
        w.waiting_bump = False
        reduce_memory_use(w)
    return w.cut("self_bump")


# -- public: one backing-queue operation ------------------------------------------------


def publish(
    cfg: Config,
    st: PagingState,
    size: int,
    persistent: bool = False,
    props_bytes: int = DEFAULT_PROPS_BYTES,
) -> Step:
    """PG-PUBLISH (``publish``, default mode): a new alpha goes to q4's tail if q3 is empty,
    else to q1's tail. A persistent message in a durable queue has its body (msg_store,
    spending credit) and index written now (PG-WRITE-MSG, PG-WRITE-INDEX). Then
    PG-GC-GATE may run a reduction."""
    w = Work(cfg, st, "publish")
    report = _publish(w, size, persistent, props_bytes)
    return Step(w.freeze(), report)


def fetch(cfg: Config, st: PagingState, ack_required: bool = True) -> Step:
    """PG-FETCH (``fetch``): deliver the ready head (PG-QUEUE-OUT), reading its body back
    if it is not in RAM. With ``ack_required`` it becomes a pending ack placed by where
    its body was (PG-PENDING-ACK); otherwise it is gone."""
    w = Work(cfg, st, "fetch")
    report = _fetch(w, ack_required)
    return Step(w.freeze(), report)


def head_check(cfg: Config, st: PagingState) -> Step:
    """PG-HEAD-CHECK: what the queue process does after a fetch, a requeue and a publish
    that leaves one message (``drop_expired_msgs`` without TTL: ``dropwhile`` with a
    predicate that is false): take the head out (PG-QUEUE-OUT, which may load delta or
    turn q1 into q4) and put it back (PG-IN-R). An embedded beta at q3's head thereby
    moves to q4."""
    w = Work(cfg, st, "head_check")
    report = _head_check(w)
    return Step(w.freeze(), report)


def ack(cfg: Config, st: PagingState, seqs: Iterable[int]) -> Step:
    """PG-ACK (``ack``): forget pending acks for good; unknown seq ids are ignored."""
    w = Work(cfg, st, "ack")
    report = _ack(w, seqs)
    return Step(w.freeze(), report)


def requeue(cfg: Config, st: PagingState, seqs: Iterable[int]) -> Step:
    """PG-REQUEUE (``requeue``): pending acks return to the ready queue by seq id —
    below q3's head into q4 as alphas (body read back), below delta's start into q3 as
    betas (body written, PG-WRITE-MSG), the rest into delta (body and index written).
    Then PG-GC-GATE may run a reduction."""
    w = Work(cfg, st, "requeue")
    report = _requeue(w, seqs)
    return Step(w.freeze(), report)


def set_rates(cfg: Config, st: PagingState, rates: Rates) -> Step:
    """PG-RATES: the four rates are an input of the model (RabbitMQ measures them)."""
    w = Work(cfg, st, "rates")
    w.rates = Rates(*(float(r) for r in rates))
    return w.step()


def set_ram_duration_target(cfg: Config, st: PagingState, duration: float | None) -> Step:
    """PG-TARGET (``set_ram_duration_target``): ``target = trunc(duration x sum of the
    four rates)`` (``None`` is infinity); a reduction runs iff the target became finite
    and smaller (or was infinity before)."""
    w = Work(cfg, st, "target")
    old = w.target
    new = None if duration is None else math.trunc(duration * w.rates.total)
    w.target = new
    reduced = not (new is None or (old is not None and new >= old))
    if reduced:
        reduce_memory_use(w)
    return w.step(old_target=old, reduced=reduced)


def resume(cfg: Config, st: PagingState) -> Step:
    """PG-RESUME (``resume``): one reduction pass."""
    w = Work(cfg, st, "resume")
    reduce_memory_use(w)
    return w.step()


def store_take(cfg: Config, st: PagingState, store: int, count: int = 1) -> Step:
    """PG-STORE-TAKE: msg_store ``store`` processes up to ``count`` writes from its
    mailbox, calling CF-ACK for each; every grant goes to the queue as a ``bump_credit``
    in flight (the msg_store is never blocked, so nothing is deferred)."""
    w = Work(cfg, st, "store")
    report = _store_take(w, store, count)
    return Step(w.freeze(), report)


def handle_bump_credit(cfg: Config, st: PagingState, store: int) -> Step:
    """PG-BUMP: the queue handles the oldest ``bump_credit`` from msg_store ``store``
    (CF-BUMP, which may unblock it and flush grants it deferred upstream), then resumes
    (PG-RESUME)."""
    w = Work(cfg, st, "bump")
    report = _bump(w, store)
    return Step(w.freeze(), report)


def handle_bump_reduce_memory_use(cfg: Config, st: PagingState) -> Step:
    """PG-SELF-BUMP: the queue handles its own ``bump_reduce_memory_use`` (clearing
    ``waiting_bump``), then resumes (PG-RESUME)."""
    w = Work(cfg, st, "self_bump")
    report = _self_bump(w)
    return Step(w.freeze(), report)


class SettleError(RuntimeError):
    """Settling did not reach quiescence within its step budget (a model bug)."""


def _settle(w: Work, budget: int) -> None:
    steps = 0
    while w.has_paging_work():
        steps += 1
        if steps > budget:
            raise SettleError(f"settle did not finish in {budget} steps")
        if w.self_bumps:
            _self_bump(w)
        elif any(s.pending for s in w.stores):
            for i, s in enumerate(w.stores):
                if s.pending:
                    _store_take(w, i, s.pending)
        else:
            _bump(w, next(i for i, s in enumerate(w.stores) if s.bumps))


def settle(cfg: Config, st: PagingState, max_steps: int | None = None) -> Step:
    """PG-SETTLE: run the msg_stores and the queue's internal messages to quiescence in
    the canonical order RabbitMQ's priorities give: the queue's own
    ``bump_reduce_memory_use`` first (priority 1), else every msg_store processes all
    its writes, else the queue handles the oldest ``bump_credit`` (persistent store
    first). The report gathers every pass and write of the run."""
    w = Work(cfg, st, "settle")
    _settle(w, max_steps if max_steps is not None else 10 * (st.next_seq_id + 100))
    writes = tuple(x for r in w.reports for x in r.writes)
    passes = tuple(x for r in w.reports for x in r.passes)
    grants = tuple(x for r in w.reports for x in r.grants)
    return Step(w.freeze(), Report(op="settle", writes=writes, passes=passes, grants=grants))


# -- public: what the queue process does for AMQP methods (PG-QUEUE-PROCESS) ------------


def basic_publish(
    cfg: Config,
    st: PagingState,
    size: int,
    persistent: bool = False,
    props_bytes: int = DEFAULT_PROPS_BYTES,
    count: int = 1,
) -> Batch:
    """PG-QUEUE-PROCESS: ``count`` enqueued publishes (no consumer), each PG-PUBLISH then
    PG-HEAD-CHECK if the queue holds exactly one message."""
    w = Work(cfg, st, "publish")
    for _ in range(count):
        _publish(w, size, persistent, props_bytes)
        if w.len == 1:
            _head_check(w)
    return Batch(w.freeze(), tuple(w.reports))


def basic_publish_sizes(
    cfg: Config,
    st: PagingState,
    sizes: Iterable[int],
    persistent: bool = False,
    props_bytes: int = DEFAULT_PROPS_BYTES,
) -> Batch:
    """PG-QUEUE-PROCESS, PG-SIZES: :func:`basic_publish` of one message per size, in
    order, as one batch: the state is frozen once, so the work is linear in the
    messages (once, a frozen state per message made 100,000 of them quadratic)."""
    w = Work(cfg, st, "publish")
    for size in sizes:
        _publish(w, size, persistent, props_bytes)
        if w.len == 1:
            _head_check(w)
    return Batch(w.freeze(), tuple(w.reports))


def basic_get(cfg: Config, st: PagingState, ack_required: bool = True, count: int = 1) -> Batch:
    """PG-QUEUE-PROCESS: ``count`` times ``basic.get``: PG-FETCH, then PG-HEAD-CHECK."""
    w = Work(cfg, st, "fetch")
    delivered = []
    for _ in range(count):
        report = _fetch(w, ack_required)
        if report.fetched is not None:
            delivered.append(report.fetched)
        _head_check(w)
    return Batch(w.freeze(), tuple(w.reports), tuple(delivered))


def basic_ack(cfg: Config, st: PagingState, seqs: Iterable[int]) -> Batch:
    """PG-QUEUE-PROCESS: one ``basic.ack`` per seq id: PG-ACK each."""
    w = Work(cfg, st, "ack")
    for seq in seqs:
        _ack(w, [seq])
    return Batch(w.freeze(), tuple(w.reports))


def basic_reject(cfg: Config, st: PagingState, seqs: Iterable[int]) -> Batch:
    """PG-QUEUE-PROCESS: one ``basic.reject``/``nack`` with requeue per seq id:
    PG-REQUEUE, then PG-HEAD-CHECK."""
    w = Work(cfg, st, "requeue")
    for seq in seqs:
        _requeue(w, [seq])
        _head_check(w)
    return Batch(w.freeze(), tuple(w.reports))
