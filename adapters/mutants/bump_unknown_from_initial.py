"""Mutant bump-unknown-from-initial: a bump from an unknown peer starts from InitialCredit
instead of 0 (CF-BUMP-UNKNOWN)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def handle_bump(self, peer: str, amount: int) -> None:
        if peer not in self.credit_from:
            self.credit_from[peer] = self.default_spec[0]
        super().handle_bump(peer, amount)


if __name__ == "__main__":
    serve_mutant("bump-unknown-from-initial", Process)
