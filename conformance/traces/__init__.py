"""Counterexample traces and pictures: ITF documents of credit networks and of the
accounts and alarm models (TRACE-*), DOT/SVG pictures of network states
(EXP-PICTURE), and the steps of a trace as data (TRACE-STEPS)."""

from creditflow.conformance.traces.models import write_model_trace
from creditflow.conformance.traces.network import (
    ACTION_VAR,
    NETWORK_MODEL,
    NETWORK_VERSION,
    PICKS_VAR,
    TraceReplayError,
    network_trace,
    replay_network_document,
    replay_network_trace,
    run_states,
    write_network_trace,
)
from creditflow.conformance.traces.pictures import deadlock_dot, finding_dot, write_picture
from creditflow.conformance.traces.steps import (
    Effect,
    Step,
    StepRun,
    Witness,
    generic_steps,
    network_witness,
)

__all__ = [
    "ACTION_VAR",
    "Effect",
    "NETWORK_MODEL",
    "NETWORK_VERSION",
    "PICKS_VAR",
    "Step",
    "StepRun",
    "TraceReplayError",
    "Witness",
    "deadlock_dot",
    "finding_dot",
    "generic_steps",
    "network_trace",
    "network_witness",
    "replay_network_document",
    "replay_network_trace",
    "run_states",
    "write_model_trace",
    "write_network_trace",
    "write_picture",
]
