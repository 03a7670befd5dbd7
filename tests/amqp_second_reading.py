"""A second reading of the ``link`` shape of spec/amqp.md, written from the spec alone.

It does not import ``creditflow.model.amqp`` (nor anything of creditflow): it reads the
topology document (AMQ-TOPOLOGY, the ``link`` shape only) itself, keeps its own serial
arithmetic (AMQ-SERIAL), its own state (AMQ-TS: the sender, the FIFO wire toward the
receiver, the receiver, the wire back), its own rules and its own breadth-first search
with the properties PROP-AMQ-* that apply to the shape. ``tests/test_amqp_second_reading.py``
compares it with creditflow on random small topologies (issue 38: a disagreement between
the spec and the model is then found by CI, not by a user).

Rules read: AMQ-LINK-STATE, AMQ-LINK-CREDIT-SND, AMQ-LINK-TRANSFER, AMQ-LINK-FLOW,
AMQ-LINK-DRAIN, AMQ-SESSION-SEND, AMQ-SESSION-RECV, AMQ-SESSION-FLOW, AMQ-BEGIN-ATTACH,
AMQ-POL-CREDIT-WINDOW, AMQ-POL-CREDIT-MANUAL, AMQ-POL-SENDER-CREDIT, AMQ-POL-WINDOW-FIXED,
AMQ-POL-WINDOW-NEVER, AMQ-POL-WINDOW-RING, AMQ-POL-WINDOW-CAPACITY,
AMQ-RMQ-SESSION-WINDOW, AMQ-APP and the four readings of AMQ-READING.

A state is a plain tuple (see :data:`FIELDS`); a frame toward the receiver is
``("T", message)`` or ``("F", delivery_count, credit, drain)`` (a sender's drain answer);
a frame toward the sender is ``("F", next_incoming_id, incoming_window, link)`` with
``link`` ``None`` or ``(delivery_count, credit, drain)``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

SPACE = 1 << 32
HALF = 1 << 31

PROPERTIES = (
    "PROP-AMQ-CREDIT",
    "PROP-AMQ-NONNEG",
    "PROP-AMQ-AGREE",
    "PROP-AMQ-DRAIN",
    "PROP-AMQ-BOUNDS",
    "PROP-AMQ-CONSERVATION",
)
STALL = "PROP-AMQ-NO-STALL"

FIELDS = (
    # the sender: link end, supply, history flag, session end
    "s_dc",
    "s_credit",
    "s_drain",
    "supply",
    "overrun",
    "s_next_out",
    "s_remote_in",
    "fwd",
    # the receiver: link end, application, session end
    "r_dc",
    "r_credit",
    "r_drain",
    "unsettled",  # ((transfer id, message, held), ...) oldest first
    "settled",
    "r_next_in",
    "r_window",
    "grants_used",
    "drains_used",
    "drained",
    "counted",  # since_grant's count; 0 for the other counts
    "back",
)
IX = {name: i for i, name in enumerate(FIELDS)}


def s_add(a: int, n: int) -> int:
    """AMQ-SERIAL: ``a + n`` mod 2^32, for 0 ≤ n < 2^31."""
    assert 0 <= n < HALF, n
    return (a + n) % SPACE


def s_diff(a: int, b: int) -> int:
    """AMQ-SERIAL: the signed distance ``a − b``, undefined at 2^31."""
    d = (a - b) % SPACE
    assert d != HALF
    return d - SPACE if d > HALF else d


@dataclass(frozen=True)
class Reading:
    """The topology as this reading understands it (AMQ-TOPOLOGY, ``link`` shape)."""

    initial: int
    publishes: int
    ignore_in_flight: bool
    sender_window: Mapping[str, Any]
    receiver_window: Mapping[str, Any]
    credit: Mapping[str, Any] | None  # a "window" policy, or None: hand grants only
    grants: tuple[int, ...]
    holds: int
    drains: int

    @staticmethod
    def of(doc: Mapping[str, Any]) -> Reading:
        nodes = {n["id"]: n for n in doc["nodes"]}
        by_kind = [n for n in doc["nodes"]]
        sender = next(n for n in by_kind if n.get("role") == "sender")
        receiver = next(n for n in by_kind if n.get("role") == "receiver")
        # the edges run sender → its session → the receiver's session → receiver
        succ = {e["source"]: e["target"] for e in doc["edges"]}
        s_ses = nodes[succ[sender["id"]]]
        r_ses = nodes[succ[s_ses["id"]]]
        assert succ[r_ses["id"]] == receiver["id"]
        credit = receiver.get("credit")
        if credit is not None and credit.get("policy") == "manual":
            credit = None
        if credit is not None:
            assert credit["policy"] == "window", credit
            credit = {
                "window": credit["window"],
                "threshold": credit["threshold"],
                "count": credit.get("count", "credit"),
                "encoding": credit.get("encoding", "absolute"),
                "renew_on": credit.get("renew_on", "arrival"),
            }
        formula = sender.get("sender_credit", {"formula": "serial"})["formula"]
        return Reading(
            initial=doc["graph"].get("initial", 0),
            publishes=sender["publishes"],
            ignore_in_flight=formula == "ignore_in_flight",
            sender_window=s_ses["window"],
            receiver_window=r_ses["window"],
            credit=credit,
            grants=tuple(receiver.get("grants", ())),
            holds=receiver.get("holds", 0),
            drains=receiver.get("drains", 0),
        )


def begin_window(policy: Mapping[str, Any]) -> int:
    """The incoming-window a session end advertises in its BEGIN (AMQ-BEGIN-ATTACH)."""
    kind = policy["policy"]
    if kind in ("fixed", "never"):
        return int(policy["window"])
    if kind == "ring":
        return int(policy["slots"])
    if kind == "capacity":
        return int(policy["capacity"]) // int(policy["frame"])
    assert kind == "rabbitmq4", kind
    return int(policy["max_incoming_window"])


def _set(state: tuple, **changes: Any) -> tuple:
    out = list(state)
    for name, value in changes.items():
        out[IX[name]] = value
    return tuple(out)


def _get(state: tuple, name: str) -> Any:
    return state[IX[name]]


class SecondReading:
    """The link shape's transition system and its search, from spec/amqp.md."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.t = Reading.of(doc)

    # -- AMQ-BEGIN-ATTACH ---------------------------------------------------------------

    def start(self) -> tuple:
        t, i = self.t, self.t.initial
        window = begin_window(t.receiver_window)
        credit = 0 if t.credit is None else t.credit["window"]
        back: tuple = ()
        if t.credit is not None:  # the policy's first FLOW grants W
            back = (("F", i, max(0, window), (i, credit, False)),)
        values = {
            "s_dc": i,
            "s_credit": 0,
            "s_drain": False,
            "supply": t.publishes,
            "overrun": False,
            "s_next_out": i,
            "s_remote_in": window,
            "fwd": (),
            "r_dc": i,
            "r_credit": credit,
            "r_drain": False,
            "unsettled": (),
            "settled": 0,
            "r_next_in": i,
            "r_window": window,
            "grants_used": 0,
            "drains_used": 0,
            "drained": False,
            "counted": 0,
            "back": back,
        }
        return tuple(values[name] for name in FIELDS)

    # -- the receiver's policies -------------------------------------------------------

    def _flow(self, s: tuple, link: tuple | None) -> tuple:
        """A FLOW toward the sender: the session fields, a negative window sent as 0."""
        return ("F", _get(s, "r_next_in"), max(0, _get(s, "r_window")), link)

    def _ring(self, s: tuple) -> int:
        """AMQ-POL-WINDOW-RING: N − (next_incoming_id − oldest unsettled id)."""
        slots = int(self.t.receiver_window["slots"])
        uns = _get(s, "unsettled")
        return slots if not uns else slots - s_diff(_get(s, "r_next_in"), uns[0][0])

    def _capacity(self, s: tuple) -> int:
        """AMQ-POL-WINDOW-CAPACITY: (C − F · buffered) div F."""
        pol = self.t.receiver_window
        c, f = int(pol["capacity"]), int(pol["frame"])
        return (c - f * len(_get(s, "unsettled"))) // f

    def _counts_settlements(self) -> bool:
        c = self.t.credit
        return c is not None and c["count"] == "since_grant" and c["renew_on"] == "settle"

    def _counts_arrivals(self) -> bool:
        c = self.t.credit
        return c is not None and c["count"] == "since_grant" and c["renew_on"] == "arrival"

    def _renewal(self, s: tuple, point: str) -> tuple[tuple, tuple | None]:
        """AMQ-POL-CREDIT-WINDOW at ``point`` (arrival, settle, resume), with
        AMQ-READING-DRAIN-RESUME; returns the state and the link fields of a renewal."""
        c = self.t.credit
        if c is None or point not in (c["renew_on"], "resume"):
            return s, None
        if _get(s, "r_drain") or (_get(s, "drained") and point != "resume"):
            return s, None
        w, th, credit = c["window"], c["threshold"], _get(s, "r_credit")
        held = len(_get(s, "unsettled"))
        if c["count"] == "credit":
            due = credit <= th
        elif c["count"] == "outstanding":
            due = credit + held <= th
        else:
            due = _get(s, "counted") >= w - th
        if not due:
            return s, None
        to = w if c["renew_on"] == "arrival" or c["count"] == "outstanding" else w - held
        if to <= credit:
            return s, None  # a renewal that would not raise the credit sends nothing
        value = to if c["encoding"] == "absolute" else to - max(0, credit)
        s = _set(s, r_credit=to, counted=0, drained=False)
        return s, (_get(s, "r_dc"), value, False)

    # -- AMQ-TS: the actions -------------------------------------------------------------

    def moves(self, s: tuple) -> Iterator[tuple[str, tuple]]:
        """Every enabled action and its successor."""
        t = self.t
        g = dict(zip(FIELDS, s, strict=True))
        # send: AMQ-LINK-TRANSFER, AMQ-SESSION-SEND
        if g["supply"] > 0 and g["s_credit"] > 0 and g["s_remote_in"] > 0:
            message = t.publishes - g["supply"]
            yield (
                "send",
                _set(
                    s,
                    s_dc=s_add(g["s_dc"], 1),
                    s_credit=g["s_credit"] - 1,
                    supply=g["supply"] - 1,
                    s_next_out=s_add(g["s_next_out"], 1),
                    s_remote_in=g["s_remote_in"] - 1,
                    fwd=(*g["fwd"], ("T", message)),
                ),
            )
        # drain_done: AMQ-LINK-DRAIN, the sender with nothing available answers
        if g["s_drain"] and g["supply"] == 0:
            dc = s_add(g["s_dc"], max(0, g["s_credit"]))
            yield (
                "drain_done",
                _set(s, s_dc=dc, s_credit=0, s_drain=False, fwd=(*g["fwd"], ("F", dc, 0, True))),
            )
        if g["fwd"]:
            yield "take_fwd", self._take_fwd(s, g)
        if g["back"]:
            yield "take_back", self._take_back(s, g)
        # settle: AMQ-APP, the oldest delivery not held
        free = [k for k, (_, _, held) in enumerate(g["unsettled"]) if not held]
        if free:
            yield "settle", self._settle(s, g, free[0])
        # grant: AMQ-POL-CREDIT-MANUAL
        if g["grants_used"] < len(t.grants):
            n = t.grants[g["grants_used"]]
            s2 = _set(s, r_credit=n, counted=0, grants_used=g["grants_used"] + 1, drained=False)
            yield "grant", _set(s2, back=(*g["back"], self._flow(s2, (g["r_dc"], n, g["r_drain"]))))
        # drain: AMQ-LINK-DRAIN, only with credit (AMQ-READING-DRAIN-CREDIT)
        if g["drains_used"] < t.drains and not g["r_drain"] and g["r_credit"] > 0:
            s2 = _set(s, r_drain=True, drains_used=g["drains_used"] + 1)
            yield (
                "drain",
                _set(s2, back=(*g["back"], self._flow(s2, (g["r_dc"], g["r_credit"], True)))),
            )
        # resume: AMQ-LINK-DRAIN, AMQ-READING-DRAIN-RESUME
        if g["drained"] and t.credit is not None:
            s2, link = self._renewal(_set(s, drained=False), "resume")
            if link is not None:
                s2 = _set(s2, back=(*g["back"], self._flow(s2, link)))
            yield "resume", s2

    def _take_fwd(self, s: tuple, g: dict[str, Any]) -> tuple:
        t = self.t
        head, rest = g["fwd"][0], g["fwd"][1:]
        s = _set(s, fwd=rest)
        if head[0] == "F":
            # a drain answer (AMQ-LINK-FLOW, AMQ-LINK-DRAIN): the sender's count; credit
            # what is left of the receiver's limit; at 0 the drain is over
            _, dc, _, drain = head
            left = max(0, s_diff(s_add(g["r_dc"], max(0, g["r_credit"])), dc))
            still = g["r_drain"] and not (drain and left == 0)
            s = _set(s, r_dc=dc, r_credit=left, r_drain=still)
            if g["r_drain"] and not still:
                s = _set(s, drained=True)
            return s
        # a transfer: AMQ-LINK-TRANSFER, AMQ-SESSION-RECV, AMQ-APP
        arrivals = g["settled"] + len(g["unsettled"])
        entry = (g["r_next_in"], head[1], arrivals < t.holds)
        credit = g["r_credit"] - 1
        s = _set(
            s,
            r_dc=s_add(g["r_dc"], 1),
            r_credit=credit,
            unsettled=(*g["unsettled"], entry),
            r_next_in=s_add(g["r_next_in"], 1),
            r_window=g["r_window"] - 1,
            counted=g["counted"] + (1 if self._counts_arrivals() else 0),
        )
        if g["r_drain"] and credit <= 0:  # the transfers used the drain's credit up
            s = _set(s, r_drain=False, drained=True)
        window_flow = False
        pol = t.receiver_window
        kind = pol["policy"]
        if kind == "fixed" and _get(s, "r_window") <= pol["threshold"]:
            s, window_flow = _set(s, r_window=pol["window"]), True
        elif kind == "rabbitmq4" and _get(s, "r_window") <= pol["max_incoming_window"] // 2:
            s, window_flow = _set(s, r_window=pol["max_incoming_window"]), True
        elif kind == "ring":
            s = _set(s, r_window=self._ring(s))
        elif kind == "capacity":
            s = _set(s, r_window=self._capacity(s))
        s, link = self._renewal(s, "arrival")
        if link is not None or window_flow:  # AMQ-READING-ONE-FLOW
            s = _set(s, back=(*g["back"], self._flow(s, link)))
        return s

    def _take_back(self, s: tuple, g: dict[str, Any]) -> tuple:
        """The sender takes a FLOW: AMQ-SESSION-FLOW, AMQ-LINK-CREDIT-SND,
        AMQ-POL-SENDER-CREDIT."""
        _, next_in, window, link = g["back"][0]
        remote = max(0, s_diff(s_add(next_in, window), g["s_next_out"]))
        s = _set(s, back=g["back"][1:], s_remote_in=remote)
        if link is None:
            return s
        dc, credit, drain = link
        serial = max(0, s_diff(s_add(dc, credit), g["s_dc"]))
        mine = credit if self.t.ignore_in_flight else serial
        return _set(s, s_credit=mine, s_drain=drain)

    def _settle(self, s: tuple, g: dict[str, Any], k: int) -> tuple:
        uns = g["unsettled"][:k] + g["unsettled"][k + 1 :]
        s = _set(
            s,
            unsettled=uns,
            settled=g["settled"] + 1,
            counted=g["counted"] + (1 if self._counts_settlements() else 0),
        )
        kind = self.t.receiver_window["policy"]
        window_flow = False
        if kind in ("ring", "capacity"):
            new = self._ring(s) if kind == "ring" else self._capacity(s)
            window_flow = new > g["r_window"]
            s = _set(s, r_window=new)
        s, link = self._renewal(s, "settle")
        if link is not None or window_flow:
            s = _set(s, back=(*g["back"], self._flow(s, link)))
        return s

    # -- the properties ------------------------------------------------------------------

    def _link_in_flight(self, s: tuple) -> bool:
        fwd, back = _get(s, "fwd"), _get(s, "back")
        return bool(fwd) or any(f[3] is not None for f in back)

    def violated(self, s: tuple) -> tuple[str, ...]:
        """The state properties PROP-AMQ-* ``s`` violates."""
        g = dict(zip(FIELDS, s, strict=True))
        t = self.t
        bad = []
        if g["overrun"]:
            bad.append("PROP-AMQ-CREDIT")
        sender_window = begin_window(t.sender_window)
        values = [g["s_credit"], sender_window, g["s_remote_in"], g["r_window"]]
        values.append(begin_window(t.sender_window))  # the receiver's remote window
        frames_ok = all(f[2] >= 0 and (f[3] is None or f[3][1] >= 0) for f in g["back"])
        frames_ok = frames_ok and all(f[2] >= 0 for f in g["fwd"] if f[0] == "F")
        if min(values) < 0 or not frames_ok:
            bad.append("PROP-AMQ-NONNEG")
        in_flight = self._link_in_flight(s)
        if not in_flight and (g["s_dc"] != g["r_dc"] or g["s_credit"] != max(0, g["r_credit"])):
            bad.append("PROP-AMQ-AGREE")
        if not self._drain_ok(g, in_flight):
            bad.append("PROP-AMQ-DRAIN")
        bound = self._bound()
        if bound is not None and len(g["unsettled"]) > bound:
            bad.append("PROP-AMQ-BOUNDS")
        transfers = sum(1 for f in g["fwd"] if f[0] == "T")
        if g["supply"] + transfers + len(g["unsettled"]) + g["settled"] != t.publishes:
            bad.append("PROP-AMQ-CONSERVATION")
        return tuple(bad)

    def _drain_ok(self, g: dict[str, Any], in_flight: bool) -> bool:
        """PROP-AMQ-DRAIN: a drain answer carries 0; an answered drain is over; an
        ended drain (not resumed) leaves credit 0 on both ends and the counts equal."""
        if any(f[0] == "F" and f[3] and f[2] != 0 for f in g["fwd"]):
            return False
        if in_flight:
            return True
        if g["r_drain"] and not g["s_drain"]:
            return False
        if not g["drained"]:
            return True
        return max(0, g["r_credit"]) == 0 and g["s_credit"] == 0 and g["r_dc"] == g["s_dc"]

    def _bound(self) -> int | None:
        """PROP-AMQ-BOUNDS for a client receiver."""
        c = self.t.credit
        if c is None:
            return sum(self.t.grants)
        if c["renew_on"] == "settle" and not self.t.grants:
            return c["window"] + (c["threshold"] if c["count"] == "outstanding" else 0)
        return None

    def complete(self, s: tuple) -> bool:
        """Every message has reached the receiving application (PROP-AMQ-NO-STALL)."""
        return _get(s, "supply") == 0 and not any(f[0] == "T" for f in _get(s, "fwd"))


@dataclass(frozen=True)
class Answer:
    """The whole reachable space, searched breadth first: how many states, and for each
    property violated somewhere the length of its shortest witness."""

    states: frozenset[tuple]
    shortest: Mapping[str, int]


def explore(doc: Mapping[str, Any], limit: int = 50_000) -> Answer:
    """Breadth-first search of every reachable state (no stop at a violation), each
    property's shortest witness length; more than ``limit`` states is an error."""
    m = SecondReading(doc)
    start = m.start()
    depth = {start: 0}
    todo = deque([start])
    shortest: dict[str, int] = {}
    while todo:
        s = todo.popleft()
        d = depth[s]
        found = list(m.violated(s))
        nexts = list(m.moves(s))
        if not nexts and not m.complete(s):
            found.append(STALL)
        for p in found:
            shortest.setdefault(p, d)
        for _, n in nexts:
            if n not in depth:
                depth[n] = d + 1
                todo.append(n)
                if len(depth) > limit:
                    raise RuntimeError(f"more than {limit} states")
    return Answer(frozenset(depth), shortest)
