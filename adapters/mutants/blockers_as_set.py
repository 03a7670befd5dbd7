"""Mutant blockers-as-set: blockers kept as a set: blocking twice on one peer counts once
(CF-MULTISET)."""

from __future__ import annotations

from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main


class Process(CreditFlowProcess):
    def block(self, peer: str) -> None:
        if peer not in self.blocked:
            self.blocked.insert(0, peer)


class MutantAdapter(Adapter):
    name = "mutant blockers-as-set"
    process_class = Process


if __name__ == "__main__":
    main(MutantAdapter)
