#!/usr/bin/env python3
"""A template adapter: a complete implementation of RabbitMQ 3.10.8's ``credit_flow``
speaking the creditflow adapter protocol (spec/adapter-protocol.md), in plain Python
with the standard library only.

Copy this file to wrap YOUR implementation: keep :func:`serve` (the protocol: one JSON
request per line on stdin, one JSON response per request on stdout, AD-TRANSPORT) and
replace :class:`CreditFlowProcess` with calls into your code, run inside the process
named by ``proc``. Then::

    creditflow conform --adapter-cmd "python3 my_adapter.py"
    creditflow replay corpus/ --adapter-cmd "python3 my_adapter.py"

It is written from the spec, independently of creditflow's model, and
``adapters/mutants/`` derive faulty variants from it (a method each).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

NAME = "creditflow python template (credit_flow 3.10.8)"
DEFAULT_SPEC = (400, 200)  # AD-RESET: RabbitMQ 3.10.8's default before the first reset
OPS_OF_FAMILY = ("send", "ack", "bump", "block", "unblock", "peer_down", "state")


class CreditFlowProcess:
    """The ``credit_flow`` part of one process dictionary (CF-STATE-VARS)."""

    def __init__(self, name: str, default_spec: tuple[int, int] = DEFAULT_SPEC) -> None:
        self.name = name
        self.default_spec = default_spec  # the spec of the last reset
        self.credit_from: dict[str, int] = {}
        self.credit_to: dict[str, int] = {}
        self.blocked: list[str] = []  # a multiset, newest first
        self.deferred: list[tuple[str, int]] = []  # newest first
        self.outbox: list[tuple[str, int]] = []  # grants sent during the current op

    # -- the module's API ----------------------------------------------------------------

    def send(self, peer: str, spec: tuple[int, int]) -> None:
        """CF-SEND: spend one credit; the 1 -> 0 step blocks on the peer."""
        credit = self.credit_from.get(peer, spec[0])
        if credit == 1:
            self.block(peer)
            self.credit_from[peer] = 0
        else:
            self.credit_from[peer] = credit - 1

    def ack(self, peer: str, spec: tuple[int, int]) -> None:
        """CF-ACK: one grant of MoreCreditAfter after every MoreCreditAfter-th ack."""
        left = self.credit_to.get(peer, spec[1])
        if left == 1:
            self.grant(peer, spec[1])
            self.credit_to[peer] = spec[1]
        else:
            self.credit_to[peer] = left - 1

    def grant(self, peer: str, amount: int) -> None:
        """CF-GRANT, CF-DEFER: a blocked process holds its grants back."""
        if self.blocked:
            self.deferred.insert(0, (peer, amount))
        else:
            self.outbox.append((peer, amount))

    def handle_bump(self, peer: str, amount: int) -> None:
        """CF-BUMP: unblock only on the crossing from <= 0 to > 0; an unknown peer
        starts from 0 (CF-BUMP-UNKNOWN)."""
        credit = self.credit_from.get(peer, 0)
        if credit <= 0 < credit + amount:
            self.unblock(peer)
        self.credit_from[peer] = credit + amount

    def block(self, peer: str) -> None:
        """CF-BLOCK: one more occurrence of the peer (CF-MULTISET)."""
        self.blocked.insert(0, peer)

    def unblock(self, peer: str) -> None:
        """CF-UNBLOCK, CF-FLUSH: drop one occurrence; when none is left, send every
        deferred grant, newest first."""
        if peer in self.blocked:
            self.blocked.remove(peer)
        if not self.blocked:
            self.outbox.extend(self.deferred)
            self.deferred = []

    def peer_down(self, peer: str) -> None:
        """CF-PEER-DOWN: unblock once, forget both credit entries; deferred grants to
        the peer stay."""
        self.unblock(peer)
        self.credit_from.pop(peer, None)
        self.credit_to.pop(peer, None)

    # -- the protocol's view -------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """AD-RESPONSE's ``state`` object."""
        return {
            "credit_from": dict(sorted(self.credit_from.items())),
            "credit_to": dict(sorted(self.credit_to.items())),
            "blocked": list(self.blocked),
            "deferred": [{"to": to, "amount": n} for to, n in self.deferred],
        }


class Adapter:
    """Every named process, and the protocol's ops on them (AD-OPS)."""

    name = NAME
    process_class = CreditFlowProcess
    #: The ops this implementation offers, declared in hello (AD-CAPABILITIES): drop
    #: the ones your implementation lacks (e.g. ``peer_down``); ``state`` is required.
    ops = OPS_OF_FAMILY

    def __init__(self) -> None:
        self.spec = DEFAULT_SPEC
        self.procs: dict[str, CreditFlowProcess] = {}

    def process(self, name: Any) -> CreditFlowProcess:
        if not isinstance(name, str) or not name:
            raise ValueError('"proc" must be a non-empty string')
        if name not in self.procs:
            self.procs[name] = self.process_class(name, self.spec)
        return self.procs[name]

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "hello":
            return {
                "ok": True,
                "name": self.name,
                "families": ["credit_flow"],
                "ops": list(self.ops),
            }
        if op == "reset":
            self.spec = spec_of(req.get("spec", list(DEFAULT_SPEC)))
            self.procs = {}
            return {"ok": True}
        if op not in OPS_OF_FAMILY:
            raise ValueError(f"unknown op {op!r}")
        if op not in self.ops:
            raise ValueError(f"op {op!r} is not offered by this implementation")
        proc = self.process(req.get("proc"))
        peer: Any = ""  # the state op names no peer
        if op != "state":
            peer = req.get("peer")
            if not isinstance(peer, str) or not peer:
                raise ValueError('"peer" must be a non-empty string')
        spec = spec_of(req["spec"]) if "spec" in req else self.spec
        proc.outbox = []
        if op == "send":
            proc.send(peer, spec)
        elif op == "ack":
            proc.ack(peer, spec)
        elif op == "bump":
            amount = req.get("amount")
            if not isinstance(amount, int) or isinstance(amount, bool):
                raise ValueError('"amount" must be an integer')
            proc.handle_bump(peer, amount)
        elif op == "block":
            proc.block(peer)
        elif op == "unblock":
            proc.unblock(peer)
        elif op == "peer_down":
            proc.peer_down(peer)
        emitted = [{"to": to, "amount": n} for to, n in proc.outbox]
        return {"ok": True, "state": proc.state(), "emitted": emitted}


def spec_of(value: Any) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError('"spec" must be [InitialCredit, MoreCreditAfter]')
    return value[0], value[1]


#: One compact encoder for every response, made once (``json.dumps`` with options
#: builds a new encoder per call).
encode = json.JSONEncoder(separators=(",", ":")).encode


def answer(adapter: Adapter, line: bytes) -> str:
    """One request line to one response line (AD-ID echoes ``id``; AD-ERRORS)."""
    try:
        req = json.loads(line.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is a ValueError too
        return encode({"ok": False, "error": f"invalid JSON: {exc}"})
    if not isinstance(req, dict):
        return encode({"ok": False, "error": "a request must be a JSON object"})
    try:
        resp = adapter.handle(req)
    except (ValueError, KeyError, TypeError) as exc:
        resp = {"ok": False, "error": str(exc)}
    if "id" in req:
        resp = {"id": req["id"], **resp}
    return encode(resp)


def serve(adapter: Adapter) -> None:
    """The protocol loop: answer every complete line of each chunk read from stdin,
    then write the answers at once (requests may be pipelined, AD-PIPELINE)."""
    pending = b""
    while chunk := os.read(0, 1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        out = "".join([answer(adapter, line) + "\n" for line in lines if line.strip()])
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()


def main(adapter_class: type[Adapter] = Adapter) -> None:
    serve(adapter_class())


if __name__ == "__main__":
    main()
