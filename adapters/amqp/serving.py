"""The adapter side of the ``amqp`` family's transport (AD-AMQ-TRANSPORT), shared by every
Python AMQP adapter: the JSON Lines loop, the ``hello`` answer (AD-AMQ-HELLO) and the
settings a ``reset`` asks for (AD-AMQ-SETTINGS, AD-AMQ-RESET).

It also holds what the adapters' ``settle`` and refusals share (AD-AMQ-REFUSE). Each
adapter keeps only what is its own: its ops, settings, policy and how it runs them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from creditflow.adapters import json_lines
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


def new_session(sessions: dict[str, Any], name: str) -> None:
    """AD-AMQ-REFUSE ``begin``: :class:`Refused` if session ``name`` exists."""
    if name in sessions:
        raise Refused(f"session {name!r} exists")


def known_session(sessions: dict[str, T], name: str) -> T:
    """AD-AMQ-REFUSE: session ``name`` (``end``), or :class:`Refused`."""
    if name not in sessions:
        raise Refused(f"no session {name!r}")
    return sessions[name]


def new_link(sessions: dict[str, T], links: dict[str, Any], session: str, name: str) -> T:
    """AD-AMQ-REFUSE ``attach``: the session link ``name`` is attached on, or
    :class:`Refused` if the session is unknown or the link exists."""
    if session not in sessions:
        raise Refused(f"no session {session!r}")
    if name in links:
        raise Refused(f"link {name!r} exists")
    return sessions[session]


def pair_receiver(links: dict[str, list[Any]], receiver: Any, name: str) -> None:
    """The receiving end of link ``name`` is attached: it joins the sender that has none
    yet (``links``: name → [sender, receiver or None, session name])."""
    for entry in links.values():
        if entry[0].name == name and entry[1] is None:
            entry[1] = receiver


class LinkOps(Protocol):
    """The session and link ops every adapter reads from a request alike (AD-AMQ-OPS)."""

    def begin(self, name: str) -> None: ...
    def attach(self, session: str, name: str) -> None: ...
    def transfer(self, name: str) -> None: ...
    def settle(self, name: str, count: int, keep: int) -> None: ...
    def detach(self, name: str) -> None: ...
    def end(self, name: str) -> None: ...


def run_link_op(ends: LinkOps, op: str, req: dict[str, Any]) -> None:
    """AD-AMQ-OPS: ``begin``, ``attach``, ``transfer``, ``settle`` (``count`` 1 and
    ``keep`` 0 unless given), ``detach`` or ``end`` carried out on ``ends`` (a missing
    member raises ``KeyError``); any other op does nothing."""
    if op == "begin":
        ends.begin(str(req["session"]))
    elif op == "attach":
        ends.attach(str(req["session"]), str(req["link"]))
    elif op == "transfer":
        ends.transfer(str(req["link"]))
    elif op == "settle":
        ends.settle(str(req["link"]), int(req.get("count", 1)), int(req.get("keep", 0)))
    elif op == "detach":
        ends.detach(str(req["link"]))
    elif op == "end":
        ends.end(str(req["session"]))


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


class TwoEnds(Protocol):
    """Both ends of a connection held in this process, with the frames they sent and
    received since the last answer (AD-AMQ-REPLY)."""

    frames: list[dict[str, Any]]

    def state(self) -> dict[str, Any]: ...


E = TypeVar("E", bound=TwoEnds)


def answer_pair_request(
    pair: E | None,
    req: dict[str, Any],
    hello: Callable[[], Answer],
    ops: Sequence[str],
    defaults: dict[str, int],
    policy: Callable[[dict[str, int]], dict[str, Any]],
    reset: Callable[[dict[str, int]], E],
    run_op: Callable[[E, str, dict[str, Any]], dict[str, Any]],
) -> tuple[E | None, Answer]:
    """One request to an adapter holding both ends (``pair``, ``None`` before the first
    ``reset``); the pair after it and the answer. ``hello`` answers AD-AMQ-HELLO; an op
    not in ``ops`` is unknown; ``reset`` (AD-AMQ-RESET) makes a fresh pair of
    ``defaults`` overridden by the request (:class:`SettingsRefused` refuses them);
    ``run_op`` carries out any other op and gives the answer's extra members
    (:class:`Refused`, ``KeyError``, ``ValueError``, ``TypeError``: ``{op}: {reason}``).
    A carried-out op is answered with the frames since the last answer and the state."""
    op = req.get("op")
    if op == "hello":
        return pair, hello()
    if op not in ops:
        return pair, {"ok": False, "error": f"unknown op {op!r}"}
    if op == "reset":  # AD-AMQ-RESET
        try:
            settings = reset_settings(req, defaults)
            pair = reset(settings)
        except SettingsRefused as exc:
            return pair, {"ok": False, "error": str(exc)}
        out = {"ok": True, "policy": policy(settings), "frames": pair.frames, "state": pair.state()}
        pair.frames = []
        return pair, out
    if pair is None:
        return pair, {"ok": False, "error": f"{op} before reset"}
    try:
        extra = run_op(pair, str(op), req)  # one of ops
    except (Refused, KeyError, ValueError, TypeError) as exc:
        return pair, {"ok": False, "error": f"{op}: {exc}"}
    frames, pair.frames = pair.frames, []
    return pair, {"ok": True, **extra, "frames": frames, "state": pair.state()}


def serve_pair(
    handle: Callable[[E | None, dict[str, Any]], tuple[E | None, Answer]],
    *,
    default: Callable[[Any], Any] | None = None,
) -> None:
    """:func:`serve` with the pair ``handle`` leaves carried to the next request
    (``None`` before the first)."""
    pair: E | None = None

    def answer(req: dict[str, Any]) -> Answer:
        nonlocal pair
        pair, resp = handle(pair, req)
        return resp

    serve(answer, default=default)


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
    for req in json_lines.requests(sys.stdin):
        try:
            resp = handle(req)
        except fatal as exc:
            print(f"{prefix}: {exc}", file=sys.stderr, flush=True)
            sys.exit(3)
        json_lines.write_answer(req, resp, default)
