"""Mutant negative-credit-clamped: credit never goes below zero: sending while blocked keeps it
at 0 (CF-NEGATIVE)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def send(self, peer: str, spec: tuple[int, int]) -> None:
        credit = self.credit_from.get(peer, spec[0])
        if credit == 1:
            self.block(peer)
        self.credit_from[peer] = max(credit - 1, 0)


if __name__ == "__main__":
    serve_mutant("negative-credit-clamped", Process)
