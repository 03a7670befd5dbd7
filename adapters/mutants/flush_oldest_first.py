"""Mutant flush-oldest-first: deferred grants are flushed oldest first instead of newest first
(CF-FLUSH)."""

from __future__ import annotations

from creditflow.adapters.mutants import serve_mutant
from creditflow.adapters.python_template import CreditFlowProcess


class Process(CreditFlowProcess):
    def unblock(self, peer: str) -> None:
        if peer in self.blocked:
            self.blocked.remove(peer)
        if not self.blocked:
            self.outbox.extend(reversed(self.deferred))
            self.deferred = []


if __name__ == "__main__":
    serve_mutant("flush-oldest-first", Process)
