"""Mutant unblock-on-wrong-crossing: a bump unblocks when credit reaches 0, not only when it
crosses above 0 (CF-BUMP)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def handle_bump(self, peer: str, amount: int) -> None:
        credit = self.credit_from.get(peer, 0)
        if credit <= 0 <= credit + amount:
            self.unblock(peer)
        self.credit_from[peer] = credit + amount


if __name__ == "__main__":
    serve_mutant("unblock-on-wrong-crossing", Process)
