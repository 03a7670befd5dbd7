"""The ``amqp`` family of the adapter protocol (spec/adapter-protocol-amqp.md, AD-AMQ-*):
the driver of an AMQP 1.0 implementation behind JSON Lines, and the wire monitor that
holds the frames it reports to the AMQP 1.0 flow-control rules (AD-AMQ-MONITOR).

The transport is the one every family shares (AD-AMQ-TRANSPORT)
(:class:`~creditflow.conformance.differential.transport.JsonLinesProcess`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.differential.adapter import PROTOCOL, REFUSED, AdapterFailure
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT, JsonLinesProcess

FAMILY = "amqp"
#: AD-AMQ-OPS: the ops of the family (``offered`` only where the library has it).
OPS = (
    "reset",
    "begin",
    "attach",
    "flow",
    "drain",
    "transfer",
    "offered",
    "drained",
    "settle",
    "detach",
    "end",
    "state",
)
SERIAL = 1 << 32  # RFC 1982 serial numbers of 32 bits (delivery-count, transfer ids)


def serial_diff(a: int, b: int) -> int:
    """``a - b`` in 32-bit serial-number arithmetic (RFC 1982), as a signed number."""
    d = (a - b) % SERIAL
    return d - SERIAL if d >= SERIAL // 2 else d


@dataclass(frozen=True)
class AmqpReply:
    """One op's answer (AD-AMQ-REPLY): the frames exchanged meanwhile and the library's
    own view of each end afterwards."""

    frames: tuple[dict[str, Any], ...]
    state: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


class AmqpAdapter(JsonLinesProcess):
    """An AMQP 1.0 implementation speaking the ``amqp`` family (AD-AMQ-HELLO)."""

    family = FAMILY

    def __init__(
        self,
        argv: Sequence[str],
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(argv, name=name, timeout=timeout, env=env)
        for key in ("version", "policy", "settings"):
            if key not in self.info:
                self._fail(PROTOCOL, f'hello lacks "{key}" (AD-AMQ-HELLO)')

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(self.info.get("ops") or OPS)

    def step(self, request: Mapping[str, Any]) -> AmqpReply:
        """Send one op; :class:`AdapterFailure` (refused) when it answers ``ok: false``."""
        resp = self.request(dict(request))
        if resp.get("ok") is not True:
            self._fail(REFUSED, f"{request.get('op')} refused: {resp.get('error', resp)!r}")
        frames, state = resp.get("frames"), resp.get("state")
        if not isinstance(frames, list) or not isinstance(state, dict):
            self._fail(
                PROTOCOL, f"{request.get('op')}: reply lacks frames (list) and state (object)"
            )
        assert isinstance(frames, list) and isinstance(state, dict)  # _fail raised otherwise
        extra = {k: v for k, v in resp.items() if k not in ("ok", "id", "frames", "state")}
        return AmqpReply(tuple(frames), state, extra)

    def try_step(self, request: Mapping[str, Any]) -> AmqpReply | None:
        """Like :meth:`step`, but ``None`` for an op the adapter refuses (a well-formed
        op that is not possible now, AD-AMQ-REFUSE)."""
        resp = self.request(dict(request))
        if resp.get("ok") is not True:
            if not isinstance(resp.get("error"), str):
                self._fail(PROTOCOL, "a refusal must carry an error string")
            return None
        extra = {k: v for k, v in resp.items() if k not in ("ok", "id", "frames", "state")}
        return AmqpReply(tuple(resp.get("frames") or ()), resp.get("state") or {}, extra)


# -- AD-AMQ-MONITOR ---------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """A frame that breaks an AMQP 1.0 flow-control rule (AD-AMQ-MONITOR)."""

    rule: str
    link: str
    frame: dict[str, Any]
    message: str


@dataclass
class _Link:
    """Both ends of one link as the wire shows them (AMQP 1.0 §2.6.7)."""

    snd_delivery_count: int = 0
    snd_credit: int = 0
    rcv_delivery_count: int = 0
    rcv_credit: int = 0
    rcv_drain: bool = False


@dataclass
class _Session:
    """One end's session counters (§2.5.6)."""

    next_outgoing_id: int = 0
    remote_incoming_window: int | None = None


@dataclass
class WireMonitor:
    """Follows an adapter's frames through the AMQP 1.0 rules and reports every frame
    that breaks one (AD-AMQ-MONITOR): a transfer beyond the sender's link credit
    (``no-credit``) or beyond the session's remote incoming window (``no-window``), a
    receiver receiving more than it granted (``over-delivery``), a drain echo that leaves
    credit (``drain-credit``). The sender's credit is derived as the spec says:
    ``delivery-count(rcv) + link-credit(rcv) − delivery-count(snd)``."""

    links: dict[str, _Link] = field(default_factory=dict)
    sessions: dict[tuple[str, int], _Session] = field(default_factory=dict)
    names: dict[tuple[str, str, int, int], str] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    def _name(self, rec: Mapping[str, Any]) -> str | None:
        where = "local" if rec["dir"] == "sent" else "remote"
        return self.names.get((rec["side"], where, rec["channel"], rec.get("handle", -1)))

    def _flag(self, rule: str, link: str, rec: Mapping[str, Any], message: str) -> None:
        self.violations.append(Violation(rule, link, dict(rec), message))

    def feed(self, frames: Iterable[Mapping[str, Any]]) -> list[Violation]:
        """Take frames in the order reported; the violations they add."""
        before = len(self.violations)
        for rec in frames:
            getattr(self, "_on_" + str(rec.get("frame")), lambda r: None)(rec)
        return self.violations[before:]

    def _session(self, rec: Mapping[str, Any]) -> _Session:
        return self.sessions.setdefault((rec["side"], rec["channel"]), _Session())

    def _on_begin(self, rec: Mapping[str, Any]) -> None:
        ssn = self._session(rec)
        if rec["dir"] == "sent":
            ssn.next_outgoing_id = int(rec.get("next-outgoing-id", 0))
        elif ssn.remote_incoming_window is None:
            # §2.5.6: before the peer's first FLOW its next-incoming-id is our initial id
            ssn.remote_incoming_window = int(rec.get("incoming-window", 0))

    def _on_attach(self, rec: Mapping[str, Any]) -> None:
        where = "local" if rec["dir"] == "sent" else "remote"
        name = str(rec.get("name"))
        self.names[(rec["side"], where, rec["channel"], rec.get("handle", -1))] = name
        link = self.links.setdefault(name, _Link())
        if rec.get("role") == "sender" and "initial-delivery-count" in rec:
            idc = int(rec["initial-delivery-count"])
            link.snd_delivery_count = idc
            link.rcv_delivery_count = idc

    def _on_flow(self, rec: Mapping[str, Any]) -> None:
        ssn = self._session(rec)
        if rec["dir"] == "received" and "incoming-window" in rec:
            # §2.5.6: remote-incoming-window = next-incoming-id(flow) + incoming-window(flow)
            #         − next-outgoing-id
            nid = rec.get("next-incoming-id")
            if nid is not None:
                ssn.remote_incoming_window = (
                    int(nid) + int(rec["incoming-window"]) - ssn.next_outgoing_id
                )
            else:
                ssn.remote_incoming_window = int(rec["incoming-window"])
        name = self._name(rec)
        if name is None or name not in self.links or "link-credit" not in rec:
            return
        link = self.links[name]
        dc, lc = int(rec.get("delivery-count", link.rcv_delivery_count)), int(rec["link-credit"])
        sender_side = rec["side"] == "client"  # AD-AMQ-ENDS: the client holds the sender
        if sender_side and rec["dir"] == "received":
            # §2.6.7: credit(snd) = delivery-count(rcv) + link-credit(rcv) − delivery-count(snd)
            link.snd_credit = serial_diff(dc + lc, link.snd_delivery_count)
        elif sender_side:  # the sender's own FLOW (drain echo or echo)
            link.snd_delivery_count, link.snd_credit = dc, lc
            if rec.get("drain") and lc != 0:
                self._flag("drain-credit", name, rec, f"drain echo leaves link-credit {lc}")
        elif rec["dir"] == "sent":  # the receiver grants
            link.rcv_delivery_count, link.rcv_credit = dc, lc
            link.rcv_drain = bool(rec.get("drain"))
        else:  # the receiver learns the sender's state (drain echo)
            link.rcv_delivery_count, link.rcv_credit = dc, lc

    def _on_transfer(self, rec: Mapping[str, Any]) -> None:
        ssn = self._session(rec)
        name = self._name(rec)
        if rec["dir"] == "sent":
            if ssn.remote_incoming_window is not None:
                if ssn.remote_incoming_window <= 0:
                    self._flag(
                        "no-window",
                        name or "?",
                        rec,
                        f"transfer with remote incoming window {ssn.remote_incoming_window}",
                    )
                ssn.remote_incoming_window -= 1
            ssn.next_outgoing_id = (ssn.next_outgoing_id + 1) % SERIAL
        if name is None or name not in self.links or "delivery-id" not in rec:
            return  # a continuation frame of a multi-frame delivery counts once
        link = self.links[name]
        if rec["dir"] == "sent":
            if link.snd_credit <= 0:
                self._flag("no-credit", name, rec, f"transfer with link credit {link.snd_credit}")
            link.snd_delivery_count = (link.snd_delivery_count + 1) % SERIAL
            link.snd_credit -= 1
        else:
            if link.rcv_credit <= 0:
                self._flag(
                    "over-delivery", name, rec, f"delivery received with credit {link.rcv_credit}"
                )
            link.rcv_delivery_count = (link.rcv_delivery_count + 1) % SERIAL
            link.rcv_credit -= 1

    def link_view(self, name: str) -> dict[str, int]:
        """Both ends of ``name`` as the wire shows them (AD-AMQ-MONITOR)."""
        link = self.links[name]
        return {
            "snd_delivery_count": link.snd_delivery_count,
            "snd_credit": link.snd_credit,
            "rcv_delivery_count": link.rcv_delivery_count,
            "rcv_credit": link.rcv_credit,
        }


__all__ = [
    "FAMILY",
    "OPS",
    "AdapterFailure",
    "AmqpAdapter",
    "AmqpReply",
    "Violation",
    "WireMonitor",
    "serial_diff",
]
