"""A template for an adapter of the ``amqp`` family (AD-AMQ-OPS, AD-CMD): copy this
file, replace :class:`Library` with calls into your AMQP 1.0 implementation, and run

    creditflow conform --adapter-cmd "python3 amqp_template.py" --seed 1

The whole protocol is in this file: one JSON request per stdin line, one answer per
stdout line (AD-AMQ-TRANSPORT); ``hello`` names the ``amqp`` family, the ops, the
settings and the policy the implementation follows (AD-AMQ-HELLO, AD-AMQ-POLICY);
every other answer carries the frames put on the wire meanwhile and each end's state
(AD-AMQ-REPLY). As shipped, :class:`Library` is the pure-Python reference
(``creditflow.adapters.amqp.reference``, AD-AMQ-REFERENCE), so the template is
conformant out of the box (``tests/test_conform_families.py`` runs it through
``conform --adapter-cmd`` and ``replay --adapter-cmd``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from creditflow.adapters.amqp.reference import Reference

NAME = "amqp-template"
VERSION = "0.1.0"
#: AD-AMQ-OPS: the ops your implementation offers (leave out those it has not).
OPS = ["reset", "begin", "attach", "flow", "drain", "transfer", "drained", "settle", "state"]
#: AD-AMQ-SETTINGS: the sizes ``conform`` may choose per run, with their defaults.
SETTINGS = {"window": 4, "threshold": 1, "message_frames": 1, "initial_delivery_count": 0}


def policy(settings: dict[str, int]) -> dict[str, Any]:
    """AD-AMQ-POLICY: what your implementation does where AMQP 1.0 leaves a choice:
    here credit granted by hand and a session window renewed at a threshold."""
    return {
        "credit": {"policy": "manual"},
        "sender_credit": {"formula": "serial"},
        "window": {
            "policy": "fixed",
            "window": settings["window"],
            "threshold": settings["threshold"],
        },
    }


class Library:
    """Both ends of one connection, pumped until nothing moves (AD-AMQ-QUIESCE).
    Replace the body of each method with your implementation's calls."""

    def __init__(self, settings: dict[str, int]) -> None:
        self.impl = Reference(settings, None)

    def op(self, request: dict[str, Any]) -> dict[str, Any]:
        """Apply one op (``begin``, ``attach``, ``flow``, …); raise to refuse it."""
        return self.impl.op(request)

    def frames(self) -> list[dict[str, Any]]:
        """The frames sent since the last call (AD-AMQ-REPLY)."""
        frames, self.impl.frames = self.impl.frames, []
        return frames

    def state(self) -> dict[str, Any]:
        """Each end's own view (AD-AMQ-REPLY ``state``)."""
        return self.impl.state()


def handle(library: Library | None, req: dict[str, Any]) -> tuple[Library | None, dict[str, Any]]:
    """One request; the library after it and the answer."""
    op = req.get("op")
    if op == "hello":  # AD-AMQ-HELLO
        return library, {
            "ok": True,
            "name": NAME,
            "version": VERSION,
            "families": ["amqp"],
            "ops": OPS,
            "settings": SETTINGS,
            "policy": policy(SETTINGS),
        }
    if op not in OPS:  # AD-ERRORS: refuse what you do not know, and go on
        return library, {"ok": False, "error": f"unknown op {op!r}"}
    if op == "reset":  # AD-AMQ-RESET: a fresh connection with these sizes
        given = req.get("settings") or {}
        unknown = sorted(set(given) - set(SETTINGS))
        if unknown:
            return library, {"ok": False, "error": f"unknown settings: {', '.join(unknown)}"}
        settings = {**SETTINGS, **{k: int(v) for k, v in given.items()}}
        library = Library(settings)
        return library, {
            "ok": True,
            "policy": policy(settings),
            "frames": library.frames(),
            "state": library.state(),
        }
    if library is None:
        return library, {"ok": False, "error": f"{op} before reset"}
    try:
        extra = library.op(req) if op != "state" else {}
    except Exception as exc:  # AD-AMQ-REFUSE: an op not possible now
        return library, {"ok": False, "error": f"{op}: {exc}"}
    return library, {"ok": True, **extra, "frames": library.frames(), "state": library.state()}


def main() -> None:
    library: Library | None = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as exc:
            print(json.dumps({"ok": False, "error": f"not JSON: {exc}"}), flush=True)
            continue
        library, answer = handle(library, req)
        if "id" in req:
            answer = {"id": req["id"], **answer}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
