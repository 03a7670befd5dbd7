"""Mutant flush-while-blocked: every unblock flushes the deferred grants, even while other
blockers remain (CF-FLUSH)."""

from __future__ import annotations

from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main


class Process(CreditFlowProcess):
    def unblock(self, peer: str) -> None:
        if peer in self.blocked:
            self.blocked.remove(peer)
        self.outbox.extend(self.deferred)
        self.deferred = []


class MutantAdapter(Adapter):
    name = "mutant flush-while-blocked"
    process_class = Process


if __name__ == "__main__":
    main(MutantAdapter)
