"""CF-*: the per-process credit_flow API, by example (the verified 3.10.8 edge cases)
and by property (Hypothesis), against counters kept independently by the tests."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from creditflow.model.credit import flow as cf
from creditflow.model.credit.spec import (
    DEFAULT_CREDIT,
    DEFAULT_CREDIT_BY_VERSION,
    DEFAULT_MSG_STORE_CREDIT,
    MODULE_FALLBACK_CREDIT,
    CreditSpec,
    parse_credit,
)

S32 = CreditSpec(3, 2)
specs = st.builds(CreditSpec, st.integers(-3, 6), st.integers(-3, 6))
peers = st.sampled_from(["p", "q", "r"])


def sends(ps: cf.ProcessCredit, peer: str, spec: CreditSpec, n: int) -> list[int]:
    values = []
    for _ in range(n):
        ps = cf.send(ps, peer, spec)
        values.append(ps.credit_from[peer])
    return values


def test_cf_spec_parse_and_cf_defaults():
    """CF-SPEC, CF-DEFAULTS."""
    assert parse_credit("400,200") == CreditSpec(400, 200)
    assert parse_credit("{2, 1}") == CreditSpec(2, 1)
    assert str(CreditSpec(3, 1)) == "{3,1}"
    assert CreditSpec(400, 200) == DEFAULT_CREDIT
    assert CreditSpec(200, 100) == MODULE_FALLBACK_CREDIT
    assert CreditSpec(4000, 800) == DEFAULT_MSG_STORE_CREDIT
    assert DEFAULT_CREDIT_BY_VERSION["3.5.5"] == CreditSpec(200, 50)
    assert DEFAULT_CREDIT_BY_VERSION["3.6.6"] == CreditSpec(200, 100)
    for bad in ("1", "a,b", "1,2,3", ""):
        try:
            parse_credit(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")


def test_cf_state_vars_initially_empty():
    """CF-STATE-VARS, CF-BLOCKED: a fresh process has no entries and is not blocked."""
    ps = cf.INITIAL
    assert dict(ps.credit_from) == {} and dict(ps.credit_to) == {}
    assert ps.blocked == () and ps.deferred == () and ps.blocked_at is None
    assert not cf.is_blocked(ps)


def test_cf_send_and_negative_verified_sequence():
    """CF-SEND, CF-NEGATIVE: {3,2}, five sends give 2, 1, 0 (blocked), -1, -2."""
    ps = cf.INITIAL
    seen = []
    for _ in range(5):
        ps = cf.send(ps, "q", S32)
        seen.append((ps.credit_from["q"], ps.blocked))
    assert seen == [(2, ()), (1, ()), (0, ("q",)), (-1, ("q",)), (-2, ("q",))]


def test_cf_ack_verified_sequence_and_grant():
    """CF-ACK, CF-GRANT: the counter runs 1,2,1,2,1 and a grant of M follows every M-th ack."""
    ps = cf.INITIAL
    counters, grants = [], []
    for _ in range(5):
        ps, emitted = cf.ack(ps, "s", S32)
        counters.append(ps.credit_to["s"])
        grants.extend(emitted)
    assert counters == [1, 2, 1, 2, 1]
    assert grants == [("s", 2), ("s", 2)]


def test_cf_bump_crossing_verified():
    """CF-BUMP: at -2 a bump of 2 gives 0 without unblocking; another bump unblocks."""
    ps = cf.INITIAL
    for _ in range(5):
        ps = cf.send(ps, "q", S32)
    ps, _ = cf.handle_bump(ps, "q", 2)
    assert ps.credit_from["q"] == 0 and cf.is_blocked(ps)
    ps, _ = cf.handle_bump(ps, "q", 2)
    assert ps.credit_from["q"] == 2 and not cf.is_blocked(ps)


def test_cf_bump_unknown_starts_from_zero():
    """CF-BUMP-UNKNOWN: a bump from a never-seen peer sets credit n; the next send gives n-1."""
    ps, emitted = cf.handle_bump(cf.INITIAL, "z", 5)
    assert ps.credit_from["z"] == 5 and emitted == ()
    ps = cf.send(ps, "z", CreditSpec(400, 200))
    assert ps.credit_from["z"] == 4


def test_cf_multiset_and_flush_newest_first():
    """CF-BLOCK, CF-MULTISET, CF-UNBLOCK, CF-FLUSH, CF-DEFER: two block(X) need two
    unblock(X); deferred grants go out newest first, only after the last unblock."""
    ps = cf.block(cf.INITIAL, "X", now=100)
    ps = cf.block(ps, "X", now=200)
    assert ps.blocked == ("X", "X") and ps.blocked_at == 100
    ps, out1 = cf.ack(ps, "a", CreditSpec(1, 1))
    ps, out2 = cf.ack(ps, "b", CreditSpec(1, 1))
    assert out1 == out2 == () and ps.deferred == (("b", 1), ("a", 1))
    ps, out = cf.unblock(ps, "X")
    assert out == () and ps.blocked == ("X",) and len(ps.deferred) == 2
    ps, out = cf.unblock(ps, "X")
    assert out == (("b", 1), ("a", 1)) and ps.deferred == () and not cf.is_blocked(ps)


def test_cf_unblock_of_absent_peer_keeps_other_blockers():
    """CF-UNBLOCK: removing a peer that is not a blocker changes nothing."""
    ps = cf.block(cf.INITIAL, "X")
    ps2, out = cf.unblock(ps, "Y")
    assert ps2.blocked == ("X",) and out == ()


def test_cf_peer_down_keeps_deferred_grants():
    """CF-PEER-DOWN: unblocks on the peer, erases both entries, keeps grants addressed to it."""
    ps = cf.send(cf.INITIAL, "Y", CreditSpec(1, 1))  # blocked on Y
    ps, _ = cf.ack(ps, "Y", CreditSpec(1, 1))  # a grant to Y, deferred
    ps, _ = cf.ack(ps, "W", CreditSpec(1, 1))  # a grant to W, deferred
    assert ps.deferred == (("W", 1), ("Y", 1))
    ps, out = cf.peer_down(ps, "Y")
    assert not cf.is_blocked(ps)
    assert "Y" not in ps.credit_from and "Y" not in ps.credit_to
    assert out == (("W", 1), ("Y", 1))  # flushed, the one to the dead peer included


def test_cf_peer_down_while_blocked_by_others_flushes_nothing():
    """CF-PEER-DOWN, CF-FLUSH: with another blocker left nothing is flushed or purged."""
    ps = cf.block(cf.block(cf.INITIAL, "A"), "B")
    ps, _ = cf.ack(ps, "B", CreditSpec(1, 1))
    ps, out = cf.peer_down(ps, "A")
    assert out == () and ps.blocked == ("B",) and ps.deferred == (("B", 1),)


def test_cf_disabled_zero_zero():
    """CF-DISABLED: {0,0}: ten sends leave -10 unblocked; ten acks leave -10 and no grant."""
    ps = cf.INITIAL
    for _ in range(10):
        ps = cf.send(ps, "q", CreditSpec(0, 0))
    assert ps.credit_from["q"] == -10 and not cf.is_blocked(ps)
    emitted = []
    for _ in range(10):
        ps, out = cf.ack(ps, "s", CreditSpec(0, 0))
        emitted.extend(out)
    assert ps.credit_to["s"] == -10 and emitted == []


def test_cf_disabled_i_equals_one_blocks_at_once():
    """CF-DISABLED, CF-SEND: I = 1 blocks on the first send."""
    assert cf.is_blocked(cf.send(cf.INITIAL, "q", CreditSpec(1, 1)))


def test_cf_state_window_from_onset():
    """CF-STATE: 'flow' while blocked and 1 s after the onset of the last block."""
    ps = cf.send(cf.INITIAL, "q", CreditSpec(1, 1), now=1000)
    assert cf.flow_state(ps, 5000) == "flow"  # blocked
    ps, _ = cf.handle_bump(ps, "q", 1)
    assert cf.flow_state(ps, 1500) == "flow"  # unblocked, but < 1 s after onset
    assert cf.flow_state(ps, 2000) == "running"
    assert cf.flow_state(cf.INITIAL, 0) == "running"


@given(spec=specs, n=st.integers(0, 30))
def test_cf_send_property(spec, n):
    """CF-SEND, CF-NEGATIVE, CF-DISABLED: credit is I - sends; blocked iff I >= 1 and
    the credit reached 0; at most one block per peer."""
    values = sends(cf.INITIAL, "q", spec, n)
    ps = cf.INITIAL
    for _ in range(n):
        ps = cf.send(ps, "q", spec)
    assert values == [spec.initial - k for k in range(1, n + 1)]
    should_block = spec.initial >= 1 and n >= spec.initial
    assert cf.is_blocked(ps) == should_block
    assert ps.blocked.count("q") == (1 if should_block else 0)


@given(spec=specs, n=st.integers(0, 40))
def test_cf_ack_property(spec, n):
    """CF-ACK, CF-GRANT: floor(n/M) grants of M for M >= 1, none for M <= 0."""
    ps = cf.INITIAL
    grants = []
    for _ in range(n):
        ps, out = cf.ack(ps, "s", spec)
        grants.extend(out)
    if spec.more_after >= 1:
        assert grants == [("s", spec.more_after)] * (n // spec.more_after)
        if n:
            assert ps.credit_to["s"] == spec.more_after - n % spec.more_after
    else:
        assert grants == []


@given(c=st.integers(-10, 10), n=st.integers(1, 10))
def test_cf_bump_property(c, n):
    """CF-BUMP: unblocks iff the credit crosses from <= 0 to > 0."""
    ps = cf.ProcessCredit(credit_from={"q": c}, blocked=("q",) if c <= 0 else ())
    ps2, _ = cf.handle_bump(ps, "q", n)
    assert ps2.credit_from["q"] == c + n
    assert cf.is_blocked(ps2) == (c <= 0 and c + n <= 0)


operations = st.lists(
    st.one_of(
        st.tuples(st.just("send"), peers),
        st.tuples(st.just("ack"), peers),
        st.tuples(st.just("bump"), peers, st.integers(1, 4)),
        st.tuples(st.just("block"), peers),
        st.tuples(st.just("unblock"), peers),
        st.tuples(st.just("peer_down"), peers),
    ),
    max_size=60,
)


@given(spec=st.builds(CreditSpec, st.integers(1, 5), st.integers(1, 5)), ops=operations)
def test_cf_invariants_under_any_operation_sequence(spec, ops):
    """CF-DEFER, CF-FLUSH, CF-PEER-DOWN, CF-MULTISET: after any sequence,
    deferred => blocked; a blocked process emits nothing except at a flush; the credit
    toward each peer equals I - sends + bumps since its last peer_down (CF-BUMP-UNKNOWN
    starting from 0 when a bump comes first); every grant is emitted or deferred once."""
    ps = cf.INITIAL
    sent: dict[str, int] = {}
    bumped: dict[str, int] = {}
    fresh: dict[str, bool] = {}
    grants_made = grants_out = 0
    for op, peer, *rest in ops:
        was_blocked = cf.is_blocked(ps)
        out: tuple = ()
        if op == "send":
            if peer not in sent and peer not in bumped:
                fresh[peer] = True
            ps = cf.send(ps, peer, spec)
            sent[peer] = sent.get(peer, 0) + 1
        elif op == "ack":
            before = len(ps.deferred)
            ps, out = cf.ack(ps, peer, spec)
            grants_made += len(out) + len(ps.deferred) - before
        elif op == "bump":
            if peer not in sent and peer not in bumped:
                fresh[peer] = False
            ps, out = cf.handle_bump(ps, peer, rest[0])
            bumped[peer] = bumped.get(peer, 0) + rest[0]
        elif op == "block":
            ps = cf.block(ps, peer)
        elif op == "unblock":
            ps, out = cf.unblock(ps, peer)
        else:
            ps, out = cf.peer_down(ps, peer)
            sent.pop(peer, None)
            bumped.pop(peer, None)
            fresh.pop(peer, None)
        grants_out += len(out)
        if op == "ack" and was_blocked:
            assert out == ()
        assert not ps.deferred or cf.is_blocked(ps)
        for p in set(sent) | set(bumped):
            start = spec.initial if fresh.get(p, True) else 0
            assert ps.credit_from[p] == start - sent.get(p, 0) + bumped.get(p, 0)
    assert grants_out + len(ps.deferred) == grants_made


def test_process_credit_is_hashable_value():
    """CF-STATE-VARS: states compare by value and hash consistently."""
    a = cf.send(cf.INITIAL, "q", S32)
    b = cf.send(cf.INITIAL, "q", S32)
    assert a == b and hash(a) == hash(b) and a != cf.INITIAL
    assert "credit_from" in repr(a)
