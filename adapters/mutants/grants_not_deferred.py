"""Mutant grants-not-deferred: grants are sent even while blocked instead of being deferred
(CF-DEFER)."""

from __future__ import annotations

from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main


class Process(CreditFlowProcess):
    def grant(self, peer: str, amount: int) -> None:
        self.outbox.append((peer, amount))


class MutantAdapter(Adapter):
    name = "mutant grants-not-deferred"
    process_class = Process


if __name__ == "__main__":
    main(MutantAdapter)
