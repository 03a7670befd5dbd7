"""The ``reference`` adapter: the Python model itself, in-process, and the request
handler of its protocol server (``python -m creditflow.adapters.reference.server``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.conformance.differential.adapter import Adapter
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.protocol import (
    FAMILY,
    Observation,
    Op,
    canonical_body,
    op_from_request,
    spec_from_json,
)
from creditflow.model.credit.spec import CreditSpec

NAME = "creditflow reference model (model/credit/flow.py)"


class ReferenceAdapter(Adapter):
    """The model as an adapter, without a process boundary (to test the checker)."""

    name = "reference"

    def __init__(self) -> None:
        self.model = ProcessModel()
        self.info = {"ok": True, "name": NAME, "families": [FAMILY]}

    def reset(self, spec: CreditSpec) -> None:
        self.model.reset(spec)

    def run(self, ops: Sequence[Op]) -> list[Observation]:
        return [self.model.observe(op) for op in ops]


def handle_line(line: bytes, model: ProcessModel) -> str:
    """One request line to one response line (without the newline), for the protocol
    server: AD-HELLO, AD-RESET, the AD-OPS, AD-ID, AD-ERRORS."""
    import json

    try:
        req = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return json.dumps({"ok": False, "error": f"invalid JSON: {exc}"})
    if not isinstance(req, dict):
        return json.dumps({"ok": False, "error": "a request must be a JSON object"})
    head = f'{{"id":{json.dumps(req["id"], separators=(",", ":"))},' if "id" in req else "{"
    try:
        body = _handle(req, model)
    except ValueError as exc:
        body = f'"ok":false,"error":{json.dumps(str(exc))}'
    return head + body + "}"


def _handle(req: Mapping[str, Any], model: ProcessModel) -> str:
    op = req.get("op")
    if op == "hello":
        return f'"ok":true,"name":"{NAME}","families":["{FAMILY}"]'
    if op == "reset":
        model.reset(spec_from_json(req["spec"]) if "spec" in req else CreditSpec(400, 200))
        return '"ok":true'
    ps, emitted = model.apply(op_from_request(req))
    return '"ok":true,' + canonical_body(ps, emitted)
