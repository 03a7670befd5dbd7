"""Mutant flush-oldest-first: deferred grants are flushed oldest first instead of newest first
(CF-FLUSH)."""

from __future__ import annotations

from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main


class Process(CreditFlowProcess):
    def unblock(self, peer: str) -> None:
        if peer in self.blocked:
            self.blocked.remove(peer)
        if not self.blocked:
            self.outbox.extend(reversed(self.deferred))
            self.deferred = []


class MutantAdapter(Adapter):
    name = "mutant flush-oldest-first"
    process_class = Process


if __name__ == "__main__":
    main(MutantAdapter)
