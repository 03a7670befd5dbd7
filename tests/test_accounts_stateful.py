"""A Hypothesis state machine over the accounts model: random actor graphs, random
interleavings of reads, waits, turns, repays, firings and crashes; after every step the
AC properties hold and an independent ledger of the observations agrees with the debts."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from creditflow.model.accounts.properties import AccountsProperties
from creditflow.model.accounts.rules import WAITING, AccountsModel
from tests.stateful_machines import machine_test_case
from tests.strategies import actor_graphs


class AccountsMachine(RuleBasedStateMachine):
    """AC-DEBT-SUM, AC-QUIESCENCE, AC-WAIT-OVER-LIMIT, AC-OVERSHOOT, AC-SUSPEND-IFF,
    AC-BORROW-BEFORE-REPAY, AC-CHARGE, AC-NOTIFY along random runs."""

    @initialize(graph=actor_graphs(max_actors=6, max_reads=6, max_limit=4))
    def build(self, graph):
        self.model = AccountsModel(graph)
        self.properties = AccountsProperties(self.model)
        self.state = self.model.initial()
        self.ledger = dict.fromkeys(self.model.account_names, 0)
        self.steps = 0

    def enabled(self):
        return list(self.model.enabled(self.state))

    @precondition(lambda self: hasattr(self, "model") and self.enabled())
    @rule(data=st.data())
    def step(self, data):
        action = data.draw(st.sampled_from(self.enabled()))
        before = self.state
        outcome = self.model.apply(before, action)
        assert self.properties.step_violations(before, action, outcome) == ()
        for o in outcome.observations:
            if o.kind == "borrow":
                self.ledger[o.account] += o.amount
            elif o.kind == "repay":
                self.ledger[o.account] -= o.amount
            if o.kind in ("borrow", "repay"):
                assert o.debt == self.ledger[o.account]
            if o.kind == "wake":
                assert o.debt <= self.model.limit  # AC-NOTIFY
        self.state = outcome.state
        self.steps += 1

    @precondition(lambda self: hasattr(self, "model"))
    @invariant()
    def properties_hold(self):
        assert self.properties.violations(self.state) == ()
        assert dict(zip(self.model.account_names, self.state.debt, strict=True)) == self.ledger
        for r, rs in enumerate(self.state.readers):
            if rs.phase == WAITING:
                assert self.state.debt[self.model.reader_account[r]] > self.model.limit

    @precondition(lambda self: hasattr(self, "model") and not self.enabled())
    @rule()
    def at_the_end_nothing_is_owed(self):
        """AC-QUIESCENCE, AC-NO-DEADLOCK: with no stalled actor a run only stops when every
        loan is repaid and no reader waits."""
        assert self.model.quiescent(self.state)
        assert all(d == 0 for d in self.state.debt)
        assert self.model.blocked_mask(self.state) == 0


TestAccountsMachine = machine_test_case(AccountsMachine, max_examples=80, steps=60)
