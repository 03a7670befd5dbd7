"""Z3: the NET transition relation generated from the model's own rule code,
inductive invariants, bounded model checking and k-induction, the stalled-queue backlog,
credit synthesis, witnesses as explorer counterexamples, and ``prove`` (Z3-*)."""

import z3

from creditflow.conformance.runtime import signals

# SIG-Z3: Z3 must not catch SIGINT itself (it would return "unknown" as if the solver had
# given up, and the command would go on); the signal policy interrupts the solver instead.
z3.set_param("ctrl_c", False)
signals.on_interrupt(lambda: z3.main_ctx().interrupt())
