"""Mutant peer-down-keeps-credit: peer_down forgets credit_to but keeps the credit_from entry
of the dead peer (CF-PEER-DOWN)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def peer_down(self, peer: str) -> None:
        self.unblock(peer)
        self.credit_to.pop(peer, None)


if __name__ == "__main__":
    serve_mutant("peer-down-keeps-credit", Process)
