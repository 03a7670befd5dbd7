"""Mutant block-off-by-one: off-by-one in the block threshold: send blocks when credit goes 2
-> 1, not 1 -> 0 (CF-SEND)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def send(self, peer: str, spec: tuple[int, int]) -> None:
        credit = self.credit_from.get(peer, spec[0])
        if credit == 2:
            self.block(peer)
        self.credit_from[peer] = credit - 1


if __name__ == "__main__":
    serve_mutant("block-off-by-one", Process)
