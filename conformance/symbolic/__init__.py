"""Z3: the NET transition relation generated from the model's own rule code,
inductive invariants, bounded model checking and k-induction, the stalled-queue backlog,
credit synthesis, witnesses as explorer counterexamples, and ``prove`` (Z3-*)."""

import z3

from creditflow.conformance.runtime import signals
from creditflow.conformance.symbolic.backlog import prove_stalled_backlog, stalled_chain
from creditflow.conformance.symbolic.bmc import BmcOptions, bounded_check, k_induction
from creditflow.conformance.symbolic.encoding import LEMMA_FORMS, Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import (
    PROVED,
    check_valid,
    derive_condition,
    edge_lemma_obligations,
    houdini,
    prove_dead_set_sound,
    prove_deadlock_freedom,
    prove_termination,
    safe_condition,
)
from creditflow.conformance.symbolic.prove import (
    Counterexample,
    ProveOptions,
    ProveReport,
    exit_code,
    prove_graph,
    summary,
)
from creditflow.conformance.symbolic.settle import (
    DEFAULT_SETTLE_SECONDS,
    Settlement,
    apply_settlement,
    settle,
    settle_open_check,
)
from creditflow.conformance.symbolic.symbolic import Sym, SymbolicUseError, all_paths, merge
from creditflow.conformance.symbolic.synthesis import SynthesisOptions, synthesize
from creditflow.conformance.symbolic.witness import (
    EncodingDriftError,
    finding_from_witness,
    map_witness,
)

# SIG-Z3: Z3 must not catch SIGINT itself (it would return "unknown" as if the solver had
# given up, and the command would go on); the signal policy interrupts the solver instead.
z3.set_param("ctrl_c", False)
signals.on_interrupt(lambda: z3.main_ctx().interrupt())

__all__ = [
    "BmcOptions",
    "Counterexample",
    "Credits",
    "EncodingDriftError",
    "LEMMA_FORMS",
    "NetworkEncoding",
    "PROVED",
    "ProveOptions",
    "ProveReport",
    "Sym",
    "SymbolicUseError",
    "SynthesisOptions",
    "all_paths",
    "bounded_check",
    "check_valid",
    "derive_condition",
    "edge_lemma_obligations",
    "exit_code",
    "finding_from_witness",
    "houdini",
    "k_induction",
    "map_witness",
    "merge",
    "prove_dead_set_sound",
    "prove_deadlock_freedom",
    "prove_graph",
    "prove_stalled_backlog",
    "prove_termination",
    "safe_condition",
    "stalled_chain",
    "summary",
    "DEFAULT_SETTLE_SECONDS",
    "Settlement",
    "apply_settlement",
    "settle",
    "settle_open_check",
    "synthesize",
]
