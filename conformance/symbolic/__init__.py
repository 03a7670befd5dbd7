"""Z3: the NET transition relation generated from the model's own rule code,
inductive invariants, bounded model checking and k-induction, the stalled-queue backlog,
credit synthesis, witnesses as explorer counterexamples, and ``prove`` (Z3-*)."""
