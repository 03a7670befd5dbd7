"""Properties of a classic queue's paging (PROP-PG-*), read next to ``spec/paging.md``.

State properties take a :class:`~creditflow.model.paging.state.PagingState`; transition
properties take the :class:`~creditflow.model.paging.state.Report` of the operation that
produced it. :func:`violations` checks both and returns the ids that fail; :func:`explain`
says where, in one line. The explorer (via :mod:`creditflow.model.paging.system`) and the
Hypothesis machine (``tests/test_paging_stateful.py``) call them after every step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from creditflow.model.network.properties import edge_conserved
from creditflow.model.paging.profile import PagingProfile
from creditflow.model.paging.state import STORE_NAMES, Msg, PagingState, Report

CONSERVED = "PROP-PG-CONSERVED"
ORDER = "PROP-PG-ORDER"
SHAPE = "PROP-PG-SHAPE"
COUNTERS = "PROP-PG-COUNTERS"
DELTA = "PROP-PG-DELTA"
MSG = "PROP-PG-MSG"
KINDS = "PROP-PG-KINDS"
CREDIT = "PROP-PG-CREDIT"
CONTINUATION = "PROP-PG-CONTINUATION"
FIFO = "PROP-PG-FIFO"
PLACEMENT = "PROP-PG-PLACEMENT"
QUOTA = "PROP-PG-QUOTA"
NO_A2B_WHILE_BLOCKED = "PROP-PG-NO-A2B-WHILE-BLOCKED"
B2D = "PROP-PG-B2D"
EMBEDDED = "PROP-PG-EMBEDDED"
TARGET = "PROP-PG-TARGET"

STATE_PROPERTIES = (CONSERVED, ORDER, SHAPE, COUNTERS, DELTA, MSG, KINDS, CREDIT, CONTINUATION)
TRANSITION_PROPERTIES = (FIFO, PLACEMENT, QUOTA, NO_A2B_WHILE_BLOCKED, B2D, EMBEDDED, TARGET)
ALL_PROPERTIES = STATE_PROPERTIES + TRANSITION_PROPERTIES


def _conserved(st: PagingState) -> str | None:
    seqs = [m.seq for m in st.ready()] + [m.seq for m in st.pending_acks()]
    if len(set(seqs)) != len(seqs):
        return "a seq id is held twice"
    if any(not 0 <= s < st.next_seq_id for s in seqs):
        return "a seq id was never published"
    if len(seqs) + st.removed != st.next_seq_id:
        return f"{st.next_seq_id} published != {len(seqs)} held + {st.removed} removed"
    return None


def _order(st: PagingState) -> str | None:
    seqs = [m.seq for m in st.ready()]
    for a, b in zip(seqs, seqs[1:], strict=False):
        if a >= b:
            return f"ready messages out of order (q4, q3, delta, q2, q1): {a} before {b}"
    return None


def _shape(st: PagingState) -> str | None:
    if st.q1 and not st.q3:
        return "q1 non-empty while q3 is empty"
    if st.q2 and not st.delta:
        return "q2 non-empty while delta is empty"
    if st.delta and not st.q3:
        return "delta non-empty while q3 is empty"
    if (st.len == 0) != (not st.q3 and not st.q4):
        return "len == 0 differs from (q3 and q4 empty)"
    return None


def _counters(st: PagingState) -> str | None:
    ready = st.ready()
    pending = st.pending_acks()
    held = ready + pending
    for name in (
        "len",
        "bytes",
        "unacked_bytes",
        "persistent_count",
        "persistent_bytes",
        "ram_msg_count",
        "ram_bytes",
    ):
        if getattr(st, name) < 0:
            return f"{name} < 0"
    if st.ram_msg_count > st.len:
        return "ram_msg_count > len"
    if st.ram_bytes > st.bytes + st.unacked_bytes:
        return "ram_bytes > bytes + unacked_bytes"
    expected = {
        "len": len(ready),
        "bytes": sum(m.size for m in ready),
        "unacked_bytes": sum(m.size for m in pending),
        "ram_msg_count": sum(m.in_ram for m in ready),
        "ram_bytes": sum(m.size for m in held if m.in_ram),
        "persistent_count": sum(m.persistent for m in held),
        "persistent_bytes": sum(m.size for m in held if m.persistent),
    }
    for name, value in expected.items():
        if getattr(st, name) != value:
            return f"{name} = {getattr(st, name)}, the messages say {value}"
    return None


def _delta(st: PagingState) -> str | None:
    if not st.delta:
        if st.delta_start is not None or st.delta_end is not None:
            return "empty delta with a range"
        return None
    if st.delta_start is None or st.delta_end is None:
        return "delta without a range"
    if st.delta_start + len(st.delta) > st.delta_end:
        return f"d/1: start {st.delta_start} + count {len(st.delta)} > end {st.delta_end}"
    if not all(st.delta_start <= m.seq < st.delta_end for m in st.delta):
        return "a delta message outside [start, end)"
    return None


def _msg(st: PagingState) -> str | None:
    for m in st.q1 + st.q2 + st.q3 + st.q4 + st.pending_acks():
        if m.persistent and not m.index_on_disk:
            return f"m/1: persistent message {m.seq} without its index on disk"
        if not (m.in_ram or m.on_store):
            return f"m/1: message {m.seq} neither in RAM nor on a store"
        if m.embedded and (m.on_store or not m.in_ram):
            return f"embedded message {m.seq} not in RAM or on a msg_store"
    return None


def _kinds(st: PagingState) -> str | None:
    def bad(msgs: Iterable[Msg], ok: Callable[[Msg], bool], what: str) -> str | None:
        for m in msgs:
            if not ok(m):
                return f"{what}: message {m.seq}"
        return None

    return (
        bad(st.q1 + st.q4, lambda m: m.in_ram, "q1/q4 hold only alphas")
        or bad(
            st.delta,
            lambda m: not m.in_ram and m.index_on_disk,
            "delta holds only messages on disk",
        )
        or bad(
            st.rpa,
            lambda m: m.in_ram and not m.embedded,
            "ram_pending_ack holds msg_store bodies in RAM",
        )
        or bad(st.dpa, lambda m: not m.in_ram, "disk_pending_ack holds bodies not in RAM")
        or bad(st.qpa, lambda m: m.in_ram and m.embedded, "qi_pending_ack holds embedded bodies")
    )


def _credit(profile: PagingProfile, st: PagingState) -> str | None:
    spec = profile.store_credit
    for i, store in enumerate(st.stores):
        credit_from = st.credit.credit_from.get(STORE_NAMES[i], spec.initial)
        credit_to = store.credit.credit_to.get("queue", spec.more_after)
        if any(b != spec.more_after for b in store.bumps):
            return f"{STORE_NAMES[i]}: a grant of other than {spec.more_after}"
        if not edge_conserved(
            credit_from,
            credit_to,
            store.pending,
            len(store.bumps),
            0,
            spec.initial,
            spec.more_after,
        ):
            return (
                f"queue->{STORE_NAMES[i]} credit not conserved: credit {credit_from}, "
                f"{store.pending} writes, {len(store.bumps)} grants in flight"
            )
    blocked = credit_blocked_by_stores(profile, st)
    if blocked != {p for p in st.credit.blocked if p in STORE_NAMES}:
        return "the queue's blocked set disagrees with its msg_store credit"
    return None


def credit_blocked_by_stores(profile: PagingProfile, st: PagingState) -> set[str]:
    """CF-SEND: the stores whose credit the queue spent down to 0 or below."""
    return {
        name
        for name, c in st.credit.credit_from.items()
        if name in STORE_NAMES and c <= 0 and profile.store_credit.blocks
    }


def _continuation(profile: PagingProfile, st: PagingState) -> str | None:
    if not profile.self_bump:
        return "a self-bump without rescheduling" if st.self_bumps or st.waiting_bump else None
    if st.self_bumps != (1 if st.waiting_bump else 0):
        return f"{st.self_bumps} bump_reduce_memory_use outstanding, waiting_bump={st.waiting_bump}"
    return None


_STATE_CHECKS = {
    CONSERVED: lambda p, s: _conserved(s),
    ORDER: lambda p, s: _order(s),
    SHAPE: lambda p, s: _shape(s),
    COUNTERS: lambda p, s: _counters(s),
    DELTA: lambda p, s: _delta(s),
    MSG: lambda p, s: _msg(s),
    KINDS: lambda p, s: _kinds(s),
    CREDIT: _credit,
    CONTINUATION: _continuation,
}


def _transition(profile: PagingProfile, st: PagingState, report: Report) -> dict[str, str]:
    found: dict[str, str] = {}
    if report.op == "fetch" and report.fetched != report.head_before:
        found[FIFO] = f"fetched {report.fetched}, the head was {report.head_before}"
    if report.op == "publish" and report.placed != ("q4" if report.q3_was_empty else "q1"):
        found[PLACEMENT] = f"published to {report.placed} with q3 empty={report.q3_was_empty}"
    if any(embedded for _, embedded in report.writes):
        found[EMBEDDED] = "an embedded body was written to a msg_store"
    for p in report.passes:
        moved = p.alphas_moved + p.acks_moved
        cap = profile.cap if profile.chunk_cap else None
        expected_quota = min(p.a2b_chunk, cap) if cap is not None else p.a2b_chunk
        if p.quota != expected_quota or moved > p.quota:
            found[QUOTA] = f"a2b moved {moved} with quota {p.quota} of chunk {p.a2b_chunk}"
        if p.b2d_moved and (
            p.b2d_chunk < profile.io_batch_size
            or (cap is not None and p.b2d_moved > cap)
            or p.b2d_moved > p.b2d_chunk
        ):
            found[QUOTA] = f"b2d moved {p.b2d_moved} of chunk {p.b2d_chunk}"
        if p.alpha_moves_while_blocked:
            found[NO_A2B_WHILE_BLOCKED] = f"{p.alpha_moves_while_blocked} alphas moved blocked"
        if p.q3_pushed_below_boundary:
            found[B2D] = "q3 pushed entries of its head segment to delta"
        if profile.self_bump and p.need_more and not p.blocked_after and not p.waiting_after:
            found[CONTINUATION] = "work left, not blocked, and no continuation outstanding"
    if report.op == "target" and report.reduced is not None:
        should = st.target is not None and (
            report.old_target is None or st.target < report.old_target
        )
        if report.reduced != should:
            found[TARGET] = f"target {report.old_target} -> {st.target}: reduced={report.reduced}"
    return found


def check(
    profile: PagingProfile, st: PagingState, reports: Iterable[Report] = ()
) -> dict[str, str]:
    """Every violated property id with a one-line explanation (empty if all hold)."""
    found: dict[str, str] = {}
    for pid, fn in _STATE_CHECKS.items():
        problem = fn(profile, st)
        if problem is not None:
            found[pid] = problem
    for report in reports:
        for pid, problem in _transition(profile, st, report).items():
            found.setdefault(pid, problem)
    return found


def violations(
    profile: PagingProfile, st: PagingState, reports: Iterable[Report] = ()
) -> tuple[str, ...]:
    """The ids of the PROP-PG properties violated by ``st`` (and the operation's reports)."""
    found = check(profile, st, reports)
    return tuple(pid for pid in ALL_PROPERTIES if pid in found)
