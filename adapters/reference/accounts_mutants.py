"""Faulty accounts implementations for the ``accounts`` adapter family (AD-AC-MUTANTS).

Each is the reference model with one mistake a real runtime could make. The reference
server runs one with ``--mutant NAME``; ``tests/test_accounts_adapter.py`` shows that
``creditflow accounts conform`` finds every one of them.
"""

from __future__ import annotations

from creditflow.model.accounts.rules import (
    ACTION_SHIFT,
    NO_LOAN,
    READ,
    WAIT,
    AccountsModel,
    AccountsState,
    ActorState,
    Loan,
    Observation,
    Outcome,
    StateBuilder,
)


class StrictCheck(AccountsModel):
    """Waits when debt >= limit (instead of > limit)."""

    def enabled(self, state: AccountsState):
        for action in super().enabled(state):
            kind, r = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
            if kind == READ and state.debt[self.reader_account[r]] == self.limit:
                yield WAIT << ACTION_SHIFT | r
            else:
                yield action


class ForgetsNotify(AccountsModel):
    """Repays without waking a waiter or storing a permit."""

    def _repay(self, b: StateBuilder, account: int, amount: int) -> None:
        b.debt[account] -= amount
        b.obs.append(Observation("repay", self.account_names[account], amount, b.debt[account]))


class RepaysOnDequeue(AccountsModel):
    """Repays a turn's loan when it is taken from the mailbox, before borrowing."""

    def turn(self, state: AccountsState, x: int) -> Outcome:
        b = StateBuilder(state)
        actor = b.actors[x]
        loan = actor.mailbox[0]
        self._repay(b, loan.account, loan.cost)
        b.actors[x] = actor._replace(mailbox=actor.mailbox[1:], held=Loan(loan.account, 0, 0))
        self._send(b, x, loan)
        return b.outcome()


class CrashLeaks(AccountsModel):
    """A crashing actor's queued turns are never repaid."""

    def crash(self, state: AccountsState, x: int) -> Outcome:
        b = StateBuilder(state)
        actor = b.actors[x]
        b.actors[x] = ActorState(False, (), NO_LOAN, actor.timer_account, 0)
        if actor.held.account >= 0:
            self._repay(b, actor.held.account, actor.held.cost)
        return b.outcome()


class ChargesFirstAccount(AccountsModel):
    """Charges every send to the first account, not the triggering one."""

    def _send(self, b: StateBuilder, sender: int, loan: Loan) -> None:
        super()._send(b, sender, Loan(0, loan.cost, loan.hop))


class CountsTurnsNotEvents(AccountsModel):
    """Borrows 1 per turn instead of the number of events in it."""

    def _borrow(self, b: StateBuilder, account: int, amount: int) -> None:
        super()._borrow(b, account, 1 if amount else 0)


class NoPermit(AccountsModel):
    """Never stores a permit (a Notify that forgets notifications nobody waited for)."""

    def _repay(self, b: StateBuilder, account: int, amount: int) -> None:
        had = b.permit[account]
        super()._repay(b, account, amount)
        if not had and b.permit[account]:
            b.permit[account] = False
            b.obs.pop()


MUTANTS: dict[str, type[AccountsModel]] = {
    "strict-check": StrictCheck,
    "forgets-notify": ForgetsNotify,
    "repays-on-dequeue": RepaysOnDequeue,
    "crash-leaks": CrashLeaks,
    "charges-first-account": ChargesFirstAccount,
    "counts-turns": CountsTurnsNotEvents,
    "no-permit": NoPermit,
}
