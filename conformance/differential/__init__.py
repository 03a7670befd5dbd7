"""Differential testing of implementations against the model (AD-*): the adapter
interface and protocol values, the one JSON Lines subprocess transport, Hypothesis
machines, ``conform``, ``replay``, shrinking, per-process traces, the regression corpus,
and the accounts and paging comparisons. Adapters import from here, never the reverse."""

# Not re-exported: `corpus` (run as `python -m creditflow.conformance.differential.corpus`
# to regenerate the shipped corpus; importing it here would make runpy warn).

from creditflow.conformance.differential.accounts_protocol import (
    STEP_OPS,
    AdapterError,
    ReferenceAccountsAdapter,
    SubprocessAccountsAdapter,
    observations_json,
    request_for,
    state_json,
)
from creditflow.conformance.differential.adapter import (
    CRASH,
    HANG,
    MISSING,
    PROTOCOL,
    REFUSED,
    Adapter,
    AdapterFailure,
)
from creditflow.conformance.differential.conform import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_STEPS,
    PHASES,
    ConformOptions,
    ConformResult,
    KnownDivergence,
    run_conform,
)
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.paging_compare import (
    COMPARED,
    NOT_COMPARED,
    Comparison,
    comparison_document,
    view_of_probe,
    view_of_state,
)
from creditflow.conformance.differential.projection import ProjectedProcesses, step_ops
from creditflow.conformance.differential.protocol import (
    DEFAULT_SPEC,
    FAMILY,
    Observation,
    Op,
    ProcessView,
    ProtocolError,
    canonical_body,
    observation_from_response,
    op_from_request,
    parse_response,
    spec_from_json,
)
from creditflow.conformance.differential.replay import (
    DIVERGED,
    FAILED,
    NOT_OFFERED,
    PASS,
    XFAIL,
    XPASS,
    ReplayOutcome,
    replay_trace,
    replay_traces,
)
from creditflow.conformance.differential.report import conform_json, divergence_lines, replay_json
from creditflow.conformance.differential.session import DifferentialRun, check_trace, model_trace
from creditflow.conformance.differential.shrink import shrink_sequence
from creditflow.conformance.differential.subprocess import SubprocessAdapter
from creditflow.conformance.differential.traces import (
    PROCESS_VARS,
    SUFFIX,
    load_trace,
    trace_files,
    write_process_trace,
)

__all__ = [
    "Adapter",
    "AdapterError",
    "AdapterFailure",
    "COMPARED",
    "CRASH",
    "Comparison",
    "ConformOptions",
    "ConformResult",
    "KnownDivergence",
    "DEFAULT_MAX_EXAMPLES",
    "DEFAULT_SPEC",
    "DEFAULT_STEPS",
    "DIVERGED",
    "DifferentialRun",
    "FAILED",
    "NOT_OFFERED",
    "FAMILY",
    "HANG",
    "MISSING",
    "NOT_COMPARED",
    "Observation",
    "Op",
    "PASS",
    "PHASES",
    "PROCESS_VARS",
    "PROTOCOL",
    "ProcessModel",
    "ProcessView",
    "ProjectedProcesses",
    "ProtocolError",
    "REFUSED",
    "ReferenceAccountsAdapter",
    "ReplayOutcome",
    "STEP_OPS",
    "SUFFIX",
    "SubprocessAccountsAdapter",
    "SubprocessAdapter",
    "XFAIL",
    "XPASS",
    "canonical_body",
    "check_trace",
    "comparison_document",
    "conform_json",
    "divergence_lines",
    "load_trace",
    "model_trace",
    "observation_from_response",
    "observations_json",
    "op_from_request",
    "parse_response",
    "replay_json",
    "replay_trace",
    "replay_traces",
    "request_for",
    "run_conform",
    "shrink_sequence",
    "spec_from_json",
    "state_json",
    "step_ops",
    "trace_files",
    "view_of_probe",
    "view_of_state",
    "write_process_trace",
]
