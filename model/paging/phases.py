"""Phase changes of a classic queue: ``reduce_memory_use`` and loading delta back
(PG-REDUCE, PG-A2B, PG-ACKS, PG-B2D, PG-D2B, …).

Read next to ``spec/paging.md`` §Phases. Each function works on a
:class:`~creditflow.model.paging.state.Work` (one operation's mutable copy) and follows
the step order of RabbitMQ 3.10.8's ``rabbit_variable_queue`` (3.5.5 where the profile
says so).
"""

from __future__ import annotations

from collections.abc import Callable

from creditflow.model.paging.profile import next_segment_boundary
from creditflow.model.paging.state import Msg, PassReport, Work


def chunk_size(current: int, permitted: int | None) -> int:
    """PG-CHUNK: how many must go, ``current - permitted`` or 0 (``None`` is infinity)."""
    if permitted is None or permitted >= current:
        return 0
    return current - permitted


def permitted_beta_count(w: Work) -> int | None:
    """PG-PERMITTED-BETAS: how many betas (q2 + q3) may stay before the rest go to delta.

    ``infinity`` for an empty queue; ``min(|q3|, segment)`` for target 0; otherwise
    ``max(segment, bd - bd*bd // (bd + target))`` with ``bd = len - |q1| - |q4|``.
    """
    if w.len == 0:
        return None
    assert w.target is not None, "reduce_memory_use stops first on target infinity"
    segment = next_segment_boundary(w.profile, 0)
    if w.target == 0:
        return min(len(w.q3), segment)
    beta_delta = w.len - len(w.q1) - len(w.q4)
    return max(segment, beta_delta - beta_delta * beta_delta // (beta_delta + w.target))


def acks_first(w: Work) -> bool:
    """PG-ORDER-CHOICE: page pending acks first iff they grow faster than messages
    (``ack_in - ack_out > in - out``)."""
    r = w.rates
    return (r.ack_ingress - r.ack_egress) > (r.ingress - r.egress)


def _alpha_to_beta(w: Work, m: Msg) -> Msg:
    """One alpha becomes a beta (PG-A2B): write its body (forced) and, for persistent
    messages, its index; drop a msg_store body from RAM (an embedded body stays, and so
    does its count in ``ram_msg_count``)."""
    m2 = w.trim(w.write_index(w.write_msg(m, force=True), force=False))
    if m.in_ram and not m2.in_ram:
        w.ram_msg_count -= 1
        w.ram_bytes -= m.size
    return m2


def push_alphas_to_betas(w: Work, quota: int, stats: list[int]) -> int:
    """PG-A2B (``push_alphas_to_betas``): from q1's head (to q3's tail while delta is
    empty, else to q2's tail), then from q4's tail to q3's front. Before each message it
    stops when the quota is spent, the target is met (``target >= ram_msg_count``) or
    the queue is blocked by msg_store credit (PG-A2B-BLOCKED). Returns the quota left;
    ``stats[0]`` counts moves, ``stats[1]`` moves made while blocked (always 0)."""

    def run(
        source_out: Callable[[], Msg], source: object, consume: Callable[[Msg], None], quota: int
    ) -> int:
        while True:
            if quota == 0 or w.target is None or w.target >= w.ram_msg_count:
                return quota
            blocked = w.blocked()
            if blocked:
                return quota
            if not source:
                return quota
            stats[1] += blocked  # audited by PROP-PG-NO-A2B-WHILE-BLOCKED
            m = _alpha_to_beta(w, source_out())
            consume(m)
            stats[0] += 1
            quota -= 1

    def into_q3_or_q2(m: Msg) -> None:
        if w.delta_empty():
            w.q3.append(m)
        else:
            w.q2.append(m)

    quota = run(w.q1.popleft, w.q1, into_q3_or_q2, quota)
    return run(w.q4.pop, w.q4, w.q3.appendleft, quota)


def limit_ram_acks(w: Work, quota: int, stats: list[int]) -> int:
    """PG-ACKS (``limit_ram_acks``): page pending acks whose bodies are in RAM, largest
    seq id first, writing each body (forced) and moving it to ``disk_pending_ack``.
    There is NO blocked check here: this may drive msg_store credit negative."""
    while quota > 0 and w.rpa:
        seq = max(w.rpa)
        m = w.rpa.pop(seq)
        m2 = w.trim(w.write_index(w.write_msg(m, force=True), force=False))
        if m.in_ram and not m2.in_ram:
            w.ram_bytes -= m.size
        w.dpa[seq] = m2
        stats[2] += 1
        quota -= 1
    return quota


def _beta_to_delta(w: Work, m: Msg) -> None:
    m2 = w.write_index(m, force=True)
    if m.in_ram:
        w.ram_msg_count -= 1
        w.ram_bytes -= m.size
    w.expand_delta(m2._replace(in_ram=False))


def push_betas_to_deltas(w: Work, quota: int) -> tuple[int, int]:
    """PG-B2D (``push_betas_to_deltas``): roll betas into delta, writing their index
    entries: first from q3's TAIL, only entries at or beyond the segment boundary after
    q3's smallest seq id (q3 keeps its head segment), then from q2's HEAD (all of it).
    Returns (moved, moved-from-q3-below-the-boundary [always 0])."""
    moved = below = 0
    if w.q3:
        limit = next_segment_boundary(w.profile, w.q3[0].seq)
        if w.q3[-1].seq >= limit:
            while quota > 0 and w.q3 and w.q3[-1].seq >= limit:
                m = w.q3.pop()
                below += m.seq < limit  # audited by PROP-PG-B2D
                _beta_to_delta(w, m)
                moved += 1
                quota -= 1
    while quota > 0 and w.q2:
        _beta_to_delta(w, w.q2.popleft())
        moved += 1
        quota -= 1
    return moved, below


def maybe_bump_reduce_memory_use(w: Work) -> bool:
    """PG-CONTINUE: send ``bump_reduce_memory_use`` to self unless one is outstanding."""
    if w.waiting_bump:
        return False
    w.self_bumps += 1
    w.waiting_bump = True
    return True


def reduce_memory_use(w: Work) -> None:
    """PG-REDUCE (``reduce_memory_use``, default mode): one pass.

    1. a2b: ``chunk(ram_msg_count + |ram_pending_ack|, target)``, capped at
       ``2 x bound`` (PG-CAP, 3.10.8); the two reducers run in the order PG-ORDER-CHOICE
       picks, the second getting the quota the first left.
    2. b2d: ``chunk(|q2| + |q3|, permitted_beta_count)``; only if it is at least
       ``io_batch_size`` (PG-B2D-BATCH), capped likewise.
    3. If not blocked and either phase left work because of the cap, reschedule
       (PG-CONTINUE, 3.10.8). If blocked, the next ``bump_credit`` resumes (PG-RESUME).
    """
    if w.target is None:
        return
    p = w.profile
    stats = [0, 0, 0]
    a2b = chunk_size(w.ram_msg_count + len(w.rpa), w.target)
    need_a2b = False
    quota = 0
    first = ""
    if a2b > 0:
        quota = min(a2b, p.cap) if p.chunk_cap else a2b
        first = "acks" if acks_first(w) else "alphas"
        left = quota
        if first == "acks":
            left = push_alphas_to_betas(w, limit_ram_acks(w, left, stats), stats)
        else:
            left = limit_ram_acks(w, push_alphas_to_betas(w, left, stats), stats)
        need_a2b = left == 0 and a2b > quota
    b2d = chunk_size(len(w.q2) + len(w.q3), permitted_beta_count(w))
    need_b2d = False
    moved = below = 0
    if b2d >= p.io_batch_size and b2d > 0:
        b2d_quota = min(b2d, p.cap) if p.chunk_cap else b2d
        moved, below = push_betas_to_deltas(w, b2d_quota)
        need_b2d = b2d > b2d_quota
    blocked = w.blocked()
    rescheduled = False
    if p.self_bump and not blocked and (need_a2b or need_b2d):
        rescheduled = maybe_bump_reduce_memory_use(w)
    w.passes.append(
        PassReport(
            target=w.target,
            a2b_chunk=a2b,
            quota=quota,
            first=first,
            alphas_moved=stats[0],
            acks_moved=stats[2],
            alpha_moves_while_blocked=stats[1],
            b2d_chunk=b2d,
            b2d_moved=moved,
            q3_pushed_below_boundary=below,
            need_more=need_a2b or need_b2d,
            blocked_after=blocked,
            rescheduled=rescheduled,
            waiting_after=w.waiting_bump,
        )
    )


def maybe_reduce_memory_use(w: Work) -> None:
    """PG-GC-GATE: after publish and requeue, 3.10.8 reduces only on every
    ``threshold + 1``-th call (a counter that resets); 3.5.5 reduces every time."""
    threshold = w.profile.gc_threshold
    if threshold is None:
        reduce_memory_use(w)
        return
    if w.run_count >= threshold:
        reduce_memory_use(w)
        w.run_count = 0
    else:
        w.run_count += 1


def maybe_deltas_to_betas(w: Work) -> None:
    """PG-D2B (``maybe_deltas_to_betas``): load the next index segment of delta into q3.

    Reads seq ids ``[start, min(next_segment_boundary(start), start + read_batch, end))``;
    the loaded messages become betas (an embedded body comes back into RAM and into
    ``ram_msg_count``). If nothing was there, the range start advances and it tries
    again; if delta is then empty, q2 is appended to q3.
    """
    while w.delta:
        start, end = w.delta_start, w.delta_end
        assert start is not None and end is not None
        bounds = [next_segment_boundary(w.profile, start), end]
        if w.profile.read_batch is not None:
            bounds.append(start + w.profile.read_batch)
        upto = min(bounds)
        n = 0
        while n < len(w.delta) and w.delta[n].seq < upto:
            n += 1
        if n == 0:
            w.delta_start = upto
            continue
        loaded = w.delta[:n]
        del w.delta[:n]
        for m in loaded:
            beta = m._replace(in_ram=m.embedded, on_store=not m.embedded, index_on_disk=True)
            if beta.in_ram:
                w.ram_msg_count += 1
                w.ram_bytes += m.size
                w.disk_reads += 1
            w.q3.append(beta)
        if not w.delta:
            w.delta_start = w.delta_end = None
            w.q3.extend(w.q2)
            w.q2.clear()
        else:
            w.delta_start = upto
        return
