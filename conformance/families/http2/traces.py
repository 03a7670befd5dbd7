"""HTTP/2 run traces (TRACE-H2-RUN in spec/adapter-protocol-http2.md): the run a finding
came from — its choice (AD-H2-CONFORM-RUNS), the alphabet ops it executed and, per
adapter request, the request and what the adapter answered — as an ITF document that
``replay`` re-runs against any HTTP/2 adapter."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.conformance.families.http2.alphabet import OPS_BY_NAME, RUNS, H2Op

#: TRACE-H2-RUN: ``#meta.creditflow.model`` and its version
MODEL = "http2-run"
VERSION = 1


class H2TraceError(ValueError):
    """A file that is not an HTTP/2 run trace (one line naming it; exit 2)."""


@dataclass(frozen=True)
class H2Trace:
    """A loaded TRACE-H2-RUN: where it came from, its choice, its ops, its signature."""

    path: Path
    choice: Mapping[str, Any]
    ops: tuple[H2Op, ...]
    signature: str


def trace_document(
    adapter: str,
    choice: Mapping[str, Any],
    ops: Sequence[H2Op],
    steps: Sequence[Mapping[str, Any]],
    signature: str,
) -> dict[str, Any]:
    """TRACE-H2-RUN: ITF (``#meta``, ``vars``, ``states``); a state per adapter request."""
    return {
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "creditflow": {
                "model": MODEL,
                "version": VERSION,
                "family": "http2",
                "adapter": adapter,
                "run": dict(choice),
                "ops": [o.name for o in ops],
                "signature": signature,
            },
        },
        "vars": ["request", "answer"],
        "states": [
            {
                "#meta": {"index": i},
                "request": dict(s["request"]),
                "answer": {k: v for k, v in s.items() if k != "request"},
            }
            for i, s in enumerate(steps)
        ],
    }


def write_run_trace(
    folder: Path,
    adapter: str,
    choice: Mapping[str, Any],
    ops: Sequence[H2Op],
    steps: Sequence[Mapping[str, Any]],
    signature: str,
) -> Path:
    """Write the trace (FIND-TRACE: before the finding is reported); its name is the
    adapter and a digest of the run."""
    doc = trace_document(adapter, choice, ops, steps, signature)
    text = json.dumps(doc, indent=1, sort_keys=True)
    key = json.dumps([dict(choice), [o.name for o in ops], signature], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    folder.mkdir(parents=True, exist_ok=True)
    safe = adapter.replace("@", "-").replace("/", "_")
    path = folder / f"{safe}-h2-{digest}.itf.json"
    path.write_text(text + "\n")
    return path


def is_h2_trace(document: Mapping[str, Any]) -> bool:
    meta = document.get("#meta")
    return isinstance(meta, dict) and (meta.get("creditflow") or {}).get("model") == MODEL


def load_run_trace(path: Path) -> H2Trace:
    """TRACE-H2-RUN back: its run choice and ops; :class:`H2TraceError` naming the file."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise H2TraceError(f"{path}: not a JSON trace ({exc})") from None
    if not isinstance(doc, dict) or not is_h2_trace(doc):
        raise H2TraceError(f"{path}: not an HTTP/2 run trace (TRACE-H2-RUN)")
    meta = doc["#meta"]["creditflow"]
    if meta.get("version") != VERSION:
        raise H2TraceError(f"{path}: TRACE-H2-RUN version {meta.get('version')!r}, not {VERSION}")
    runs = {r["name"]: r for r in RUNS}
    run = meta.get("run")
    if not isinstance(run, dict) or run.get("name") not in runs:
        raise H2TraceError(f"{path}: unknown run {run!r} (runs: {', '.join(runs)})")
    names = meta.get("ops")
    if not isinstance(names, list) or not all(n in OPS_BY_NAME for n in names):
        raise H2TraceError(f"{path}: ops must be names of the HTTP/2 alphabet")
    return H2Trace(
        path,
        dict(runs[run["name"]]),
        tuple(OPS_BY_NAME[n] for n in names),
        str(meta.get("signature", "")),
    )
