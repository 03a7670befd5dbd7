"""Counterexample traces (ITF, TRACE-ITF) of the accounts and alarm models.

The run is rendered with the system's own ``render``/``action_record`` (as for credit
networks, :func:`creditflow.conformance.traces.network.run_states`); ``#meta.creditflow`` names
the model, the property and what was checked, so the trace explains itself.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.inputs.itf import trace_document, write_document
from creditflow.conformance.traces.network import ACTION_VAR, PICKS_VAR, run_states
from creditflow.model.system import TransitionSystem


def model_trace(
    system: TransitionSystem,
    finding: Finding,
    model: str,
    subject: Mapping[str, Any],
    source: str,
) -> dict[str, Any]:
    run = finding.path + finding.continuation
    variables = [*system.render(finding.path[0][1]).keys(), ACTION_VAR, PICKS_VAR]
    meta = {
        "source": source,
        "description": f"creditflow counterexample for {finding.property_id} ({finding.kind}), "
        f"created {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        "creditflow": {
            "model": model,
            "version": 1,
            **subject,
            "property": finding.property_id,
            "kind": finding.kind,
            "processes": list(finding.processes),
            "detail": finding.detail,
            "length": finding.length,
        },
    }
    return trace_document(variables, run_states(system, run), meta, loop=finding.loop_start)


def write_model_trace(
    system: TransitionSystem,
    finding: Finding,
    path: str | Path,
    model: str,
    subject: Mapping[str, Any],
    source: str,
) -> Path:
    """Write the counterexample before anything reports it (exit codes come after)."""
    return write_document(model_trace(system, finding, model, subject, source), path)
