"""Explicit-state exploration: breadth-first search of a model's reachable states,
deadlock analysis (EXP-DEADLOCK), symmetry and safe-action reductions, the compiled fast
path for credit networks, shortest counterexamples, and the ``check`` summaries.

Owns the flat int-tuple encoding of NET states (:mod:`.encoding`), which is checked
against the readable rules of :mod:`creditflow.model.network`."""

from creditflow.conformance.explore.accounts import (
    AccountsOptions,
    accounts_summary,
    check_actor_graph,
)
from creditflow.conformance.explore.check import (
    CheckOptions,
    check_graph,
    exit_code,
    prepare_graph,
    summary,
)
from creditflow.conformance.explore.compare import cycle_comparison, slow_consumer_comparison
from creditflow.conformance.explore.compiled import CompiledNetwork
from creditflow.conformance.explore.counterexamples import Finding, Run, lasso_continuation
from creditflow.conformance.explore.deadlock import blocked_forever
from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    TAKE,
    CreditNetwork,
    State,
)
from creditflow.conformance.explore.explorer import (
    DEFAULT_MAX_STATES,
    NO_DEADLOCK,
    Progress,
    explore,
)
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import NetworkProperties, sink_path_counts
from creditflow.conformance.explore.symmetry import network_symmetry

__all__ = [
    "ACTION_SHIFT",
    "AccountsOptions",
    "BUMPS",
    "CREDIT_FROM",
    "CREDIT_TO",
    "CheckOptions",
    "CheckedNetwork",
    "CompiledNetwork",
    "CreditNetwork",
    "DATA",
    "DEFAULT_MAX_STATES",
    "DEFERRED",
    "EDGE_FIELDS",
    "Finding",
    "NO_DEADLOCK",
    "NetworkProperties",
    "Progress",
    "Run",
    "State",
    "TAKE",
    "accounts_summary",
    "blocked_forever",
    "check_actor_graph",
    "check_graph",
    "cycle_comparison",
    "exit_code",
    "explore",
    "lasso_continuation",
    "network_symmetry",
    "prepare_graph",
    "sink_path_counts",
    "slow_consumer_comparison",
    "summary",
]
