"""Mutant flush-while-blocked: every unblock flushes the deferred grants, even while other
blockers remain (CF-FLUSH)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def unblock(self, peer: str) -> None:
        if peer in self.blocked:
            self.blocked.remove(peer)
        self.outbox.extend(self.deferred)
        self.deferred = []


if __name__ == "__main__":
    serve_mutant("flush-while-blocked", Process)
