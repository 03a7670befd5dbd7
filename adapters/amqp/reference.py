"""The ``amqp-reference`` adapter and its mutants (AD-AMQ-REFERENCE): both ends of an AMQP
1.0 connection in pure Python, following the model's rules (spec/amqp.md) with the
simplest policies — credit granted by hand (AMQ-POL-CREDIT-MANUAL), a session window
renewed at a threshold (AMQ-POL-WINDOW-FIXED), the sender's credit by AMQ-LINK-CREDIT-SND
— behind the ``amqp`` family of the adapter protocol (AD-AMQ-OPS).

A mutant breaks exactly one rule (:data:`MUTANTS`); the wire monitor (AD-AMQ-MONITOR)
must catch each. Frames travel on two FIFO wires, pumped until both are empty
(AD-AMQ-QUIESCE).

Run: ``python -m creditflow.adapters.amqp.reference [--mutant NAME]``.
"""

from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from creditflow.adapters.amqp.frames import frame_record
from creditflow.adapters.amqp.serving import (
    Refused,
    SettingsRefused,
    hello_answer,
    reset_settings,
    serve,
)

SERIAL = 1 << 32
OPS = (
    "reset",
    "begin",
    "attach",
    "flow",
    "drain",
    "transfer",
    "drained",
    "settle",
    "detach",
    "end",
    "state",
)
#: AD-AMQ-SETTINGS of the reference: the session window W and its threshold T
#: (AMQ-POL-WINDOW-FIXED), frames per message, the initial delivery-count (AMQ-SERIAL:
#: start near 2^32 to reach the wrap in a few steps).
SETTINGS = {
    "window": 4,
    "threshold": 2,
    "message_frames": 1,
    "initial_delivery_count": 0,
    "message_size": 10,
}
#: AD-AMQ-REFERENCE: the mutants, each breaking one rule of spec/amqp.md.
MUTANTS = {
    "delta-credit": "the receiver's FLOW carries the credit just granted, not the absolute "
    "credit (AMQ-LINK-CREDIT-SND: FLOW values are absolute)",
    "per-frame-count": "the receiver advances delivery-count per transfer frame, not per "
    "delivery (AMQ-LINK-TRANSFER)",
    "missed-drain-echo": "the sender ends a drain without sending the FLOW (AMQ-LINK-DRAIN)",
    "no-serial-wrap": "delivery-counts are not taken mod 2^32 (AMQ-SERIAL)",
    "window-never-renewed": "the session incoming window is never renewed "
    "(AMQ-POL-WINDOW-NEVER where FIXED is declared)",
    "ignores-credit": "the sender transfers without link credit (AMQ-LINK-TRANSFER)",
    "double-grant": "the receiver adds a hand grant twice (AMQ-POL-CREDIT-MANUAL)",
}


@dataclass
class LinkEnds:
    """Both ends of one link (AMQ-LINK-STATE)."""

    handle: int
    channel: int
    snd_delivery_count: int
    rcv_delivery_count: int
    snd_credit: int = 0
    rcv_credit: int = 0
    drain_asked: bool = False  # the sender got drain=true
    rcv_drain: bool = False
    queued: int = 0  # messages the sending application gave, not yet sent
    snd_unsettled: list[int] = field(default_factory=list)
    held: list[int] = field(default_factory=list)  # delivered, not settled by the app
    frames_left: int = 0  # frames of the delivery arriving now
    attached: bool = True


@dataclass
class SessionEnds:
    """Both ends of one session (AMQ-SESSION-STATE): the client sends, the server receives."""

    channel: int
    next_outgoing_id: int = 0  # client
    remote_incoming_window: int = 0  # client's view of the server's window
    next_incoming_id: int = 0  # server
    incoming_window: int = 0  # server


class Reference:
    """Both ends, pumped in memory."""

    def __init__(self, settings: dict[str, int], mutant: str | None) -> None:
        #: AD-AMQ-REFERENCE: ``A+B`` breaks the rules of both mutants A and B
        self.bugs = frozenset(mutant.split("+")) if mutant else frozenset()
        self.s = settings
        self.mutant = mutant
        self.frames: list[dict[str, Any]] = []
        self.to_server: deque[tuple[str, dict[str, Any]]] = deque()
        self.to_client: deque[tuple[str, dict[str, Any]]] = deque()
        self.sessions: dict[str, SessionEnds] = {}
        self.links: dict[str, LinkEnds] = {}
        self.next_delivery_id = 0
        self._send("client", 0, "open", {})
        self._send("server", 0, "open", {})
        self.pump()

    # -- wires ------------------------------------------------------------------------------

    def _serial(self, n: int) -> int:
        return n if "no-serial-wrap" in self.bugs else n % SERIAL

    def _send(self, side: str, channel: int, name: str, values: dict[str, Any]) -> None:
        self.frames.append(frame_record(side, "sent", channel, name, values))
        wire = self.to_server if side == "client" else self.to_client
        wire.append((name, {"channel": channel, **values}))

    def pump(self) -> None:
        """AD-AMQ-QUIESCE: deliver frames until both wires are empty."""
        while True:
            self._try_send()
            if self.to_server:
                name, values = self.to_server.popleft()
                self.frames.append(
                    frame_record("server", "received", values["channel"], name, values)
                )
                getattr(self, "_server_" + name, lambda v: None)(values)
            elif self.to_client:
                name, values = self.to_client.popleft()
                self.frames.append(
                    frame_record("client", "received", values["channel"], name, values)
                )
                getattr(self, "_client_" + name, lambda v: None)(values)
            else:
                return

    # -- the sender (client) --------------------------------------------------------------

    def _try_send(self) -> None:
        """AMQ-LINK-TRANSFER, AMQ-SESSION-SEND: send while credit and window allow."""
        for link in self.links.values():
            ssn = self._session_of(link)
            frames = self.s["message_frames"]
            while link.attached and link.queued > 0 and ssn.remote_incoming_window >= frames:
                if link.snd_credit <= 0 and "ignores-credit" not in self.bugs:
                    break
                did = self.next_delivery_id
                self.next_delivery_id = (did + 1) % SERIAL
                for i in range(frames):
                    values: dict[str, Any] = {"handle": link.handle, "more": i < frames - 1}
                    if i == 0:
                        values.update({"delivery-id": did, "settled": False})
                    self._send("client", link.channel, "transfer", values)
                    ssn.next_outgoing_id = (ssn.next_outgoing_id + 1) % SERIAL
                    ssn.remote_incoming_window -= 1
                link.queued -= 1
                link.snd_credit -= 1
                link.snd_delivery_count = self._serial(link.snd_delivery_count + 1)
                link.snd_unsettled.append(did)

    def _client_flow(self, v: dict[str, Any]) -> None:
        ssn = self._session_by_channel(v["channel"])
        if "next-incoming-id" in v:
            # AMQ-SESSION-FLOW
            d = (v["next-incoming-id"] + v["incoming-window"] - ssn.next_outgoing_id) % SERIAL
            ssn.remote_incoming_window = max(0, d - SERIAL if d >= SERIAL // 2 else d)
        link = self._link_by_handle(v["channel"], v.get("handle"))
        if link is not None and "link-credit" in v:
            # AMQ-LINK-CREDIT-SND: delivery-count(rcv) + link-credit(rcv) − delivery-count(snd)
            diff = (v["delivery-count"] + v["link-credit"] - link.snd_delivery_count) % SERIAL
            link.snd_credit = max(0, diff - SERIAL if diff >= SERIAL // 2 else diff)
            link.drain_asked = bool(v.get("drain"))

    def _client_disposition(self, v: dict[str, Any]) -> None:
        for link in self.links.values():
            if v["first"] in link.snd_unsettled:
                link.snd_unsettled.remove(v["first"])

    # -- the receiver (server) ------------------------------------------------------------

    def _server_transfer(self, v: dict[str, Any]) -> None:
        ssn = self._session_by_channel(v["channel"])
        link = self._link_by_handle(v["channel"], v["handle"])
        assert link is not None
        # AMQ-SESSION-RECV
        ssn.next_incoming_id = (ssn.next_incoming_id + 1) % SERIAL
        ssn.incoming_window -= 1
        if "per-frame-count" in self.bugs or not v.get("more"):
            # AMQ-LINK-TRANSFER on the receiver: one delivery (the mutant: one frame)
            link.rcv_delivery_count = self._serial(link.rcv_delivery_count + 1)
            link.rcv_credit -= 1
            if link.rcv_drain and link.rcv_credit <= 0:
                link.rcv_drain = False  # AMQ-LINK-DRAIN: the transfers used the credit up
        if "delivery-id" in v:
            link.held.append(v["delivery-id"])
        if ssn.incoming_window <= self.s["threshold"] and "window-never-renewed" not in self.bugs:
            # AMQ-POL-WINDOW-FIXED: back to W, one FLOW with the session fields
            ssn.incoming_window = self.s["window"]
            self._send("server", ssn.channel, "flow", self._session_fields(ssn))

    def _server_flow(self, v: dict[str, Any]) -> None:
        link = self._link_by_handle(v["channel"], v.get("handle"))
        if link is not None and v.get("drain"):
            # AMQ-LINK-DRAIN: the sender's echo ends the drain
            link.rcv_delivery_count, link.rcv_credit = v["delivery-count"], v["link-credit"]
            link.rcv_drain = False

    def _session_fields(self, ssn: SessionEnds) -> dict[str, Any]:
        return {
            "next-incoming-id": ssn.next_incoming_id,
            "incoming-window": ssn.incoming_window,
            "next-outgoing-id": 0,
            "outgoing-window": SERIAL - 1,
        }

    def _grant(self, link: LinkEnds, credit: int, drain: bool) -> None:
        """AMQ-POL-CREDIT-MANUAL, AMQ-LINK-FLOW: the receiving application grants."""
        link.rcv_credit += 2 * credit if "double-grant" in self.bugs else credit
        link.rcv_drain = link.rcv_drain or drain
        sent_credit = credit if "delta-credit" in self.bugs else link.rcv_credit
        ssn = self._session_of(link)
        self._send(
            "server",
            link.channel,
            "flow",
            {
                **self._session_fields(ssn),
                "handle": link.handle,
                "delivery-count": link.rcv_delivery_count,
                "link-credit": sent_credit,
                "drain": link.rcv_drain,
            },
        )

    # -- lookups ----------------------------------------------------------------------------

    def _session_by_channel(self, channel: int) -> SessionEnds:
        for ssn in self.sessions.values():
            if ssn.channel == channel:
                return ssn
        raise Refused(f"no session on channel {channel}")

    def _session_of(self, link: LinkEnds) -> SessionEnds:
        return self._session_by_channel(link.channel)

    def _link_by_handle(self, channel: int, handle: int | None) -> LinkEnds | None:
        for link in self.links.values():
            if link.channel == channel and link.handle == handle:
                return link
        return None

    def _link(self, name: str) -> LinkEnds:
        link = self.links.get(name)
        if link is None or not link.attached:
            raise Refused(f"no attached link {name!r}")
        return link

    # -- ops (AD-AMQ-OPS) -------------------------------------------------------------------

    def op(self, req: dict[str, Any]) -> dict[str, Any]:
        o = req["op"]
        extra: dict[str, Any] = {}
        if o == "begin":
            name = str(req["session"])
            if name in self.sessions:
                raise Refused(f"session {name!r} exists")
            ssn = SessionEnds(channel=len(self.sessions))
            ssn.incoming_window = self.s["window"]
            self.sessions[name] = ssn
            begin = {"next-outgoing-id": 0, "incoming-window": self.s["window"]}
            self._send("client", ssn.channel, "begin", {**begin, "outgoing-window": SERIAL - 1})
            self._send(
                "server",
                ssn.channel,
                "begin",
                {"remote-channel": ssn.channel, **begin, "outgoing-window": SERIAL - 1},
            )
            ssn.remote_incoming_window = self.s["window"]  # AMQ-BEGIN-ATTACH
        elif o == "attach":
            found = self.sessions.get(str(req["session"]))
            name = str(req["link"])
            if found is None or name in self.links:
                raise Refused(f"cannot attach {name!r} on session {req['session']!r}")
            idc = self.s["initial_delivery_count"]
            link = LinkEnds(
                handle=len(self.links),
                channel=found.channel,
                snd_delivery_count=idc,
                rcv_delivery_count=idc,
            )
            self.links[name] = link
            att = {"name": name, "handle": link.handle, "initial-delivery-count": idc}
            self._send("client", found.channel, "attach", {**att, "role": "sender"})
            self._send("server", found.channel, "attach", {**att, "role": "receiver"})
        elif o == "flow":
            self._grant(self._link(str(req["link"])), int(req["credit"]), drain=False)
        elif o == "drain":
            self._grant(self._link(str(req["link"])), int(req.get("credit", 0)), drain=True)
        elif o == "transfer":
            self._link(str(req["link"])).queued += 1
        elif o == "drained":
            link = self._link(str(req["link"]))
            n = 0
            if link.drain_asked and link.queued == 0:
                # AMQ-LINK-DRAIN: advance delivery-count by the credit left, credit 0
                n = max(0, link.snd_credit)
                link.snd_delivery_count = self._serial(link.snd_delivery_count + n)
                link.snd_credit = 0
                link.drain_asked = False
                if "missed-drain-echo" not in self.bugs:
                    self._send(
                        "client",
                        link.channel,
                        "flow",
                        {
                            "handle": link.handle,
                            "delivery-count": link.snd_delivery_count,
                            "link-credit": 0,
                            "drain": True,
                        },
                    )
            extra["drained"] = n
        elif o == "settle":
            link = self._link(str(req["link"]))
            count, keep = int(req.get("count", 1)), int(req.get("keep", 0))
            if count < 1 or keep < 0 or keep + count > len(link.held):
                raise Refused(f"cannot keep {keep} and settle {count} of {len(link.held)}")
            for did in link.held[keep : keep + count]:
                self._send(
                    "server",
                    link.channel,
                    "disposition",
                    {"role": "receiver", "first": did, "last": did, "settled": True},
                )
            del link.held[keep : keep + count]
        elif o == "detach":
            link = self._link(str(req["link"]))
            link.attached = False
            self._send("client", link.channel, "detach", {"handle": link.handle, "closed": True})
            self._send("server", link.channel, "detach", {"handle": link.handle, "closed": True})
        elif o == "end":
            ending = self.sessions.get(str(req["session"]))
            if ending is None:
                raise Refused(f"no session {req['session']!r}")
            self._send("client", ending.channel, "end", {})
            self._send("server", ending.channel, "end", {})
        self.pump()
        return extra

    def state(self) -> dict[str, Any]:
        """AD-AMQ-STATE."""
        links = {
            name: {
                "sender": {
                    "credit": link.snd_credit,
                    "delivery_count": link.snd_delivery_count,
                    "queued": link.queued,
                    "unsettled": len(link.snd_unsettled),
                    "drain": link.drain_asked,
                },
                "receiver": {
                    "credit": link.rcv_credit,
                    "delivery_count": link.rcv_delivery_count,
                    "unsettled": len(link.held),
                    "drain": link.rcv_drain,
                },
            }
            for name, link in self.links.items()
            if link.attached
        }
        sessions = {
            name: {
                "client": {
                    "next_outgoing_id": ssn.next_outgoing_id,
                    "remote_incoming_window": ssn.remote_incoming_window,
                },
                "server": {
                    "next_incoming_id": ssn.next_incoming_id,
                    "incoming_window": ssn.incoming_window,
                },
            }
            for name, ssn in self.sessions.items()
        }
        return {"links": links, "sessions": sessions}


def policy(settings: dict[str, int]) -> dict[str, Any]:
    """AD-AMQ-POLICY: the model's policies the reference follows."""
    return {
        "credit": {"policy": "manual"},
        "sender_credit": {"formula": "serial"},
        "window": {
            "policy": "fixed",
            "window": settings["window"],
            "threshold": settings["threshold"],
        },
    }


class Server:
    """One adapter process's requests (AD-AMQ-TRANSPORT)."""

    def __init__(self, mutant: str | None = None) -> None:
        if mutant is not None and not set(mutant.split("+")) <= set(MUTANTS):
            raise ValueError(f"unknown mutant {mutant!r} (known: {', '.join(MUTANTS)})")
        self.mutant = mutant
        self.ref: Reference | None = None

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "hello":
            name = "creditflow amqp-reference" + (f" mutant:{self.mutant}" if self.mutant else "")
            return hello_answer(name, "0.1.0", OPS, SETTINGS, policy)
        if op not in OPS:
            return {"ok": False, "error": f"unknown op {op!r}"}
        if op == "reset":
            try:
                settings = reset_settings(req, SETTINGS)
            except SettingsRefused as exc:
                return {"ok": False, "error": str(exc)}
            self.ref = Reference(settings, self.mutant)
            return {"ok": True, "policy": policy(settings), **self._take()}
        if self.ref is None:
            return {"ok": False, "error": f"{op} before reset"}
        try:
            extra = self.ref.op(req) if op != "state" else {}
        except (Refused, KeyError, ValueError, TypeError) as exc:
            return {"ok": False, "error": f"{op}: {exc}"}
        return {"ok": True, **extra, **self._take()}

    def _take(self) -> dict[str, Any]:
        assert self.ref is not None
        frames, self.ref.frames = self.ref.frames, []
        return {"frames": frames, "state": self.ref.state()}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    mutant = args[1] if len(args) == 2 and args[0] == "--mutant" else None
    serve(Server(mutant).handle)


if __name__ == "__main__":
    main()
