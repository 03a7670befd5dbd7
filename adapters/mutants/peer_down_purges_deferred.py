"""Mutant peer-down-purges-deferred: peer_down also drops the grants deferred for the dead peer
(CF-PEER-DOWN keeps them)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def peer_down(self, peer: str) -> None:
        self.deferred = [(to, n) for to, n in self.deferred if to != peer]
        super().peer_down(peer)


if __name__ == "__main__":
    serve_mutant("peer-down-purges-deferred", Process)
