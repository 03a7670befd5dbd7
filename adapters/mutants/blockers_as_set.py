"""Mutant blockers-as-set: blockers kept as a set: blocking twice on one peer counts once
(CF-MULTISET)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def block(self, peer: str) -> None:
        if peer not in self.blocked:
            self.blocked.insert(0, peer)


if __name__ == "__main__":
    serve_mutant("blockers-as-set", Process)
