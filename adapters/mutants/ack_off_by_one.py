"""Mutant ack-off-by-one: the ack counter grants after MoreCreditAfter + 1 acks (tests 0
instead of 1, CF-ACK)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def ack(self, peer: str, spec: tuple[int, int]) -> None:
        left = self.credit_to.get(peer, spec[1])
        if left == 0:
            self.grant(peer, spec[1])
            self.credit_to[peer] = spec[1]
        else:
            self.credit_to[peer] = left - 1


if __name__ == "__main__":
    serve_mutant("ack-off-by-one", Process)
