"""A sweep file's rows computed in-process: every case in one batch, run by the worker,
each result joined to its case's static fields as the driver writes it (no trace)."""

from __future__ import annotations

from typing import Any

from creditflow.conformance.sweep.cases import expand
from creditflow.conformance.sweep.driver import make_batches
from creditflow.conformance.sweep.sweepfile import parse_sweep
from creditflow.conformance.sweep.worker import run_batch


def sweep_rows(text: str, where: str) -> list[dict[str, Any]]:
    """The rows of the sweep file ``text`` (``where``: the name its errors cite), as
    attempt 1 of run ``t``."""
    cases = expand(parse_sweep(text, where))[0]
    (batch,) = make_batches(cases, len(cases))
    by_id = {c.case_id: c for c in cases}
    rows = []
    for result in run_batch(batch):
        case = by_id[result["case_id"]]
        result.pop("trace_z")
        rows.append(
            {**case.static_fields(), **result, "trace_path": None, "run_id": "t", "attempt": 1}
        )
    return rows
