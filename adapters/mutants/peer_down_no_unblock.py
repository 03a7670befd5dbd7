"""Mutant peer-down-no-unblock: peer_down forgets the dead peer but does not unblock on it: the
CF4 regression (CF-PEER-DOWN)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def peer_down(self, peer: str) -> None:
        self.credit_from.pop(peer, None)
        self.credit_to.pop(peer, None)


if __name__ == "__main__":
    serve_mutant("peer-down-no-unblock", Process)
