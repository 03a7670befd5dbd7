"""Explicit-state exploration: breadth-first search of a model's reachable states,
deadlock analysis (EXP-DEADLOCK), symmetry and safe-action reductions, the compiled fast
path for credit networks, shortest counterexamples, and the ``check`` summaries.

Owns the flat int-tuple encoding of NET states (:mod:`.encoding`), which is checked
against the readable rules of :mod:`creditflow.model.network`."""
