"""Readable renderings of conform and replay divergences (no I/O); the JSON renderer of
each result is its ``to_json`` method (OUT-TYPED-RESULT)."""

from __future__ import annotations

from typing import Any

from creditflow.conformance.differential.protocol import Observation
from creditflow.conformance.differential.session import Divergence, ProcessTrace


def _value(field: str, value: Any) -> str:
    """``{B:5}`` for maps, ``[B, B]`` for blockers, ``[C:1, B:1]`` for grants."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}:{v}" for k, v in sorted(value.items())) + "}"
    if field in ("deferred", "emitted"):
        return "[" + ", ".join(f"{to}:{amount}" for to, amount in value) + "]"
    return "[" + ", ".join(str(v) for v in value) + "]"


def _fields(obs: Observation) -> dict[str, Any]:
    s = obs.state
    return {
        "credit_from": dict(s.credit_from),
        "credit_to": dict(s.credit_to),
        "blocked": list(s.blocked),
        "deferred": list(s.deferred),
        "emitted": list(obs.emitted),
    }


def divergence_lines(divergence: Divergence, trace: ProcessTrace, title: str = "") -> list[str]:
    """The trace up to the divergence, then model vs implementation at that op."""
    n = len(trace.steps)
    lines = [title or f"diverging trace: {n} op{'s' * (n != 1)}, default spec {trace.spec}"]
    for i, op in enumerate(trace.ops, start=1):
        marker = ">" if i == divergence.index + 1 else " "
        lines.append(f"  {marker}{i:4}  {op}")
    lines.append(
        f"after op {divergence.index + 1} ({divergence.op}), process {divergence.op.proc}:"
    )
    model, impl = _fields(divergence.model), _fields(divergence.implementation)
    differing = [d.field for d in divergence.diffs]
    width = max([len("model")] + [len(_value(f, model[f])) for f in differing])
    lines.append(f"    {'field':12} {'model':{width}}  implementation")
    for f in differing:
        lines.append(f"    {f:12} {_value(f, model[f]):{width}}  {_value(f, impl[f])}")
    same = [f"{f} {_value(f, model[f])}" for f in model if f not in differing]
    if same:
        lines.append("    (both: " + ", ".join(same) + ")")
    return lines
