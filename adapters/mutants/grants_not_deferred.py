"""Mutant grants-not-deferred: grants are sent even while blocked instead of being deferred
(CF-DEFER)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def grant(self, peer: str, amount: int) -> None:
        self.outbox.append((peer, amount))


if __name__ == "__main__":
    serve_mutant("grants-not-deferred", Process)
