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
#: AD-AMQ-CONFORM: ``conform``'s phases and defaults for this family (here, so that the
#: CLI reads them without importing the model; the engine is
#: ``conformance/families/amqp/conform.py``).
AMQP_PHASES = ("explorer-runs", "hypothesis-runs")
DEFAULT_DEPTH = 4
DEFAULT_AMQP_EXAMPLES = 60
DEFAULT_AMQP_STEPS = 25
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
    #: the error of the last op the adapter refused (AD-AMQ-REFUSE)
    last_refusal = ""

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
            self.last_refusal = str(resp["error"])  # AD-AMQ-RMQ-ENDED: shown with the verdict
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
    """Both ends of one link as the wire shows them (AMQP 1.0 §2.6.7), and the receiving
    application's grants (AD-AMQ-MONITOR ``credit-ledger``)."""

    snd_delivery_count: int = 0
    snd_credit: int = 0
    rcv_delivery_count: int = 0
    rcv_credit: int = 0
    granted: int = 0  # credit the application granted by hand, in total
    received: int = 0  # deliveries received, in total
    drain_asked: bool = False  # the sender got drain=true and has not echoed since
    snd_more: bool = False  # the sender's last transfer frame said more=true
    #: the sender's last FLOW said drain=true with credit left (its drain mode, legal
    #: while it drains, AMQP 1.0 §2.7.4): ``drain-credit`` if still so at rest
    drain_left: dict[str, Any] | None = None
    rcv_more: bool = False  # the receiver's last transfer frame said more=true


@dataclass
class _Session:
    """One end's session counters (§2.5.6) as its frames show them."""

    next_outgoing_id: int = 0
    remote_incoming_window: int | None = None
    next_incoming_id: int = 0
    incoming_window: int | None = None  # as this end last advertised it, less arrivals


#: AD-AMQ-MONITOR: frame fields that are sequence numbers (must be < 2^32).
SERIAL_FIELDS = (
    "delivery-count",
    "initial-delivery-count",
    "next-incoming-id",
    "next-outgoing-id",
    "delivery-id",
)


@dataclass
class WireMonitor:
    """Follows an adapter's frames through the AMQP 1.0 rules and reports what breaks one
    (AD-AMQ-MONITOR).

    Per frame: a transfer beyond the sender's link credit (``no-credit``) or beyond the
    session's remote incoming window (``no-window``); a delivery received beyond the
    credit the receiver granted (``over-delivery``); a sequence number outside
    0 … 2^32 − 1 (``bad-serial``); a negative credit or window (``negative``). The
    sender's credit is derived as the spec says: ``delivery-count(rcv) + link-credit(rcv)
    − delivery-count(snd)`` in serial arithmetic.

    At rest (:meth:`at_rest`, after every op): a drain echo that left credit the sender
    still holds (``drain-credit``; judged at rest, for a sender's FLOW with
    ``drain = true`` reports its drain mode and may carry credit while it drains,
    §2.7.4); both ends agree on delivery-count and
    credit (``agree``); with credit granted by hand (``manual``), the receiver's credit
    is what its application granted less what arrived (``credit-ledger``); a drain the
    sending application answered was echoed (``drain-unanswered``); a sender holding
    messages with more credit than the receiving application holds deliveries is moving
    (``stall``)."""

    manual: bool = False
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
            if rec.get("dir") == "sent":
                self._ranges(rec)
            getattr(self, "_on_" + str(rec.get("frame")), lambda r: None)(rec)
        return self.violations[before:]

    def _ranges(self, rec: Mapping[str, Any]) -> None:
        for key in SERIAL_FIELDS:
            v = rec.get(key)
            if isinstance(v, int) and not 0 <= v < SERIAL:
                self._flag(
                    "bad-serial", self._name(rec) or "?", rec, f"{key} {v} is no sequence-no"
                )
        for key in ("link-credit", "incoming-window", "outgoing-window"):
            v = rec.get(key)
            if isinstance(v, int) and v < 0:
                self._flag("negative", self._name(rec) or "?", rec, f"{key} {v}")

    def granted(self, link: str, credit: int) -> None:
        """The receiving application granted ``credit`` more by hand (a ``flow`` or
        ``drain`` op): the ``credit-ledger`` check counts it."""
        self.links.setdefault(link, _Link()).granted += credit

    def _session(self, rec: Mapping[str, Any]) -> _Session:
        return self.sessions.setdefault((rec["side"], rec["channel"]), _Session())

    def _on_begin(self, rec: Mapping[str, Any]) -> None:
        ssn = self._session(rec)
        if rec["dir"] == "sent":
            ssn.next_outgoing_id = int(rec.get("next-outgoing-id", 0))
            ssn.incoming_window = int(rec.get("incoming-window", 0))
        else:
            ssn.next_incoming_id = int(rec.get("next-outgoing-id", 0))
        if rec["dir"] == "received" and ssn.remote_incoming_window is None:
            # §2.5.6: before the peer's first FLOW its next-incoming-id is our initial id
            ssn.remote_incoming_window = int(rec.get("incoming-window", 0))

    def _on_attach(self, rec: Mapping[str, Any]) -> None:
        where = "local" if rec["dir"] == "sent" else "remote"
        name = str(rec.get("name"))
        self.names[(rec["side"], where, rec["channel"], rec.get("handle", -1))] = name
        link = self.links.setdefault(name, _Link())
        if rec.get("role") == "sender" and "initial-delivery-count" in rec:
            idc = int(rec["initial-delivery-count"]) % SERIAL
            link.snd_delivery_count = idc
            link.rcv_delivery_count = idc

    def _on_flow(self, rec: Mapping[str, Any]) -> None:
        ssn = self._session(rec)
        if rec["dir"] == "sent" and "incoming-window" in rec:
            ssn.incoming_window = int(rec["incoming-window"])
        if rec["dir"] == "received" and "incoming-window" in rec:
            # §2.5.6: remote-incoming-window = next-incoming-id(flow) + incoming-window(flow)
            #         − next-outgoing-id
            nid = rec.get("next-incoming-id")
            window = int(rec["incoming-window"])
            if nid is not None:
                window = serial_diff(int(nid) + window, ssn.next_outgoing_id)
            ssn.remote_incoming_window = window
        name = self._name(rec)
        if name is None or name not in self.links or "link-credit" not in rec:
            return
        link = self.links[name]
        dc, lc = int(rec.get("delivery-count", link.rcv_delivery_count)), int(rec["link-credit"])
        sender_side = rec["side"] == "client"  # AD-AMQ-ENDS: the client holds the sender
        if sender_side and rec["dir"] == "received":
            # §2.6.7: credit(snd) = delivery-count(rcv) + link-credit(rcv) − delivery-count(snd)
            link.snd_credit = serial_diff(dc + lc, link.snd_delivery_count)
            link.drain_asked = bool(rec.get("drain"))
        elif sender_side:  # the sender's own FLOW (drain echo or echo)
            link.snd_delivery_count, link.snd_credit = dc % SERIAL, lc
            if rec.get("drain"):
                link.drain_asked = False
                # §2.7.4: a sender's drain field is its drain mode; a FLOW sent while it
                # still drains may carry credit: judged at rest (:meth:`at_rest`)
                link.drain_left = dict(rec) if lc != 0 else None
        elif rec["dir"] == "sent":  # the receiver grants
            link.rcv_delivery_count, link.rcv_credit = dc % SERIAL, lc
        else:  # the receiver learns the sender's state (drain echo)
            link.rcv_delivery_count, link.rcv_credit = dc % SERIAL, lc
            if rec.get("drain"):
                link.granted = link.received  # the drain consumed what was left

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
        else:  # §2.5.6 on arrival
            ssn.next_incoming_id = (ssn.next_incoming_id + 1) % SERIAL
            if ssn.incoming_window is not None:
                ssn.incoming_window -= 1
        if name is None or name not in self.links:
            return
        link = self.links[name]
        more = bool(rec.get("more"))
        if rec["dir"] == "sent":
            # §2.6.6: the frames of one delivery count once, from its first frame
            continuing, link.snd_more = link.snd_more, more
            if continuing:
                return
            if link.snd_credit <= 0:
                self._flag("no-credit", name, rec, f"transfer with link credit {link.snd_credit}")
            link.snd_delivery_count = (link.snd_delivery_count + 1) % SERIAL
            link.snd_credit -= 1
        else:
            continuing, link.rcv_more = link.rcv_more, more
            if continuing:
                return
            if link.rcv_credit <= 0:
                self._flag(
                    "over-delivery", name, rec, f"delivery received with credit {link.rcv_credit}"
                )
            link.rcv_delivery_count = (link.rcv_delivery_count + 1) % SERIAL
            link.rcv_credit -= 1
            link.received += 1

    def at_rest(self, op: str, state: Mapping[str, Any]) -> list[Violation]:
        """The checks that hold once nothing is in flight (AD-AMQ-QUIESCE), after op
        ``op`` answered with library state ``state`` (AD-AMQ-STATE); the violations."""
        before = len(self.violations)
        rest = {"op": op}
        for name, link in self.links.items():
            ends = state.get("links", {}).get(name, {})
            if link.drain_left is not None and link.snd_credit > 0:
                lc = link.drain_left.get("link-credit")
                self._flag(
                    "drain-credit", name, link.drain_left, f"drain echo leaves link-credit {lc}"
                )
            link.drain_left = None
            if (link.snd_delivery_count, link.snd_credit) != (
                link.rcv_delivery_count,
                link.rcv_credit,
            ):
                self._flag(
                    "agree",
                    name,
                    rest,
                    f"at rest the sender has delivery-count {link.snd_delivery_count}, credit "
                    f"{link.snd_credit}; the receiver {link.rcv_delivery_count}, {link.rcv_credit}",
                )
            if self.manual and link.rcv_credit != link.granted - link.received:
                self._flag(
                    "credit-ledger",
                    name,
                    rest,
                    f"the application granted {link.granted} and {link.received} arrived, "
                    f"but the receiver advertises {link.rcv_credit}",
                )
            queued = int(ends.get("sender", {}).get("queued", 0) or 0)
            held = int(ends.get("receiver", {}).get("unsettled", 0) or 0)
            if op == "drained" and link.drain_asked and queued == 0 and link.snd_credit > 0:
                self._flag(
                    "drain-unanswered",
                    name,
                    rest,
                    f"the sender answered the drain but no FLOW echoed it (credit "
                    f"{link.snd_credit} left)",
                )
            if queued > 0 and link.snd_credit > held:
                self._flag(
                    "stall",
                    name,
                    rest,
                    f"{queued} messages wait with link credit {link.snd_credit} while the "
                    f"receiving application holds {held}",
                )
        return self.violations[before:]

    def endpoints(self) -> dict[str, Any]:
        """The wire's view of every endpoint in the model's state names (spec/amqp.md
        AMQ-LINK-STATE, AMQ-SESSION-STATE: ``delivery_count``, ``credit``;
        ``next_incoming_id``, ``incoming_window``, ``next_outgoing_id``,
        ``remote_incoming_window``), what ``conform`` will compare with the model
        (AD-AMQ-MONITOR)."""
        return {
            "links": {
                name: {
                    "sender": {"delivery_count": k.snd_delivery_count, "credit": k.snd_credit},
                    "receiver": {"delivery_count": k.rcv_delivery_count, "credit": k.rcv_credit},
                }
                for name, k in self.links.items()
            },
            "sessions": {
                f"{side}:{channel}": {
                    "next_incoming_id": ssn.next_incoming_id,
                    "incoming_window": ssn.incoming_window,
                    "next_outgoing_id": ssn.next_outgoing_id,
                    "remote_incoming_window": ssn.remote_incoming_window,
                }
                for (side, channel), ssn in sorted(self.sessions.items())
            },
        }

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
