"""Readable and JSON renderings of conform and replay results (no I/O)."""

from __future__ import annotations

from typing import Any

from creditflow.conformance.differential.conform import ConformResult
from creditflow.conformance.differential.protocol import Observation
from creditflow.conformance.differential.replay import ReplayReport
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


def conform_json(result: ConformResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verdict": result.verdict,
        "exit_code": result.exit_code,
        "adapter": result.adapter,
        "implementation": result.implementation,
        "seed": result.seed,
        "examples": result.examples,
        "ops": result.ops,
        "seconds": round(result.seconds, 3),
        "phases": [
            {"name": p.name, "examples": p.examples, "ops": p.ops, "seconds": round(p.seconds, 3)}
            for p in result.phases
        ],
        "trace": str(result.trace_path) if result.trace_path else None,
        "found_by": result.found_by or None,
        "notes": result.notes,
        "implementation_info": result.info.get("implementation"),
        "ops_not_exercised": list(result.unexercised),
        "expected_divergences": [
            {
                "trace": k.name,
                "why": k.reason,
                "op": k.op,
                "fields": sorted(k.fields),
                "runs": result.expected_hits.get(k.name, 0),
            }
            for k in result.known
        ],
        "unexpected_passes": list(result.unexpected_passes),
        "expectations_not_run": {k: list(v) for k, v in result.known_not_run.items()},
    }
    if result.divergence is not None:
        d = result.divergence
        out["divergence"] = {
            "op_index": d.index + 1,
            "op": d.op.request(),
            "fields": [f.field for f in d.diffs],
            "model": d.model.to_json(),
            "implementation": d.implementation.to_json(),
            "ops": [op.request() for op in result.trace.ops] if result.trace else [],
            # AD-RESET: the default spec the ops run under (send/ack without "spec").
            "spec": (
                [result.trace.spec.initial, result.trace.spec.more_after] if result.trace else None
            ),
        }
    if result.failure is not None:
        out["failure"] = {"kind": result.failure.kind, "message": str(result.failure)}
    return out


def replay_json(report: ReplayReport) -> dict[str, Any]:
    traces = []
    for o in report.outcomes:
        entry: dict[str, Any] = {
            "trace": str(o.trace.path),
            "kind": o.trace.kind,
            "ops": len(o.trace.trace.steps),
            "status": o.status,
        }
        if o.reason:
            entry["expected"] = o.reason
        if o.divergence is not None:
            entry["divergence"] = {
                "op_index": o.divergence.index + 1,
                "op": o.divergence.op.request(),
                "fields": [f.field for f in o.divergence.diffs],
                "model": o.divergence.model.to_json(),
                "implementation": o.divergence.implementation.to_json(),
            }
        if o.failure is not None:
            entry["failure"] = str(o.failure)
        if o.shrunk is not None:
            entry["shrunk"] = str(o.shrunk)
        if o.missing_ops:
            entry["ops_not_offered"] = list(o.missing_ops)
        traces.append(entry)
    out: dict[str, Any] = {
        "adapter": report.adapter,
        "implementation": report.implementation,
        "exit_code": report.exit_code,
        "traces": traces,
        "counts": {
            s: sum(1 for o in report.outcomes if o.status == s)
            for s in ("pass", "diverged", "xfail", "xpass", "adapter-failure", "not-offered")
        },
    }
    if report.failure is not None:
        out["failure"] = str(report.failure)
    return out
