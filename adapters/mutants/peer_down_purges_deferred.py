"""Mutant peer-down-purges-deferred: peer_down also drops the grants deferred for the dead peer
(CF-PEER-DOWN keeps them)."""

from __future__ import annotations

from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main


class Process(CreditFlowProcess):
    def peer_down(self, peer: str) -> None:
        self.deferred = [(to, n) for to, n in self.deferred if to != peer]
        super().peer_down(peer)


class MutantAdapter(Adapter):
    name = "mutant peer-down-purges-deferred"
    process_class = Process


if __name__ == "__main__":
    main(MutantAdapter)
