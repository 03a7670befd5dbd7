"""The adapter side of the ``amqp`` family's transport (AD-AMQ-TRANSPORT), shared by every
Python AMQP adapter: the JSON Lines loop, the ``hello`` answer (AD-AMQ-HELLO) and the
settings a ``reset`` asks for (AD-AMQ-SETTINGS, AD-AMQ-RESET).

It also holds what the adapters' ``settle`` and refusals share (AD-AMQ-REFUSE). Each
adapter keeps only what is its own: its ops, settings, policy and how it runs them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from creditflow.conformance.families.amqp.protocol import FAMILY

Answer = dict[str, Any]
T = TypeVar("T")


class Refused(Exception):
    """A well-formed request this adapter cannot carry out now, answered ``ok: false``
    with ``{op}: {reason}`` (AD-AMQ-REFUSE)."""


def settled_slice(name: str, held: list[T], count: int, keep: int) -> list[T]:
    """AD-AMQ-OPS ``settle``: the ``count`` unsettled deliveries of link ``name`` after its
    ``keep`` oldest (``held``, oldest first); :class:`Refused` when it holds too few."""
    if count < 1 or keep < 0 or keep + count > len(held):
        raise Refused(
            f"link {name!r} holds {len(held)} unsettled deliveries: "
            f"cannot keep {keep} and settle {count}"
        )
    return held[keep : keep + count]


class SettingsRefused(Exception):
    """A ``reset`` asked for settings the adapter does not offer (AD-AMQ-RESET)."""


def hello_answer(
    name: str,
    version: str,
    ops: Sequence[str],
    settings: dict[str, int],
    policy: Callable[[dict[str, int]], dict[str, Any]],
    **more: Any,
) -> Answer:
    """AD-AMQ-HELLO: the adapter's name and version, the ``amqp`` family, its ops, its
    default settings and the policy it follows with them (plus ``more`` of its own)."""
    return {
        "ok": True,
        "name": name,
        "version": version,
        "families": [FAMILY],
        "ops": list(ops),
        "settings": settings,
        "policy": policy(settings),
        **more,
    }


def reset_settings(req: dict[str, Any], defaults: dict[str, int]) -> dict[str, int]:
    """AD-AMQ-RESET: ``defaults`` overridden by the request's ``settings``;
    :class:`SettingsRefused` naming any the adapter does not know."""
    given = req.get("settings") or {}
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise SettingsRefused(f"unknown settings: {', '.join(unknown)}")
    return {**defaults, **{k: int(v) for k, v in given.items()}}


def serve(
    handle: Callable[[dict[str, Any]], Answer],
    *,
    default: Callable[[Any], Any] | None = None,
    fatal: tuple[type[BaseException], ...] = (),
    prefix: str = "",
) -> None:
    """AD-AMQ-TRANSPORT (AD-TRANSPORT): one JSON request per stdin line, one answer per
    stdout line, flushed; blank lines skipped, a line that is not JSON answered
    ``not JSON``, the request's ``id`` echoed. ``default`` renders values JSON cannot
    carry; an exception in ``fatal`` ends the process (``prefix: error`` on stderr,
    exit 3: the adapter failed)."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as exc:
            print(json.dumps({"ok": False, "error": f"not JSON: {exc}"}), flush=True)
            continue
        try:
            resp = handle(req)
        except fatal as exc:
            print(f"{prefix}: {exc}", file=sys.stderr, flush=True)
            sys.exit(3)
        if "id" in req:
            resp["id"] = req["id"]
        sys.stdout.write(json.dumps(resp, separators=(",", ":"), default=default) + "\n")
        sys.stdout.flush()
