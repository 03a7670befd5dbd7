"""CMP-CYCLE and CMP-SLOW-CONSUMER: the explorer's verdicts for credit flow and accounts on
the same topologies, as spec/credit-vs-accounts.md states them."""

from __future__ import annotations

from creditflow.conformance.families.accounts.compare import (
    cycle_comparison,
    slow_consumer_comparison,
)


def test_cycle_deadlocks_with_credit_not_with_accounts():
    """CMP-CYCLE: request/reply A <-> B: per-edge credit {1,1} deadlocks in 4 steps (a run
    in which A takes no reply, so request/reply semantics have it too); accounts never
    deadlock and end without debt."""
    c = cycle_comparison()
    assert (c.credit.deadlock, c.credit.shortest, c.credit.blocked_forever) == (
        "terminal",
        4,
        ("A", "B"),
    )
    assert c.credit.steps == ("read(A)", "take(B<-A)", "bump(A<-B)", "read(A)")
    assert not any(step.startswith("take(A") for step in c.credit.steps)
    assert c.accounts.deadlock is None and c.accounts.states == 84
    assert c.accounts.blocked_at_end == frozenset({frozenset()})
    assert c.accounts.figures["debt_at_end"] == 0


def test_one_stalled_consumer_throttles_every_producer():
    """CMP-SLOW-CONSUMER, AC-NO-DEADLOCK: with accounts exactly the producers wait forever,
    D and F never wait; with credit flow D is blocked too."""
    c = slow_consumer_comparison()
    assert c.accounts.deadlock == "blocked-forever" and c.accounts.shortest == 3
    assert c.accounts.blocked_at_end == frozenset({frozenset({"P1", "P2"})})
    assert c.credit.deadlock == "blocked-forever" and c.credit.blocked_forever == ("D",)
    assert c.credit.blocked_at_end == frozenset({frozenset({"P1", "P2", "D"})})
    assert (c.credit.figures["backlog_at_S"], c.accounts.figures["backlog_at_S"]) == (6, 4)
