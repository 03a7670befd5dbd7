"""The adapter protocol's values: operations, observations and their JSON forms
(spec/adapter-protocol.md, AD-*).

An :class:`Op` is one request of family ``credit_flow`` (AD-OPS); an
:class:`Observation` is what a process op answers: the acting process's state and the
grants it sent (AD-RESPONSE). :func:`compare` is the driver's comparison (AD-COMPARE).
Nothing here does I/O.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from creditflow.conformance.inputs.reading import InputError, parse_json
from creditflow.model.credit import flow as cf
from creditflow.model.credit.spec import CreditSpec

FAMILY = "credit_flow"
#: AD-OPS: the process operations of family credit_flow and the arguments each takes.
OP_ARGS: dict[str, tuple[str, ...]] = {
    "send": ("peer",),
    "ack": ("peer",),
    "bump": ("peer", "amount"),
    "block": ("peer",),
    "unblock": ("peer",),
    "peer_down": ("peer",),
    "state": (),
}
OP_KINDS = tuple(OP_ARGS)
#: AD-RESET: the default credit spec before the first ``reset`` (RabbitMQ 3.10.8's).
DEFAULT_SPEC = CreditSpec(400, 200)

Grant = tuple[str, int]


class ProtocolError(ValueError):
    """A response that breaks the protocol (AD-FAILURE); the message says how."""


@dataclass(frozen=True, slots=True)
class Op:
    """One process operation (AD-OPS): ``kind`` executed inside ``proc``."""

    kind: str
    proc: str
    peer: str | None = None
    amount: int | None = None
    spec: CreditSpec | None = None

    def __post_init__(self) -> None:
        if self.kind not in OP_ARGS:
            raise ValueError(f"unknown op {self.kind!r}")
        if not isinstance(self.proc, str) or not self.proc:
            raise ValueError("an op needs a process name")
        if "peer" in OP_ARGS[self.kind] and (not isinstance(self.peer, str) or not self.peer):
            raise ValueError(f"{self.kind} needs a peer name")
        if self.kind == "bump" and not isinstance(self.amount, int):
            raise ValueError("bump needs an integer amount")

    def request(self) -> dict[str, Any]:
        """The op as a protocol request object (without ``id``)."""
        req: dict[str, Any] = {"op": self.kind, "proc": self.proc}
        if self.peer is not None:
            req["peer"] = self.peer
        if self.amount is not None:
            req["amount"] = self.amount
        if self.spec is not None:
            req["spec"] = [self.spec.initial, self.spec.more_after]
        return req

    def line(self, request_id: int | None = None) -> bytes:
        """The request as one JSON line (AD-TRANSPORT), with ``id`` first if given."""
        head = "{" if request_id is None else f'{{"id":{request_id},'
        body = _request_body(self.kind, self.proc, self.peer, self.amount, self.spec)
        return f"{head}{body}".encode()

    def __str__(self) -> str:
        args = [self.proc]
        if self.peer is not None:
            args.append(self.peer)
        if self.amount is not None:
            args.append(str(self.amount))
        text = f"{self.kind}({', '.join(args)})"
        return text + (f" spec {self.spec}" if self.spec is not None else "")


@lru_cache(maxsize=8192)
def _request_body(
    kind: str, proc: str, peer: str | None, amount: int | None, spec: CreditSpec | None
) -> str:
    e = json_name
    text = f'"op":"{kind}","proc":{e(proc)}'
    if peer is not None:
        text += f',"peer":{e(peer)}'
    if amount is not None:
        text += f',"amount":{amount}'
    if spec is not None:
        text += f',"spec":[{spec.initial},{spec.more_after}]'
    return text + "}\n"


def op_from_request(req: Mapping[str, Any]) -> Op:
    """Parse a request object into an :class:`Op`; ``ValueError`` says what is wrong."""
    kind = req.get("op")
    if kind not in OP_ARGS:
        raise ValueError(f"unknown op {kind!r}")
    spec = req.get("spec")
    if spec is not None:
        spec = spec_from_json(spec)
    amount = req.get("amount")
    if kind == "bump" and (not isinstance(amount, int) or isinstance(amount, bool)):
        raise ValueError('"amount" must be an integer')
    return Op(kind, req.get("proc"), req.get("peer"), amount, spec)  # type: ignore[arg-type]  # proc unchecked: the model keys processes by any value


def spec_from_json(value: Any) -> CreditSpec:
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError('"spec" must be [InitialCredit, MoreCreditAfter] (two integers)')
    return CreditSpec(int(value[0]), int(value[1]))


@dataclass(frozen=True, slots=True)
class ProcessView:
    """The protocol's ``state`` object (AD-RESPONSE): credit maps, the multiset of
    blockers as listed (newest first), the deferred grants newest first."""

    credit_from: Mapping[str, int] = field(default_factory=dict)
    credit_to: Mapping[str, int] = field(default_factory=dict)
    blocked: tuple[str, ...] = ()
    deferred: tuple[Grant, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "credit_from": dict(sorted(self.credit_from.items())),
            "credit_to": dict(sorted(self.credit_to.items())),
            "blocked": list(self.blocked),
            "deferred": grants_to_json(self.deferred),
        }


@dataclass(frozen=True, slots=True)
class Observation:
    """The answer to a process op: the acting process's state after it and the
    ``bump_credit`` messages it sent during it, in send order (AD-RESPONSE)."""

    state: ProcessView
    emitted: tuple[Grant, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state.to_json(), "emitted": grants_to_json(self.emitted)}


def grants_to_json(grants: Sequence[Grant]) -> list[dict[str, Any]]:
    return [{"to": to, "amount": amount} for to, amount in grants]


def view_of(ps: cf.ProcessCredit) -> ProcessView:
    """AD-RESPONSE of a model process (``blocked_at`` is time-dependent and left out)."""
    return ProcessView(
        dict(ps.credit_from), dict(ps.credit_to), tuple(ps.blocked), tuple(ps.deferred)
    )


@lru_cache(maxsize=4096)
def json_name(name: str) -> str:
    """A process name as a JSON string (cached: names repeat)."""
    return json.dumps(name)


_MAP_JSON: dict[int, tuple[Mapping[str, int], str]] = {}


def _int_map_json(mapping: Mapping[str, int]) -> str:
    """A credit map as sorted compact JSON. The model's states share unchanged maps (it
    never mutates one), so the text is cached by identity; the cache holds the map
    itself, so an id cannot be reused while its entry lives."""
    if not mapping:
        return "{}"
    hit = _MAP_JSON.get(id(mapping))
    if hit is not None and hit[0] is mapping:
        return hit[1]
    e = json_name
    text = "{" + ",".join([f"{e(k)}:{mapping[k]}" for k in sorted(mapping)]) + "}"
    if len(_MAP_JSON) > 512:
        _MAP_JSON.clear()
    _MAP_JSON[id(mapping)] = (mapping, text)
    return text


def _grants_json(grants: Sequence[Grant]) -> str:
    if not grants:
        return "[]"
    e = json_name
    return "[" + ",".join([f'{{"to":{e(t)},"amount":{a}}}' for t, a in grants]) + "]"


def canonical_body(ps: cf.ProcessCredit, emitted: Sequence[Grant]) -> str:
    """The compact JSON of a process op's response after ``"ok":true`` with every map's
    keys sorted: the form the bundled adapters print, so that a driver can accept an
    identical response without parsing it (AD-COMPARE's fast path)."""
    blocked = ",".join([json_name(p) for p in ps.blocked])
    return (
        f'"state":{{"credit_from":{_int_map_json(ps.credit_from)},'
        f'"credit_to":{_int_map_json(ps.credit_to)},"blocked":[{blocked}],'
        f'"deferred":{_grants_json(ps.deferred)}}},"emitted":{_grants_json(emitted)}'
    )


# -- responses ---------------------------------------------------------------------------


def parse_response(line: bytes | str, request_id: int | None = None) -> dict[str, Any]:
    """One response line as an object, checking ``ok`` and the echoed ``id`` (AD-ID)."""
    try:
        # AD-TRANSPORT-PARSE through the one input layer (IN-DEPTH, IN-INT, IN-FINITE,
        # IN-DUPLICATE): not UTF-8, not JSON, nested too deeply, an integer too long, a
        # NaN or a duplicate key is a protocol error, never a crash of the driver.
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        resp = parse_json(text, "response")
    except InputError as exc:
        raise ProtocolError(f"response is not JSON ({exc.problem}): {_clip(line)}") from None
    except ValueError as exc:  # UnicodeDecodeError
        raise ProtocolError(f"response is not JSON ({str(exc)[:200]}): {_clip(line)}") from None
    if not isinstance(resp, dict):
        raise ProtocolError(f"response is not a JSON object: {_clip(line)}")
    if not isinstance(resp.get("ok"), bool):
        raise ProtocolError(f'response lacks a boolean "ok": {_clip(line)}')
    if request_id is not None and resp.get("id") != request_id:
        raise ProtocolError(
            f"response id {resp.get('id')!r} does not echo request id {request_id} "
            f"(responses out of step?): {_clip(line)}"
        )
    return resp


def observation_from_response(resp: Mapping[str, Any]) -> Observation:
    """Validate a successful process-op response (AD-RESPONSE) and read it."""
    state = resp.get("state")
    if not isinstance(state, dict):
        raise ProtocolError('response lacks a "state" object')
    view = ProcessView(
        _int_map(state.get("credit_from"), "state.credit_from"),
        _int_map(state.get("credit_to"), "state.credit_to"),
        tuple(_names(state.get("blocked"), "state.blocked")),
        _grants(state.get("deferred"), "state.deferred"),
    )
    return Observation(view, _grants(resp.get("emitted"), "emitted"))


def _int_map(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, dict) or not all(_is_int(v) for v in value.values()):
        raise ProtocolError(f'"{where}" must be an object of integers')
    return dict(value)


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProtocolError(f'"{where}" must be a list of process names')
    return value


def _grants(value: Any, where: str) -> tuple[Grant, ...]:
    if not isinstance(value, list):
        raise ProtocolError(f'"{where}" must be a list of {{"to", "amount"}} objects')
    out = []
    for g in value:
        if (
            not isinstance(g, dict)
            or not isinstance(g.get("to"), str)
            or not _is_int(g.get("amount"))
        ):
            raise ProtocolError(f'"{where}" must be a list of {{"to", "amount"}} objects')
        out.append((g["to"], g["amount"]))
    return tuple(out)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clip(line: bytes | str, limit: int = 160) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.rstrip("\n")
    return text if len(text) <= limit else text[:limit] + "…"


# -- comparison --------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldDiff:
    """One field on which model and implementation disagree."""

    field: str
    model: Any
    implementation: Any


def compare(expected: Observation, actual: Observation) -> list[FieldDiff]:
    """AD-COMPARE: maps as maps, ``blocked`` as a multiset, ``deferred`` and ``emitted``
    as ordered lists. An empty list means the two agree."""
    diffs = []
    e, a = expected.state, actual.state
    if dict(e.credit_from) != dict(a.credit_from):
        diffs.append(FieldDiff("credit_from", dict(e.credit_from), dict(a.credit_from)))
    if dict(e.credit_to) != dict(a.credit_to):
        diffs.append(FieldDiff("credit_to", dict(e.credit_to), dict(a.credit_to)))
    if Counter(e.blocked) != Counter(a.blocked):
        diffs.append(FieldDiff("blocked", list(e.blocked), list(a.blocked)))
    if tuple(e.deferred) != tuple(a.deferred):
        diffs.append(FieldDiff("deferred", list(e.deferred), list(a.deferred)))
    if tuple(expected.emitted) != tuple(actual.emitted):
        diffs.append(FieldDiff("emitted", list(expected.emitted), list(actual.emitted)))
    return diffs
