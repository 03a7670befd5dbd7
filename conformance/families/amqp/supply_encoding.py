"""Z3-AMQ-EVERY-SUPPLY: "holds for every supply" for AMQP topologies, by proof
(the publish, link and consume shapes, Z3-AMQ-ABSTRACTION).

The explorer (AMQ-TS) enumerates one supply. Here the AMQP transition system of a
shape is abstracted to integer counters (Z3-AMQ-ABSTRACTION) with the supply a symbolic
integer ``N0 ≥ 0`` and every count unbounded; the policy's numbers (windows,
thresholds, credits) are the topology's own, so a window of 2^31 − 1 costs what a window
of 4 costs. Candidate lemmas are filtered to an inductive invariant by Houdini
(Z3-AMQ-INVARIANT, as Z3-INVARIANT does for the NET family): every lemma left holds in
the initial state and is kept by every abstract action from any state satisfying all of
them. A property is proved for every supply when the invariant implies it;
PROP-AMQ-NO-STALL when the invariant implies that some action is enabled or every
message has reached its end. Serial-number arithmetic is unwrapped to integers,
which is exact while every distance stays below 2^31 (AMQ-SERIAL); that is one more
obligation (``AMQ-SERIAL``), and nothing is claimed unless it is proved.

The abstraction is written by hand, so it is tested against the model
(tests/test_amqp_every_supply.py): on every reachable state of small instances the
abstraction of every concrete step is an abstract step, the enabled actions agree, and
every property formula has the value of the model's predicate.

Example::

    >>> from creditflow.conformance.inputs.amqp_topologies import load_amqp_preset
    >>> proof = prove_every_supply(load_amqp_preset("rabbitmq4-publish"))
    >>> proof.verdicts["PROP-AMQ-NO-STALL"], proof.verdicts["PROP-AMQ-CONSERVATION"]
    ('proved', 'proved')
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import z3

from creditflow.model.amqp import properties
from creditflow.model.amqp.endpoints import Sender
from creditflow.model.amqp.frames import (
    CreditReply,
    CreditRequest,
    Delivery,
    Disposition,
    Flow,
    Settle,
    Transfer,
    Wire,
)
from creditflow.model.amqp.policies import (
    CreditWindow,
    RabbitSessionWindow,
    WindowFixed,
    WindowNever,
    WindowPolicy,
)
from creditflow.model.amqp.serial import SERIAL_SPACE, diff
from creditflow.model.amqp.session import initial_window
from creditflow.model.amqp.system import ConsumeState, LinkState, PublishState, State
from creditflow.model.amqp.topology import Topology

SERIAL_OBLIGATION: Final = "AMQ-SERIAL"
#: AMQ-SERIAL's part that a max_queue_credit below the client's credit window leaves open
RELAY_COUNTS: Final = "the relay's delivery-counts toward the queue and toward the client"
MAX_DISTANCE: Final = 2**31 - 1
"""The largest serial addend or distance RFC 1982 defines (AMQ-SERIAL)."""

Status = Literal["proved", "not-proved"]
Value = int | bool


class AbstractionError(ValueError):
    """A concrete state outside what the abstraction covers (Z3-AMQ-ABSTRACTION): a test
    that meets one has found a drift between the model and the encoding."""


@dataclass(frozen=True)
class AbstractAction:
    """One abstract action: the model's action ``name`` it stands for, its guard, the
    next value of every variable, and ``side``: constraints on fresh choice variables
    (an abstract step may stand for several concrete ones)."""

    name: str
    guard: z3.BoolRef
    nexts: Mapping[str, z3.ExprRef]
    side: z3.BoolRef


def _max(a: z3.ArithRef, b: z3.ArithRef | int) -> z3.ArithRef:
    out: z3.ArithRef = z3.If(a >= b, a, b)
    return out


def _renewal(policy: WindowPolicy) -> tuple[int, int, bool] | None:
    """``(W, T, renews)`` of a session window renewed to ``W`` at ``T`` (AMQ-POL-WINDOW-
    FIXED, AMQ-RMQ-SESSION-WINDOW) or never (AMQ-POL-WINDOW-NEVER); ``None`` otherwise."""
    if isinstance(policy, RabbitSessionWindow):
        return policy.max_incoming_window, policy.max_incoming_window // 2, True
    if isinstance(policy, WindowFixed):
        return policy.window, policy.threshold, True
    if isinstance(policy, WindowNever):
        return policy.window, -1, False
    return None


def _sender_actions(v: Mapping[str, z3.ExprRef]) -> list[AbstractAction]:
    """The sender's ``send`` and ``take_back`` (AMQ-LINK-TRANSFER, AMQ-SESSION-SEND,
    AMQ-SESSION-FLOW, AMQ-LINK-CREDIT-SND) over the sender's limits and the FLOWs in
    flight to it, shared by the shapes whose sender is a client (Z3-AMQ-ABSTRACTION)."""
    out: list[AbstractAction] = []
    tru = z3.BoolVal(True)

    def act(name: str, guard: z3.BoolRef, side: z3.BoolRef = tru, **changes: z3.ExprRef) -> None:
        nexts = dict(v)
        nexts.update(changes)
        out.append(AbstractAction(name, guard, nexts, side))

    credit_ok = z3.And(v["sLl"] - v["n"] > 0, v["sLs"] - v["n"] > 0)
    act(
        "send",
        z3.And(v["S"] > 0, credit_ok),
        S=v["S"] - 1,
        n=v["n"] + 1,
        F=v["F"] + 1,
        ov=z3.Or(v["ov"], z3.Not(credit_ok)),
    )
    # the last FLOW in flight (with nothing in flight ``wLs``/``wLl`` are the sender's own)
    last_s = _max(v["wLs"], v["n"])
    last_l = z3.If(v["hasL"], _max(v["wLl"], v["n"]), v["sLl"])
    act(
        "take_back",
        v["ne"],
        ne=z3.BoolVal(False),
        hasL=z3.BoolVal(False),
        sLs=last_s,
        sLl=last_l,
        wLs=last_s,
        wLl=last_l,
    )
    # an earlier FLOW: its limits lie between the sender's and the last's
    xs, xl, keep = z3.Int("take_back.s"), z3.Int("take_back.l"), z3.Bool("take_back.keep")
    side = z3.And(
        v["sLs"] <= xs,
        xs <= _max(v["wLs"], v["n"]),
        z3.If(
            v["hasL"],
            z3.Or(
                z3.And(keep, v["sLl"] <= xl, xl <= _max(v["wLl"], v["n"])),
                z3.And(z3.Not(keep), xl == _max(v["wLl"], v["n"])),
            ),
            z3.And(keep, xl == v["sLl"]),
        ),
    )
    act(
        "take_back",
        v["ne"],
        side,
        sLs=xs,
        sLl=xl,
        hasL=z3.And(v["hasL"], keep),
        wLl=z3.If(z3.And(v["hasL"], keep), v["wLl"], xl),
    )
    return out


def _serial_counts(initial: int, near: int) -> tuple[Callable[[int], int], Callable[[int], int]]:
    """``at(k)``: the serial number ``k`` transfers after ``initial``; ``unwrap(x)``: the
    count whose serial number is ``x``, taken within 2^31 of ``near`` (AMQ-SERIAL)."""

    def at(k: int) -> int:
        return (initial + k) % SERIAL_SPACE

    def unwrap(x: int) -> int:
        return near + diff(x, at(near))

    return at, unwrap


def _client_sender(snd: Sender, n: int, F: int, at: Callable[[int], int]) -> dict[str, Value]:
    """A client sender's abstract variables with ``n`` transfers sent and ``F`` on the
    wire (Z3-AMQ-ABSTRACTION); :class:`AbstractionError` when its counts are not ``n``."""
    if snd.link.delivery_count != at(n) or snd.session.next_outgoing_id != at(n):
        raise AbstractionError("the sender's counts are not its transfers sent")
    return {
        "S": snd.supply,
        "n": n,
        "F": F,
        "sLl": n + snd.link.credit,
        "sLs": n + snd.session.remote_incoming_window,
        "ov": snd.overrun,
    }


def _flows_toward_sender(
    a: dict[str, Value], back: Wire, unwrap: Callable[[int], int], link: str
) -> None:
    """Set ``a``'s ``ne``, ``wLs``, ``hasL`` and ``wLl`` from the FLOWs in flight to a
    client sender (nothing in flight: the sender's own limits), Z3-AMQ-ABSTRACTION;
    :class:`AbstractionError` for a FLOW outside it (``link`` names the link)."""
    a["ne"], a["hasL"] = bool(back), False
    a["wLs"], a["wLl"] = a["sLs"], a["sLl"]
    for f in back:
        if not isinstance(f, Flow) or f.session is None:
            raise AbstractionError("a FLOW without session fields toward the sender")
        a["wLs"] = unwrap(f.session.next_incoming_id) + f.session.incoming_window
        if f.link is not None:
            if f.link.drain or f.link.echo:
                raise AbstractionError(f"drain or echo on {link}")
            a["hasL"] = True
            a["wLl"] = unwrap(f.link.delivery_count) + f.link.credit


def _sender_lemmas(
    v: Mapping[str, z3.ExprRef], nonneg: tuple[str, ...], count: str, window: str, credit: str
) -> dict[str, z3.BoolRef]:
    """Candidate lemmas: the counts ``nonneg`` are not negative, and the sender's limits,
    the FLOWs in flight and the receiving end's ``count`` (taken), ``window`` and
    ``credit`` are related (Z3-AMQ-INVARIANT)."""
    lim_s, lim_l = v[count] + v[window], v[count] + v[credit]
    return {
        **{f"{k} >= 0": v[k] >= 0 for k in nonneg},
        "no overrun": z3.Not(v["ov"]),
        "n <= sLl": v["n"] <= v["sLl"],
        "n <= sLs": v["n"] <= v["sLs"],
        f"sLl <= {count} + {credit}": v["sLl"] <= lim_l,
        f"sLs <= {count} + {window}": v["sLs"] <= lim_s,
        f"ne -> wLs = {count} + {window}": z3.Implies(v["ne"], v["wLs"] == lim_s),
        "ne -> sLs <= wLs": z3.Implies(v["ne"], v["sLs"] <= v["wLs"]),
        f"!ne -> sLs = {count} + {window}": z3.Implies(z3.Not(v["ne"]), v["sLs"] == lim_s),
        "hasL -> ne": z3.Implies(v["hasL"], v["ne"]),
        f"hasL -> wLl = {count} + {credit}": z3.Implies(v["hasL"], v["wLl"] == lim_l),
        "hasL -> sLl <= wLl": z3.Implies(v["hasL"], v["sLl"] <= v["wLl"]),
        f"!hasL -> sLl = {count} + {credit}": z3.Implies(z3.Not(v["hasL"]), v["sLl"] == lim_l),
    }


def _serial_parts(v: Mapping[str, z3.ExprRef], largest: int) -> dict[str, z3.BoolRef]:
    """AMQ-SERIAL, by parts named in words (what is open is said, never a formula): every
    serial addition and distance the model computes is defined (the FLOWs' limits within
    2^31 − 1 of the sender's counts, windows and credits below 2^31)."""
    return {
        "the windows and credits below 2^31": z3.BoolVal(largest <= MAX_DISTANCE),
        "a FLOW's session limit and the transfers sent": z3.Implies(
            v["ne"], z3.And(v["wLs"] - v["n"] >= 0, v["wLs"] - v["n"] <= MAX_DISTANCE)
        ),
        "a FLOW's link limit and the sender's delivery-count": z3.Implies(
            v["hasL"], z3.And(v["wLl"] - v["n"] >= 0, v["wLl"] - v["n"] <= MAX_DISTANCE)
        ),
        "the sender's session limit and its transfers sent": v["sLs"] - v["n"] <= MAX_DISTANCE,
        "the sender's link limit and its delivery-count": v["sLl"] - v["n"] <= MAX_DISTANCE,
    }


def _serial_defined(v: Mapping[str, z3.ExprRef], largest: int) -> z3.BoolRef:
    """AMQ-SERIAL: every part of :func:`_serial_parts`."""
    return z3.And(*_serial_parts(v, largest).values())


class _CounterEncoding:
    """What every shape's Z3-AMQ-ABSTRACTION shares: one z3 variable per name in
    ``INTS`` and ``BOOLS``, the abstract actions, and the questions asked of them."""

    INTS: tuple[str, ...]
    BOOLS: tuple[str, ...]
    v: dict[str, z3.ExprRef]
    actions: list[AbstractAction]

    def _credit_window_receiver(self, t: Topology, shape: str) -> None:
        """The numbers of ``t``'s client receiver (``t`` of ``shape``): its session window
        renewed to ``W`` at ``T`` (AMQ-POL-WINDOW-*), its credit window ``C`` renewed at
        ``Tc`` (AMQ-POL-CREDIT-WINDOW) and the ``K`` deliveries it holds."""
        pol = t.receiver.credit
        renewal = _renewal(t.receiver.window)
        assert t.shape == shape and isinstance(pol, CreditWindow) and renewal is not None
        self.topology = t
        self.W, self.T, self.renews = renewal
        self.W0 = initial_window(t.receiver.window)
        self.C, self.Tc = pol.window, pol.threshold
        self.since_grant = pol.count == "since_grant"
        self.delta = pol.encoding == "delta"
        self.K = t.receiver.holds

    def _declare(self) -> None:
        """The variables, then the actions over them (call last in ``__init__``)."""
        self.v = {n: z3.Int(n) for n in self.INTS}
        self.v.update({n: z3.Bool(n) for n in self.BOOLS})
        self.actions = self._actions()

    def _actions(self) -> list[AbstractAction]:
        raise NotImplementedError

    def complete(self) -> z3.BoolRef:
        """Every message reached its end (PROP-AMQ-NO-STALL's ``complete``)."""
        raise NotImplementedError

    def enabled(self, name: str) -> z3.BoolRef:
        """Whether the model's action ``name`` is enabled (its guard without choices)."""
        guards = [a.guard for a in self.actions if a.name == name]
        return z3.Or(*guards) if guards else z3.BoolVal(False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.name for a in self.actions))

    def no_stall(self) -> z3.BoolRef:
        """PROP-AMQ-NO-STALL: something is enabled or everything has arrived."""
        return z3.Or(self.complete(), *(self.enabled(name) for name in self.names))

    def serial_hint(self, open_parts: tuple[str, ...]) -> str:
        """What a user can do when ``open_parts`` of AMQ-SERIAL are not proved."""
        return ""


class _ClientSenderEncoding(_CounterEncoding):
    """The shapes whose sender is a client (publish, link): the receiving end's
    ``count`` (taken), ``window`` and ``credit`` variables are named by the shape."""

    W: int
    W0: int
    C: int
    sender_window0: int

    def _sender_init(self, zeros: tuple[str, ...], window: str, credit: str) -> z3.BoolRef:
        """After BEGIN and ATTACH (AMQ-BEGIN-ATTACH): ``zeros`` at 0, the receiving
        end's first grant in flight, any supply ``N0 ≥ 0``."""
        v = self.v
        return z3.And(
            v["N0"] >= 0,
            v["S"] == v["N0"],
            *(v[k] == 0 for k in zeros),
            v["sLs"] == self.W0,
            v[window] == self.W0,
            v[credit] == self.C,
            z3.Not(v["ov"]),
            v["ne"],
            v["hasL"],
            v["wLs"] == max(0, self.W0),
            v["wLl"] == self.C,
        )

    def _sender_nonneg(self, window: str) -> z3.BoolRef:
        """PROP-AMQ-NONNEG: the sender's credit and windows and the receiving window."""
        v = self.v
        return z3.And(
            v["sLl"] - v["n"] >= 0,
            v["sLs"] - v["n"] >= 0,
            v[window] >= 0,
            z3.BoolVal(self.sender_window0 >= 0),
        )

    def _sender_agree(self, count: str, credit: str) -> z3.BoolRef:
        """PROP-AMQ-AGREE: with nothing in flight the two ends agree on the count and
        the credit."""
        v = self.v
        return z3.Implies(
            z3.And(v["F"] == 0, z3.Not(v["hasL"])),
            z3.And(v["n"] == v[count], v["sLl"] - v["n"] == _max(v[credit], 0)),
        )

    def serial_defined(self) -> z3.BoolRef:
        """AMQ-SERIAL: every serial addition and distance the model computes is defined
        (the FLOW's limits within 2^31 − 1 of the sender's counts, the windows and
        credits added below 2^31)."""
        return _serial_defined(self.v, max(self.W, self.W0, self.C))

    def serial_parts(self) -> dict[str, z3.BoolRef]:
        """AMQ-SERIAL by parts, named in words."""
        return _serial_parts(self.v, max(self.W, self.W0, self.C))


class PublishEncoding(_ClientSenderEncoding):
    """Z3-AMQ-ABSTRACTION for the ``publish`` shape (a client sender, RabbitMQ 4's session
    with its inbound link credit, a quorum queue without a length limit).

    Variables (serial counts unwrapped to integers from the topology's ``initial``):
    ``S`` supply left, ``n`` transfers sent, ``F`` transfers on the wire, ``sLl``/``sLs``
    the sender's link and session limits (``n`` + its credit, ``n`` + its remote incoming
    window), ``bn`` transfers the broker took (its delivery-count and next-incoming-id),
    ``biw`` its incoming window, ``bc`` its link credit, ``P``/``U`` pending enqueues
    and unconfirmed deliveries, ``R`` ready, ``K`` consumed, ``ov`` the overrun flag;
    the FLOWs in flight to the sender as ``ne`` (any), ``wLs`` the session limit of the
    last one, ``hasL`` (one carries link fields) and ``wLl`` the link limit of the last
    such. ``N0`` is the supply (symbolic)."""

    INTS = (
        *("S", "n", "F", "sLl", "sLs", "bn", "biw", "bc"),
        *("P", "U", "R", "K", "wLs", "wLl", "N0"),
    )
    BOOLS = ("ov", "ne", "hasL")

    def __init__(self, t: Topology) -> None:
        assert t.shape == "publish" and t.broker_window is not None
        assert t.broker_credit is not None and t.queue is not None
        renewal = _renewal(t.broker_window)
        assert renewal is not None
        self.topology = t
        self.W, self.T, self.renews = renewal
        self.W0 = initial_window(t.broker_window)
        self.C = t.broker_credit.max_link_credit
        self.sender_window0 = initial_window(t.sender_window)
        self.consumes = t.queue.consumes
        self._declare()

    # -- the abstraction function (Python, for the tests) --------------------------------

    def alpha(self, s: State) -> dict[str, Value]:
        """The abstract state of a concrete one; :class:`AbstractionError` when ``s`` is
        outside the abstraction (Z3-AMQ-ABSTRACTION)."""
        t = self.topology
        if not isinstance(s, PublishState):
            raise AbstractionError("not a publish state")
        i = t.initial
        if not all(isinstance(f, Transfer) for f in s.fwd):
            raise AbstractionError("a frame other than a transfer toward the broker")
        if s.status or s.enqueuer.status != "go" or s.broker.rejected or s.overflow.limit:
            raise AbstractionError("the queue's status moved without a length limit")
        n, F = s.sender.sent, len(s.fwd)
        bn = n - F

        at, unwrap = _serial_counts(i, bn)

        snd, b = s.sender, s.broker
        sender = _client_sender(snd, n, F, at)
        if b.link.delivery_count != at(bn) or b.session.next_incoming_id != at(bn):
            raise AbstractionError("the broker's counts are not its transfers taken")
        if snd.link.drain or snd.link.echo:
            raise AbstractionError("drain or echo on the publish link")
        a: dict[str, Value] = {
            **sender,
            "bn": bn,
            "biw": b.session.incoming_window,
            "bc": b.link.credit,
            "P": len(s.enqueuer.pending),
            "U": len(b.unconfirmed),
            "R": s.ready,
            "K": s.consumed,
            "N0": t.supply,
        }
        _flows_toward_sender(a, s.back, unwrap, "the publish link")
        return a

    # -- the abstract transition system ---------------------------------------------------

    def _flow(self, nexts: dict[str, z3.ExprRef], flow: z3.BoolRef, grant: z3.BoolRef) -> None:
        """A FLOW of the broker with its session fields, and its link fields on a grant."""
        v = self.v
        nexts["ne"] = z3.Or(v["ne"], flow)
        nexts["wLs"] = z3.If(flow, nexts["bn"] + _max(nexts["biw"], 0), v["wLs"])
        nexts["hasL"] = z3.Or(v["hasL"], grant)
        nexts["wLl"] = z3.If(grant, nexts["bn"] + self.C, v["wLl"])

    def _actions(self) -> list[AbstractAction]:
        v = self.v
        C, W, T = self.C, self.W, self.T
        out: list[AbstractAction] = []
        tru = z3.BoolVal(True)

        def act(
            name: str, guard: z3.BoolRef, side: z3.BoolRef = tru, **changes: z3.ExprRef
        ) -> None:
            nexts = dict(v)
            nexts.update(changes)
            out.append(AbstractAction(name, guard, nexts, side))

        out.extend(_sender_actions(v))
        # take_fwd: AMQ-SESSION-RECV, AMQ-RMQ-SESSION-WINDOW, AMQ-RMQ-LINK-CREDIT, enqueue
        nx: dict[str, z3.ExprRef] = dict(v)
        biw1 = v["biw"] - 1
        renew = z3.And(z3.BoolVal(self.renews), biw1 <= T)
        nx.update(
            F=v["F"] - 1,
            bn=v["bn"] + 1,
            biw=z3.If(renew, W, biw1),
            P=v["P"] + 1,
            U=v["U"] + 1,
        )
        grant = z3.And(v["bc"] - 1 <= C // 2, nx["U"] < C)
        nx["bc"] = z3.If(grant, C, v["bc"] - 1)
        self._flow(nx, z3.Or(renew, grant), grant)
        out.append(AbstractAction("take_fwd", v["F"] > 0, nx, tru))
        # apply: the queue applies the oldest enqueue, the broker may grant again
        nx = dict(v)
        nx.update(P=v["P"] - 1, U=v["U"] - 1, R=v["R"] + 1)
        grant = z3.And(v["bc"] <= C // 2, nx["U"] < C)
        nx["bc"] = z3.If(grant, C, v["bc"])
        self._flow(nx, grant, grant)
        out.append(AbstractAction("apply", z3.And(v["P"] > 0, v["U"] > 0), nx, tru))
        if self.consumes:
            act("consume", v["R"] > 0, R=v["R"] - 1, K=v["K"] + 1)
        return out

    def init(self) -> z3.BoolRef:
        """The state after BEGIN and ATTACH (AMQ-BEGIN-ATTACH), any supply ``N0 ≥ 0``."""
        return self._sender_init(("n", "F", "bn", "P", "U", "R", "K", "sLl"), "biw", "bc")

    def complete(self) -> z3.BoolRef:
        """Every message reached its end (PROP-AMQ-NO-STALL's ``complete``)."""
        v = self.v
        return z3.And(v["S"] == 0, v["F"] == 0, v["P"] == 0)

    def properties(self) -> dict[str, z3.BoolRef]:
        """PROP-AMQ-* as formulas over the abstract state (PROP-AMQ-NO-STALL: something
        is enabled or everything has arrived). PROP-AMQ-DRAIN and PROP-AMQ-PUBLISHER-GO
        hold by the shape: no drain on a publish link, and without a length limit the
        queue never leaves ``go`` (the abstraction refuses a state where it did)."""
        v, C = self.v, self.C
        tru = z3.BoolVal(True)
        return {
            "PROP-AMQ-CREDIT": z3.Not(v["ov"]),
            "PROP-AMQ-NONNEG": self._sender_nonneg("biw"),
            "PROP-AMQ-AGREE": self._sender_agree("bn", "bc"),
            "PROP-AMQ-DRAIN": tru,
            "PROP-AMQ-NO-STALL": self.no_stall(),
            "PROP-AMQ-PUBLISHER-GO": tru,
            "PROP-AMQ-BOUNDS": v["U"] <= properties.max_unconfirmed(C),
            "PROP-AMQ-CONSERVATION": v["S"] + v["F"] + v["P"] + v["R"] + v["K"] == v["N0"],
            "PROP-AMQ-RESEND": tru,  # no relay, no leader change on a publish queue
        }

    def lemmas(self) -> dict[str, z3.BoolRef]:
        """Candidate lemmas for Houdini (Z3-AMQ-INVARIANT); the ones that are not
        inductive are dropped, so a wrong candidate costs strength, never soundness."""
        v, C, W, T = self.v, self.C, self.W, self.T
        cands = _sender_lemmas(v, ("S", "n", "F", "bn", "P", "U", "R", "K"), "bn", "biw", "bc")
        cands.update(
            {
                "n = bn + F": v["n"] == v["bn"] + v["F"],
                "bn = P + R + K": v["bn"] == v["P"] + v["R"] + v["K"],
                "U = P": v["U"] == v["P"],
                "S + n = N0": v["S"] + v["n"] == v["N0"],
                "biw <= W": v["biw"] <= max(W, self.W0),
                "biw > T": v["biw"] > T,
                "U < C -> bc > C div 2": z3.Implies(v["U"] < C, v["bc"] > C // 2),
                "bc <= C": v["bc"] <= C,
                "U <= C + C div 2": v["U"] <= C + C // 2,
                "U + bc <= 2C - 1": v["U"] + v["bc"] <= 2 * C - 1,
                "U <= 2C - 1": v["U"] <= 2 * C - 1,
                "wLs - n <= W": z3.Implies(v["ne"], v["wLs"] - v["n"] <= max(W, self.W0)),
                "wLl - n <= C": z3.Implies(v["hasL"], v["wLl"] - v["n"] <= C),
            }
        )
        return cands


class LinkEncoding(_ClientSenderEncoding):
    """Z3-AMQ-ABSTRACTION for the ``link`` shape (a client sender, a client receiver whose
    credit window renews on arrival, counted by credit or since its grant, sent absolute
    or as a delta; no hand grants, no drains; a receiving session window fixed,
    rabbitmq4 or never; ``holds`` deliveries held).

    Variables as :class:`PublishEncoding` for the sender and the FLOWs in flight to it;
    the receiver's ``rn`` arrivals (its delivery-count and next-incoming-id), ``riw`` its
    incoming window, ``rc`` its link credit, ``sg`` arrivals since its last grant,
    ``Uh``/``Uf`` unsettled held / not held, ``Z`` settled."""

    INTS = (
        *("S", "n", "F", "sLl", "sLs", "rn", "riw", "rc", "sg"),
        *("Uh", "Uf", "Z", "wLs", "wLl", "N0"),
    )
    BOOLS = ("ov", "ne", "hasL")

    def __init__(self, t: Topology) -> None:
        self._credit_window_receiver(t, "link")
        self.sender_window0 = initial_window(t.sender_window)
        self._declare()

    def alpha(self, s: State) -> dict[str, Value]:
        """The abstract state of a concrete one (Z3-AMQ-ABSTRACTION)."""
        t = self.topology
        if not isinstance(s, LinkState):
            raise AbstractionError("not a link state")
        if not all(isinstance(f, Transfer) for f in s.fwd):
            raise AbstractionError("a frame other than a transfer toward the receiver")
        snd, r = s.sender, s.receiver
        n, F = snd.sent, len(s.fwd)
        rn = n - F
        i = t.initial

        at, unwrap = _serial_counts(i, rn)

        sender = _client_sender(snd, n, F, at)
        if r.link.delivery_count != at(rn) or r.session.next_incoming_id != at(rn):
            raise AbstractionError("the receiver's counts are not its arrivals")
        if r.arrivals != rn or snd.link.drain or snd.link.echo or r.link.drain or r.drained:
            raise AbstractionError("arrivals, drain or echo outside the abstraction")
        held = sum(1 for _, _, h in r.unsettled if h)
        a: dict[str, Value] = {
            **sender,
            "rn": rn,
            "riw": r.session.incoming_window,
            "rc": r.link.credit,
            "sg": r.since_grant if self.since_grant else 0,
            "Uh": held,
            "Uf": len(r.unsettled) - held,
            "Z": r.settled,
            "N0": t.supply,
        }
        _flows_toward_sender(a, s.back, unwrap, "the link")
        return a

    def _actions(self) -> list[AbstractAction]:
        v = self.v
        out = _sender_actions(v)
        # take_fwd: AMQ-SESSION-RECV, AMQ-LINK-TRANSFER, AMQ-POL-WINDOW-*, AMQ-POL-CREDIT-WINDOW
        nx: dict[str, z3.ExprRef] = dict(v)
        held = v["rn"] < self.K
        riw1 = v["riw"] - 1
        renew = z3.And(z3.BoolVal(self.renews), riw1 <= self.T)
        rc1 = v["rc"] - 1
        sg1 = v["sg"] + 1
        due = sg1 >= self.C - self.Tc if self.since_grant else rc1 <= self.Tc
        grant = z3.And(due, rc1 < self.C)
        sent = self.C - _max(rc1, 0) if self.delta else z3.IntVal(self.C)
        nx.update(
            F=v["F"] - 1,
            rn=v["rn"] + 1,
            riw=z3.If(renew, self.W, riw1),
            rc=z3.If(grant, self.C, rc1),
            sg=z3.If(grant, 0, sg1) if self.since_grant else v["sg"],
            Uh=z3.If(held, v["Uh"] + 1, v["Uh"]),
            Uf=z3.If(held, v["Uf"], v["Uf"] + 1),
        )
        flow = z3.Or(renew, grant)
        nx["ne"] = z3.Or(v["ne"], flow)
        nx["wLs"] = z3.If(flow, nx["rn"] + _max(nx["riw"], 0), v["wLs"])
        nx["hasL"] = z3.Or(v["hasL"], grant)
        nx["wLl"] = z3.If(grant, nx["rn"] + sent, v["wLl"])
        out.append(AbstractAction("take_fwd", v["F"] > 0, nx, z3.BoolVal(True)))
        # settle: AMQ-APP (a fixed or never window and a window renewed on arrival send nothing)
        nx = dict(v)
        nx.update(Uf=v["Uf"] - 1, Z=v["Z"] + 1)
        out.append(AbstractAction("settle", v["Uf"] > 0, nx, z3.BoolVal(True)))
        return out

    def init(self) -> z3.BoolRef:
        """After BEGIN and ATTACH: the receiver's first grant in flight (AMQ-BEGIN-ATTACH)."""
        return self._sender_init(("n", "F", "rn", "sg", "Uh", "Uf", "Z", "sLl"), "riw", "rc")

    def complete(self) -> z3.BoolRef:
        v = self.v
        return z3.And(v["S"] == 0, v["F"] == 0)

    def properties(self) -> dict[str, z3.BoolRef]:
        """PROP-AMQ-* over the abstract state. PROP-AMQ-DRAIN and PROP-AMQ-PUBLISHER-GO
        hold by the class (no drains, no queue); PROP-AMQ-BOUNDS bounds nothing for a
        window renewed on arrival (the model's ``_credit_bound``)."""
        v = self.v
        tru = z3.BoolVal(True)
        return {
            "PROP-AMQ-CREDIT": z3.Not(v["ov"]),
            "PROP-AMQ-NONNEG": self._sender_nonneg("riw"),
            "PROP-AMQ-AGREE": self._sender_agree("rn", "rc"),
            "PROP-AMQ-DRAIN": tru,
            "PROP-AMQ-NO-STALL": self.no_stall(),
            "PROP-AMQ-PUBLISHER-GO": tru,
            "PROP-AMQ-BOUNDS": tru,
            "PROP-AMQ-CONSERVATION": z3.And(
                v["S"] + v["F"] + v["Uh"] + v["Uf"] + v["Z"] == v["N0"],
                v["n"] == v["N0"] - v["S"],
            ),
            "PROP-AMQ-RESEND": tru,  # no queue on a link
        }

    def lemmas(self) -> dict[str, z3.BoolRef]:
        """Candidate lemmas for Houdini (Z3-AMQ-INVARIANT)."""
        v, C, W, T, Tc, K = self.v, self.C, self.W, self.T, self.Tc, self.K
        nonneg = ("S", "n", "F", "rn", "sg", "Uh", "Uf", "Z")
        cands = _sender_lemmas(v, nonneg, "rn", "riw", "rc")
        cands.update(
            {
                "n = rn + F": v["n"] == v["rn"] + v["F"],
                "rn = Uh + Uf + Z": v["rn"] == v["Uh"] + v["Uf"] + v["Z"],
                "Uh = min(rn, holds)": v["Uh"] == z3.If(v["rn"] < K, v["rn"], K),
                "S + n = N0": v["S"] + v["n"] == v["N0"],
                "riw <= W": v["riw"] <= max(W, self.W0),
                "riw > T": v["riw"] > T,
                "rc > Tc": v["rc"] > Tc,
                "rc <= C": v["rc"] <= C,
                "sg < C - Tc": v["sg"] < C - Tc,
                "rc + sg = C": v["rc"] + v["sg"] == C,
                "wLs - n <= W": z3.Implies(v["ne"], v["wLs"] - v["n"] <= max(W, self.W0)),
                "wLl - n <= C": z3.Implies(v["hasL"], v["wLl"] - v["n"] <= C),
            }
        )
        return cands


class ConsumeEncoding(_CounterEncoding):
    """Z3-AMQ-ABSTRACTION for the ``consume`` shape (a quorum queue's credited consumer,
    RabbitMQ 4's relay and session, a client receiver whose credit window renews on
    arrival and that may drain at most once (AMQ-LINK-DRAIN); no hand grants; a
    receiving window fixed, rabbitmq4 or never).

    Variables: ``R`` ready, ``q`` deliveries the queue made, ``qdc`` its consumer's
    delivery-count (``q`` plus the credit drains consumed), ``ccr`` its credit, ``cdr``
    its drain flag, ``CO`` checked out; toward the queue ``Ss`` settlements and at most
    one credit request (``rq``, ``rqdc``, ``rqcr``, ``rqx`` drain); from it ``D``
    deliveries and at most one credit reply after them (``rp``, ``rpdc``, ``rpcr``,
    ``rpx``); the relay's ``rcd``/``rcc`` (client side), ``rqd``/``rqc``/``qdr`` (queue
    side), ``inf`` (a request in flight), the stash ``st`` with its link limit ``stl``
    and drain flag ``stx``, ``fc`` (a delivery forced through); ``sn`` transfers sent
    (the session's next-outgoing-id), ``bLs`` the session's limit (``sn`` + remote
    incoming window); toward the client ``F`` transfers and at most one drain answer
    (``fa``, after ``Fa`` of the transfers, with delivery-count ``fadc``); the receiver's
    ``rn`` arrivals (its next-incoming-id), ``rdc`` its delivery-count, ``rc`` credit,
    ``riw``, ``sg``, ``Uh``/``Uf``/``Z`` as :class:`LinkEncoding`, ``rdr`` draining,
    ``rdd`` drained, ``du`` drains used; toward the relay ``Dd`` dispositions and the
    FLOWs as ``ne``, ``wLs``, ``hasL``, ``wLl`` and ``wLo`` (the link limit of the last
    and of the oldest link FLOW; with none in flight both are the receiver's own limit,
    with no FLOW ``wLs`` is the session's), ``bdr`` (the drain FLOW is among them),
    ``oD``/``lD`` (the oldest / last link FLOW is it) and ``bdl`` its link limit.
    Credit sent absolute only: the limits FLOWs carry never decrease, so the oldest link
    FLOW's is a lower bound of the others' (and of the drain FLOW's after it)."""

    INTS = (
        *("R", "q", "qdc", "ccr", "CO", "Ss", "rqdc", "rqcr", "D", "rpdc", "rpcr"),
        *("rcd", "rcc", "rqd", "rqc", "stl", "sn", "bLs", "F", "Fa", "fadc"),
        *("rn", "rdc", "riw", "rc", "sg", "Uh", "Uf", "Z", "du", "Dd"),
        *("wLs", "wLl", "wLo", "bdl", "N0"),
    )
    BOOLS = (
        *("rq", "rqx", "rp", "rpx", "inf", "qdr", "cdr", "st", "stx", "fc", "fa"),
        *("rdr", "rdd", "ne", "hasL", "bdr", "oD", "lD"),
    )

    def __init__(self, t: Topology) -> None:
        assert t.relay is not None and t.broker_window is not None
        assert t.receiver.drains <= 1
        self._credit_window_receiver(t, "consume")
        self.Q = t.relay.max_queue_credit
        self.drains = t.receiver.drains
        self.broker0 = initial_window(t.broker_window)
        self._declare()

    def alpha(self, s: State) -> dict[str, Value]:
        """The abstract state of a concrete one (Z3-AMQ-ABSTRACTION)."""
        t = self.topology
        if not isinstance(s, ConsumeState):
            raise AbstractionError("not a consume state")
        r, rl, c = s.receiver, s.relay, s.consumer
        F, rn = sum(1 for f in s.fwd if isinstance(f, Transfer)), r.arrivals
        m = rn + F
        q = t.supply - s.msgs.ready
        i = t.initial

        at, unwrap = _serial_counts(i, m)

        if r.session.next_incoming_id != at(rn) or s.session.next_outgoing_id != at(m):
            raise AbstractionError("the sessions' counts are not the transfers")
        if s.msgs.next_msg != q:
            raise AbstractionError("the queue's next message is not its deliveries")
        if rl.client_echo:
            raise AbstractionError("echo outside the abstraction")
        a: dict[str, Value] = {
            "R": s.msgs.ready,
            "q": q,
            "qdc": unwrap(c.delivery_count),
            "ccr": c.credit,
            "cdr": c.drain,
            "CO": len(c.checked_out),
            "Ss": sum(1 for f in s.s2q if isinstance(f, Settle)),
            "rq": False,
            "rqx": False,
            "rqdc": 0,
            "rqcr": 0,
            "D": sum(1 for f in s.pending if isinstance(f, Delivery)),
            "rp": False,
            "rpx": False,
            "rpdc": 0,
            "rpcr": 0,
            "rcd": unwrap(rl.client_dc),
            "rcc": rl.client_credit,
            "rqd": unwrap(rl.queue_dc),
            "rqc": rl.queue_credit,
            "qdr": rl.queue_drain,
            "inf": rl.in_flight,
            "st": rl.stashed is not None,
            "stl": 0,
            "stx": False,
            "fc": rl.forced,
            "sn": m,
            "bLs": m + s.session.remote_incoming_window,
            "F": F,
            "fa": False,
            "Fa": 0,
            "fadc": 0,
            "rn": rn,
            "rdc": unwrap(r.link.delivery_count),
            "riw": r.session.incoming_window,
            "rc": r.link.credit,
            "sg": r.since_grant if self.since_grant else 0,
            "Uh": sum(1 for _, _, h in r.unsettled if h),
            "Uf": sum(1 for _, _, h in r.unsettled if not h),
            "Z": r.settled,
            "rdr": r.link.drain,
            "rdd": r.drained,
            "du": r.drains_used,
            "Dd": sum(1 for f in s.back if isinstance(f, Disposition)),
            "N0": t.supply,
            "ne": False,
            "hasL": False,
            "bdr": False,
            "oD": False,
            "lD": False,
            "bdl": 0,
        }
        if rl.stashed is not None:
            if rl.stashed.echo:
                raise AbstractionError("echo in the stash")
            a["stl"] = unwrap(rl.stashed.delivery_count) + rl.stashed.credit
            a["stx"] = rl.stashed.drain
        reqs = [f for f in s.s2q if isinstance(f, CreditRequest)]
        replies = [f for f in s.pending if isinstance(f, CreditReply)]
        if len(reqs) > 1 or len(replies) > 1 or (replies and s.pending[-1] != replies[0]):
            raise AbstractionError("more than one credit request or reply in flight")
        for req in reqs:
            a.update(rq=True, rqx=req.drain, rqdc=unwrap(req.delivery_count), rqcr=req.credit)
        for rep in replies:
            a.update(rp=True, rpx=rep.drain, rpdc=unwrap(rep.delivery_count), rpcr=rep.credit)
        for k, f in enumerate(s.fwd):
            if isinstance(f, Transfer):
                continue
            if a["fa"] or not isinstance(f, Flow) or f.link is None:
                raise AbstractionError("more than one drain answer toward the client")
            if not f.link.drain or f.link.credit != 0 or f.link.echo:
                raise AbstractionError("a FLOW toward the client that is no drain answer")
            a.update(fa=True, Fa=k, fadc=unwrap(f.link.delivery_count))
        own = int(a["rdc"]) + r.link.credit
        a["wLs"], a["wLl"], a["wLo"] = a["bLs"], own, own
        for f in s.back:
            if isinstance(f, Disposition):
                continue
            if not isinstance(f, Flow) or f.session is None:
                raise AbstractionError("a FLOW without session fields toward the relay")
            a["ne"] = True
            a["wLs"] = unwrap(f.session.next_incoming_id) + f.session.incoming_window
            if f.link is not None:
                if f.link.echo or (f.link.drain and a["bdr"]):
                    raise AbstractionError("echo, or a second drain, on the link")
                if not a["hasL"]:
                    a["wLo"] = unwrap(f.link.delivery_count) + f.link.credit
                    a["oD"] = f.link.drain
                a["hasL"] = True
                if f.link.drain:
                    a["bdl"] = unwrap(f.link.delivery_count) + f.link.credit
                a["bdr"] = a["bdr"] or f.link.drain
                a["lD"] = f.link.drain
                a["wLl"] = unwrap(f.link.delivery_count) + f.link.credit
        return a

    def _react(self, nx: dict[str, z3.ExprRef], x: z3.ArithRef, d: z3.BoolRef) -> None:
        """The relay takes a client FLOW with link limit ``x`` and drain flag ``d``
        (AMQ-RMQ-RELAY): a credit request, or stashed while one is in flight."""
        v = self.v
        c = _max(x - v["rcd"], 0)
        capped = z3.If(c <= self.Q, c, self.Q)
        free = z3.Not(v["inf"])
        nx["rcc"] = z3.If(free, c, v["rcc"])
        nx["rqc"] = z3.If(free, capped, v["rqc"])
        nx["qdr"] = z3.If(free, d, v["qdr"])
        nx["rq"] = z3.Or(v["rq"], free)
        nx["rqx"] = z3.If(free, d, v["rqx"])
        nx["rqdc"] = z3.If(free, v["rqd"], v["rqdc"])
        nx["rqcr"] = z3.If(free, capped, v["rqcr"])
        nx["inf"] = z3.BoolVal(True)
        nx["st"] = z3.If(free, v["st"], z3.BoolVal(True))
        nx["stl"] = z3.If(free, v["stl"], x)
        nx["stx"] = z3.If(free, v["stx"], d)

    def _receiver_flow(
        self, nx: dict[str, z3.ExprRef], flow: z3.BoolRef, grant: z3.BoolRef, sent: z3.ArithRef
    ) -> None:
        """A client FLOW toward the relay: session fields, link fields on a grant."""
        v = self.v
        nx["ne"] = z3.Or(v["ne"], flow)
        nx["wLs"] = z3.If(flow, nx["rn"] + _max(nx["riw"], 0), v["wLs"])
        nx["hasL"] = z3.Or(v["hasL"], grant)
        nx["wLl"] = z3.If(grant, nx["rdc"] + sent, nx["wLl"])
        nx["wLo"] = z3.If(z3.And(grant, z3.Not(v["hasL"])), nx["rdc"] + sent, nx["wLo"])
        nx["oD"] = z3.If(z3.And(grant, z3.Not(v["hasL"])), z3.BoolVal(False), v["oD"])
        nx["lD"] = z3.If(grant, z3.BoolVal(False), v["lD"])

    def _own_limit(self, nx: dict[str, z3.ExprRef]) -> None:
        """With no link FLOW in flight, ``wLl``/``wLo`` are the receiver's own limit."""
        own = nx["rdc"] + nx["rc"]
        nx["wLl"] = z3.If(nx["hasL"], nx["wLl"], own)
        nx["wLo"] = z3.If(nx["hasL"], nx["wLo"], own)

    def _actions(self) -> list[AbstractAction]:
        v, Q = self.v, self.Q
        tru, fls = z3.BoolVal(True), z3.BoolVal(False)
        out: list[AbstractAction] = []

        def add(
            name: str, guard: z3.BoolRef, nx: dict[str, z3.ExprRef], side: z3.BoolRef = tru
        ) -> None:
            # a frame or stash not in flight has its fields at 0 / false (as ``alpha``)
            for flag, keys in (
                ("rq", ("rqdc", "rqcr", "rqx")),
                ("rp", ("rpdc", "rpcr", "rpx")),
                ("st", ("stl", "stx")),
                ("fa", ("Fa", "fadc")),
                ("hasL", ("bdr", "oD", "lD")),
                ("bdr", ("bdl",)),
            ):
                for key in keys:
                    zero = fls if key in self.BOOLS else z3.IntVal(0)
                    nx[key] = z3.If(nx[flag], nx[key], zero)
            out.append(AbstractAction(name, guard, nx, side))

        # queue takes the credit request: credit_active_consumer/4, checkout, drain
        # (AMQ-QQ-CREDITED)
        nx: dict[str, z3.ExprRef] = dict(v)
        credit = _max(v["rqdc"] + v["rqcr"] - v["qdc"], 0)
        k = z3.If(credit <= v["R"], credit, v["R"])
        left = credit - k
        drained = z3.And(v["rqx"], left > 0)
        nx.update(
            D=v["D"] + k,
            R=v["R"] - k,
            q=v["q"] + k,
            qdc=v["qdc"] + k + z3.If(drained, left, 0),
            CO=v["CO"] + k,
            ccr=z3.If(drained, 0, left),
            cdr=v["rqx"],
            rp=tru,
            rpx=v["rqx"],
            rpdc=v["qdc"] + k + z3.If(drained, left, 0),
            rpcr=z3.If(drained, 0, left),
            rq=fls,
        )
        add("queue", v["rq"], nx)
        # queue takes a settlement (AMQ-QQ-SETTLE)
        nx = dict(v)
        nx.update(Ss=v["Ss"] - 1, CO=v["CO"] - 1)
        add("queue", v["Ss"] > 0, nx)
        # relay takes a credit reply without drain (AMQ-RMQ-RELAY, handle_credit_reply0/4)
        nx = dict(v)
        cs = _max(v["stl"] - v["rcd"], 0)
        cs_cap = z3.If(cs <= Q, cs, Q)
        topup = z3.And(z3.Not(v["st"]), v["rpcr"] == 0, v["rcc"] > 0)
        top = z3.If(v["rcc"] <= Q, v["rcc"], Q)
        nx.update(
            rqd=v["rpdc"],
            rp=fls,
            rcc=z3.If(v["st"], cs, v["rcc"]),
            rqc=z3.If(v["st"], cs_cap, z3.If(topup, top, v["rqc"])),
            qdr=z3.If(v["st"], v["stx"], v["qdr"]),
            rq=z3.Or(v["st"], topup),
            rqx=z3.And(v["st"], v["stx"]),
            rqdc=z3.If(z3.Or(v["st"], topup), v["rpdc"], v["rqdc"]),
            rqcr=z3.If(v["st"], cs_cap, z3.If(topup, top, v["rqcr"])),
            st=fls,
            inf=z3.Or(v["st"], topup),
        )
        add("relay", z3.And(v["D"] == 0, v["rp"], z3.Not(v["rpx"])), nx)
        # relay takes a drain reply: another round while the queue used all its credit
        # and the client has more, else the drain ends toward the client (AMQ-RMQ-RELAY)
        nx = dict(v)
        top = z3.If(v["rcc"] <= Q, v["rcc"], Q)
        nx.update(rp=fls, rqc=top, rq=tru, rqx=tru, rqdc=v["rpdc"], rqcr=top)
        again = z3.And(v["D"] == 0, v["rp"], v["rpx"], v["rpdc"] == v["rqd"], v["rcc"] > 0)
        add("relay", again, nx)
        nx = dict(v)
        rcd1 = v["rcd"] + _max(v["rcc"], 0)
        nx.update(
            rp=fls,
            rcd=rcd1,
            rcc=cs,
            rqd=v["rpdc"],
            rqc=z3.If(v["st"], cs_cap, 0),
            qdr=z3.And(v["st"], v["stx"]),
            inf=v["st"],
            rq=v["st"],
            rqx=z3.And(v["st"], v["stx"]),
            rqdc=v["rpdc"],
            rqcr=cs_cap,
            st=fls,
            fa=tru,
            Fa=v["F"],
            fadc=rcd1,
        )
        cs = _max(v["stl"] - rcd1, 0)
        cs_cap = z3.If(cs <= Q, cs, Q)
        nx.update(rcc=z3.If(v["st"], cs, 0), rqc=z3.If(v["st"], cs_cap, 0), rqcr=cs_cap)
        end = z3.And(
            v["D"] == 0,
            v["rp"],
            v["rpx"],
            z3.Not(z3.And(v["rpdc"] == v["rqd"], v["rcc"] > 0)),
        )
        add("relay", end, nx)
        # send: a delivery relayed to the client (sent_pending_delivery/3, AMQ-SESSION-SEND)
        nx = dict(v)
        rcc1 = _max(v["rcc"] - 1, 0)
        rqc1 = _max(v["rqc"] - 1, 0)
        topup = z3.And(rqc1 == 0, rcc1 > 0, z3.Not(v["inf"]))
        top = z3.If(rcc1 <= Q, rcc1, Q)
        nx.update(
            D=v["D"] - 1,
            F=v["F"] + 1,
            sn=v["sn"] + 1,
            rcd=v["rcd"] + 1,
            rcc=rcc1,
            fc=z3.Or(v["fc"], v["rcc"] <= 0),
            rqd=v["rqd"] + 1,
            rqc=z3.If(topup, top, rqc1),
            inf=z3.Or(v["inf"], topup),
            rq=z3.Or(v["rq"], topup),
            rqx=z3.If(topup, v["qdr"], v["rqx"]),
            rqdc=z3.If(topup, v["rqd"] + 1, v["rqdc"]),
            rqcr=z3.If(topup, top, v["rqcr"]),
        )
        add("send", z3.And(v["D"] > 0, v["bLs"] - v["sn"] > 0), nx)
        # take_fwd: the receiver takes a transfer; a drain whose credit it used up ends
        # (AMQ-LINK-DRAIN); a draining receiver grants nothing (AMQ-POL-CREDIT-WINDOW),
        # nor one whose drain has ended, until it resumes (AMQ-READING-DRAIN-RESUME)
        nx = dict(v)
        held = v["rn"] < self.K
        riw1 = v["riw"] - 1
        renew = z3.And(z3.BoolVal(self.renews), riw1 <= self.T)
        rc1 = v["rc"] - 1
        sg1 = v["sg"] + 1
        ends = z3.And(v["rdr"], rc1 <= 0)
        rdr1 = z3.And(v["rdr"], z3.Not(ends))
        rdd1 = z3.Or(v["rdd"], ends)
        due = sg1 >= self.C - self.Tc if self.since_grant else rc1 <= self.Tc
        grant = z3.And(z3.Not(rdr1), z3.Not(rdd1), due, rc1 < self.C)
        sent = self.C - _max(rc1, 0) if self.delta else z3.IntVal(self.C)
        nx.update(
            F=v["F"] - 1,
            Fa=z3.If(v["fa"], v["Fa"] - 1, 0),
            rn=v["rn"] + 1,
            rdc=v["rdc"] + 1,
            riw=z3.If(renew, self.W, riw1),
            rc=z3.If(grant, self.C, rc1),
            sg=z3.If(grant, 0, sg1) if self.since_grant else v["sg"],
            Uh=z3.If(held, v["Uh"] + 1, v["Uh"]),
            Uf=z3.If(held, v["Uf"], v["Uf"] + 1),
            rdr=rdr1,
            rdd=rdd1,
        )
        self._receiver_flow(nx, z3.Or(renew, grant), grant, sent)
        self._own_limit(nx)
        head_transfer = z3.Or(z3.And(v["fa"], v["Fa"] > 0), z3.And(z3.Not(v["fa"]), v["F"] > 0))
        add("take_fwd", head_transfer, nx)
        # take_fwd: the receiver takes the drain answer (AMQ-LINK-FLOW, AMQ-LINK-DRAIN)
        nx = dict(v)
        left = _max(v["rdc"] + _max(v["rc"], 0) - v["fadc"], 0)
        rdr1 = z3.And(v["rdr"], left != 0)
        nx.update(
            fa=fls,
            rdc=v["fadc"],
            rc=left,
            rdr=rdr1,
            rdd=z3.Or(v["rdd"], z3.And(v["rdr"], z3.Not(rdr1))),
        )
        self._own_limit(nx)
        add("take_fwd", z3.And(v["fa"], v["Fa"] == 0), nx)
        # settle: the application settles, a disposition toward the relay (AMQ-APP)
        nx = dict(v)
        nx.update(Uf=v["Uf"] - 1, Z=v["Z"] + 1, Dd=v["Dd"] + 1)
        add("settle", v["Uf"] > 0, nx)
        # drain: the application starts its drain, a FLOW with drain = true (AMQ-LINK-DRAIN)
        nx = dict(v)
        nx.update(rdr=tru, du=v["du"] + 1)
        self._receiver_flow(nx, tru, tru, v["rc"])
        nx.update(bdr=tru, bdl=v["rdc"] + v["rc"], lD=tru, oD=z3.If(v["hasL"], v["oD"], tru))
        add("drain", z3.And(v["du"] < self.drains, z3.Not(v["rdr"]), v["rc"] > 0), nx)
        # resume: after a drain the window policy's renewal point (AMQ-POL-CREDIT-WINDOW)
        nx = dict(v)
        due = v["sg"] >= self.C - self.Tc if self.since_grant else v["rc"] <= self.Tc
        grant = z3.And(z3.Not(v["rdr"]), due, v["rc"] < self.C)
        nx.update(
            rdd=fls,
            rc=z3.If(grant, self.C, v["rc"]),
            sg=z3.If(grant, 0, v["sg"]) if self.since_grant else v["sg"],
        )
        sent = self.C - _max(v["rc"], 0) if self.delta else z3.IntVal(self.C)
        self._receiver_flow(nx, grant, grant, sent)
        self._own_limit(nx)
        add("resume", v["rdd"], nx)
        # take_back: a disposition becomes a settlement toward the queue
        nx = dict(v)
        nx.update(Dd=v["Dd"] - 1, Ss=v["Ss"] + 1)
        add("take_back", v["Dd"] > 0, nx)
        # take_back: the last FLOW in flight (AMQ-SESSION-FLOW, then the relay)
        nx = dict(v)
        last_s = _max(v["wLs"], v["sn"])
        nx.update(ne=fls, hasL=fls, bLs=last_s, wLs=last_s)
        linked = dict(nx)
        self._react(linked, v["wLl"], v["lD"])
        for key in ("rcc", "rqc", "qdr", "rq", "rqx", "rqdc", "rqcr", "inf", "st", "stl", "stx"):
            nx[key] = z3.If(v["hasL"], linked[key], v[key])
        self._own_limit(nx)
        add("take_back", v["ne"], nx)
        # take_back: an earlier FLOW: session limit between; no link fields, the oldest
        # link FLOW (the next oldest's limit between its and the last's), or the only one
        xs, xo, xd = z3.Int("take_back.s"), z3.Int("take_back.o"), z3.Bool("take_back.d")
        between = z3.And(v["bLs"] <= xs, xs <= _max(v["wLs"], v["sn"]))
        nx = dict(v)
        nx.update(bLs=xs)
        add("take_back", v["ne"], nx, between)
        nx = dict(v)
        bdr1 = z3.And(v["bdr"], z3.Not(v["oD"]))
        nx.update(bLs=xs, wLo=xo, bdr=bdr1, oD=xd)
        self._react(nx, v["wLo"], v["oD"])
        add(
            "take_back",
            z3.And(v["ne"], v["hasL"]),
            nx,
            z3.And(
                between,
                v["wLo"] <= xo,
                xo <= v["wLl"],
                z3.Implies(xd, z3.And(bdr1, xo == v["bdl"])),
                z3.Implies(bdr1, xo <= v["bdl"]),  # FLOW limits never decrease
                z3.Not(z3.And(v["oD"], v["lD"])),  # one drain FLOW: then it is the only one
            ),
        )
        nx = dict(v)
        nx.update(bLs=xs, hasL=fls)
        self._react(nx, v["wLl"], v["lD"])
        self._own_limit(nx)
        add("take_back", z3.And(v["ne"], v["hasL"]), nx, between)
        return out

    def init(self) -> z3.BoolRef:
        """After BEGIN and ATTACH: the client's first grant in flight (AMQ-BEGIN-ATTACH)."""
        v = self.v
        zero = (
            *("q", "qdc", "ccr", "CO", "Ss", "rqdc", "rqcr", "D", "rpdc", "rpcr", "rcd"),
            *("rcc", "rqd", "rqc", "stl", "sn", "F", "Fa", "fadc", "rn", "rdc", "sg"),
            *("Uh", "Uf", "Z", "du", "Dd", "bdl"),
        )
        falses = ("rq", "rqx", "rp", "rpx", "inf", "qdr", "cdr", "st", "stx", "fc", "fa")
        return z3.And(
            v["N0"] >= 0,
            v["R"] == v["N0"],
            *(v[k] == 0 for k in zero),
            *(z3.Not(v[k]) for k in (*falses, "rdr", "rdd", "bdr", "oD", "lD")),
            v["bLs"] == self.W0,
            v["riw"] == self.W0,
            v["rc"] == self.C,
            v["ne"],
            v["hasL"],
            v["wLs"] == max(0, self.W0),
            v["wLl"] == self.C,
            v["wLo"] == self.C,
        )

    def complete(self) -> z3.BoolRef:
        v = self.v
        return z3.And(v["R"] == 0, v["D"] == 0, v["F"] == 0)

    def properties(self) -> dict[str, z3.BoolRef]:
        """PROP-AMQ-* over the abstract state (PROP-AMQ-DRAIN as the model's
        ``drain_ok``); PROP-AMQ-PUBLISHER-GO holds by the class (no publisher)."""
        v = self.v
        tru = z3.BoolVal(True)
        client_busy = z3.Or(v["F"] > 0, v["fa"], v["hasL"], v["st"])
        queue_busy = z3.Or(v["inf"], v["rq"], v["D"] > 0, v["rp"])
        sender_draining = z3.Or(v["inf"], v["D"] > 0, v["rp"])
        drain = z3.Or(
            client_busy,
            z3.And(
                z3.Not(z3.And(v["rdr"], z3.Not(sender_draining))),
                z3.Or(
                    z3.Not(v["rdd"]),
                    z3.And(_max(v["rc"], 0) == 0, v["rcc"] == 0, v["rdc"] == v["rcd"]),
                ),
            ),
        )
        return {
            "PROP-AMQ-CREDIT": z3.Not(v["fc"]),
            "PROP-AMQ-NONNEG": z3.And(
                v["rcc"] >= 0,
                v["rqc"] >= 0,
                v["ccr"] >= 0,
                v["bLs"] - v["sn"] >= 0,
                v["riw"] >= 0,
                z3.BoolVal(self.broker0 >= 0),
                z3.Implies(v["rq"], v["rqcr"] >= 0),
                z3.Implies(v["rp"], v["rpcr"] >= 0),
            ),
            "PROP-AMQ-AGREE": z3.And(
                z3.Or(
                    client_busy,
                    z3.And(v["rcd"] == v["rdc"], v["rcc"] == _max(v["rc"], 0)),
                ),
                z3.Or(queue_busy, z3.And(v["rqd"] == v["qdc"], v["rqc"] == v["ccr"])),
            ),
            "PROP-AMQ-DRAIN": drain,
            "PROP-AMQ-NO-STALL": self.no_stall(),
            "PROP-AMQ-PUBLISHER-GO": tru,
            "PROP-AMQ-BOUNDS": v["rqc"] <= self.Q,
            "PROP-AMQ-CONSERVATION": z3.And(
                v["R"] + v["D"] + v["F"] + v["Uh"] + v["Uf"] + v["Z"] == v["N0"],
                v["CO"] == v["D"] + v["F"] + v["Uh"] + v["Uf"] + v["Dd"] + v["Ss"],
            ),
            # PROP-AMQ-RESEND: the queue's deliveries buffered at the session (``D``);
            # leader changes are outside the abstraction (encoding_for refuses them)
            "PROP-AMQ-RESEND": v["D"] <= self.Q,
        }

    def serial_defined(self) -> z3.BoolRef:
        """AMQ-SERIAL: the limits the relay, the queue and the receiver compute stay
        within 2^31 − 1 of the counts they are compared with."""
        return z3.And(*self.serial_parts().values())

    def serial_parts(self) -> dict[str, z3.BoolRef]:
        """AMQ-SERIAL by parts, named in words (what is open is said, never a formula)."""
        v = self.v

        def near(x: z3.ArithRef, y: z3.ArithRef) -> z3.BoolRef:
            return z3.And(x - y <= MAX_DISTANCE, y - x <= MAX_DISTANCE)

        return {
            "the windows, credits and max_queue_credit below 2^31": z3.BoolVal(
                max(self.W, self.W0, self.C, self.Q) <= MAX_DISTANCE
            ),
            "a client FLOW's session limit and the transfers the broker sent": near(
                v["wLs"], v["sn"]
            ),
            "the last client FLOW's link limit and the relay's delivery-count toward the "
            "client": near(v["wLl"], v["rcd"]),
            "the oldest client FLOW's link limit and the relay's delivery-count toward the "
            "client": near(v["wLo"], v["rcd"]),
            "the stashed client FLOW's link limit and the relay's delivery-count toward the "
            "client": z3.Implies(v["st"], near(v["stl"], v["rcd"])),
            "a credit request's link limit and the queue consumer's delivery-count": z3.Implies(
                v["rq"], near(v["rqdc"] + v["rqcr"], v["qdc"])
            ),
            "a credit reply's delivery-count and the relay's delivery-count toward the "
            "queue": z3.Implies(v["rp"], near(v["rpdc"], v["rqd"])),
            "the drain answer's delivery-count and the receiver's link limit": z3.Implies(
                v["fa"], near(v["rdc"] + v["rc"], v["fadc"])
            ),
            RELAY_COUNTS: near(v["rqd"], v["rcd"]),
        }

    def serial_hint(self, open_parts: tuple[str, ...]) -> str:
        """What a user can do when ``open_parts`` of AMQ-SERIAL are not proved: the relay's
        two delivery-counts stay equal (and the proof keeps them so) when the queue is
        given all of the client's credit at once, max_queue_credit ≥ the credit window."""
        if RELAY_COUNTS in open_parts and self.Q < self.C:
            return (
                f"max_queue_credit {self.Q:,} is below the client's credit window "
                f"{self.C:,}, so a drain advances the relay's two delivery-counts by "
                f"different amounts and the invariant found does not bound how far apart "
                f"they drift; with max_queue_credit ≥ {self.C:,} (RabbitMQ's default is "
                f"256) they stay equal and the proof is complete"
            )
        return ""

    def lemmas(self) -> dict[str, z3.BoolRef]:
        """Candidate lemmas for Houdini (Z3-AMQ-INVARIANT)."""
        v, C, W, T, Tc, K, Q = self.v, self.C, self.W, self.T, self.Tc, self.K, self.Q
        nonneg = ("R", "q", "ccr", "CO", "Ss", "D", "rcc", "rqc", "F", "Fa", "rn", "sg")
        cands: dict[str, z3.BoolRef] = {f"{k} >= 0": v[k] >= 0 for k in nonneg}
        cands.update({f"{k} >= 0": v[k] >= 0 for k in ("Uh", "Uf", "Z", "Dd", "du")})
        rl = v["rdc"] + v["rc"]
        idle = z3.And(z3.Not(v["rdr"]), z3.Not(v["rdd"]))
        no_drain = z3.And(
            z3.Not(v["rdr"]), z3.Not(v["rdd"]), z3.Not(v["bdr"]), z3.Not(v["fa"]),
            z3.Not(v["qdr"]), z3.Not(v["rqx"]), z3.Not(v["rpx"]), z3.Not(v["stx"]),
        )  # fmt: skip
        alive = z3.Or(
            v["bdr"],
            z3.And(v["st"], v["stx"]),
            z3.And(v["inf"], v["qdr"]),
            v["fa"],
        )
        cands.update(
            {
                "du <= drains": v["du"] <= self.drains,
                "du = 0 -> no drain yet": z3.Implies(v["du"] == 0, no_drain),
                "q + R = N0": v["q"] + v["R"] == v["N0"],
                "q = sn + D": v["q"] == v["sn"] + v["D"],
                "qdc >= q": v["qdc"] >= v["q"],
                "rqd = rcd": v["rqd"] == v["rcd"],
                "rcd >= sn": v["rcd"] >= v["sn"],
                "rdc >= rn": v["rdc"] >= v["rn"],
                "du = 0 -> rcd = sn": z3.Implies(v["du"] == 0, v["rcd"] == v["sn"]),
                "du = 0 -> rdc = rn": z3.Implies(v["du"] == 0, v["rdc"] == v["rn"]),
                "du = 0 -> qdc = q": z3.Implies(v["du"] == 0, v["qdc"] == v["q"]),
                "rqd <= qdc": v["rqd"] <= v["qdc"],
                "sn = rn + F": v["sn"] == v["rn"] + v["F"],
                "Fa <= F": v["Fa"] <= v["F"],
                "fa -> fadc <= rcd": z3.Implies(v["fa"], v["fadc"] <= v["rcd"]),
                "fa -> fadc = rcd": z3.Implies(v["fa"], v["fadc"] == v["rcd"]),
                "fa -> rdc + Fa <= fadc": z3.Implies(v["fa"], v["rdc"] + v["Fa"] <= v["fadc"]),
                "fa -> fadc <= rdc + rc": z3.Implies(v["fa"], v["fadc"] <= rl),
                "fa -> F = Fa": z3.Implies(v["fa"], v["F"] == v["Fa"]),
                "fa -> fadc + F - Fa = rcd": z3.Implies(
                    v["fa"], v["fadc"] + v["F"] - v["Fa"] == v["rcd"]
                ),
                "fa & !rdr -> fadc <= rdc": z3.Implies(
                    z3.And(v["fa"], z3.Not(v["rdr"])), v["fadc"] <= v["rdc"]
                ),
                "rqc = rcc": v["rqc"] == v["rcc"],
                "rdr -> drain alive": z3.Implies(v["rdr"], alive),
                "rdr & qdr -> rcd + rcc = rdc + rc": z3.Implies(
                    z3.And(v["rdr"], v["qdr"]), v["rcd"] + v["rcc"] == rl
                ),
                "rdr & fa -> fadc = rdc + rc": z3.Implies(
                    z3.And(v["rdr"], v["fa"]), v["fadc"] == rl
                ),
                "rdr & bdr -> bdl = rdc + rc": z3.Implies(
                    z3.And(v["rdr"], v["bdr"]), v["bdl"] == rl
                ),
                "rdr & stx -> stl = rdc + rc": z3.Implies(
                    z3.And(v["rdr"], v["stx"]), v["stl"] == rl
                ),
                "qdr & !rdr -> rcd + rcc <= rdc": z3.Implies(
                    z3.And(v["qdr"], z3.Not(v["rdr"])), v["rcd"] + v["rcc"] <= v["rdc"]
                ),
                "stx & !rdr -> stl <= rdc": z3.Implies(
                    z3.And(v["stx"], z3.Not(v["rdr"])), v["stl"] <= v["rdc"]
                ),
                "bdr & !rdr -> bdl <= rdc": z3.Implies(
                    z3.And(v["bdr"], z3.Not(v["rdr"])), v["bdl"] <= v["rdc"]
                ),
                "oD -> wLo = bdl": z3.Implies(v["oD"], v["wLo"] == v["bdl"]),
                "lD -> wLl = bdl": z3.Implies(v["lD"], v["wLl"] == v["bdl"]),
                "bdr -> wLo <= bdl <= wLl": z3.Implies(
                    v["bdr"], z3.And(v["wLo"] <= v["bdl"], v["bdl"] <= v["wLl"])
                ),
                "rdr -> !rdd": z3.Implies(v["rdr"], z3.Not(v["rdd"])),
                "rdr -> !hasL | bdr": z3.Implies(v["rdr"], z3.Or(z3.Not(v["hasL"]), v["bdr"])),
                "rdr -> (hasL -> lD)": z3.Implies(z3.And(v["rdr"], v["hasL"]), v["lD"]),
                "rdr & st & !bdr -> stx": z3.Implies(
                    z3.And(v["rdr"], v["st"], z3.Not(v["bdr"])), v["stx"]
                ),
                "bdr -> rdr | ...": z3.Implies(v["bdr"], z3.Or(v["rdr"], v["hasL"])),
                "bdr -> hasL": z3.Implies(v["bdr"], v["hasL"]),
                "lD -> bdr": z3.Implies(v["lD"], v["bdr"]),
                "oD -> bdr": z3.Implies(v["oD"], v["bdr"]),
                "stx -> st": z3.Implies(v["stx"], v["st"]),
                "rqx -> rq": z3.Implies(v["rqx"], v["rq"]),
                "rpx -> rp": z3.Implies(v["rpx"], v["rp"]),
                "qdr -> inf": z3.Implies(v["qdr"], v["inf"]),
                "rq -> rqx = qdr": z3.Implies(v["rq"], v["rqx"] == v["qdr"]),
                "rp -> rpx = qdr": z3.Implies(v["rp"], v["rpx"] == v["qdr"]),
                "rpx -> rpcr = 0": z3.Implies(v["rpx"], v["rpcr"] == 0),
                "cdr -> ccr = 0": z3.Implies(v["cdr"], v["ccr"] == 0),
                "rn = Uh + Uf + Z": v["rn"] == v["Uh"] + v["Uf"] + v["Z"],
                "Uh = min(rn, holds)": v["Uh"] == z3.If(v["rn"] < K, v["rn"], K),
                "CO = D + F + Uh + Uf + Dd + Ss": v["CO"]
                == v["D"] + v["F"] + v["Uh"] + v["Uf"] + v["Dd"] + v["Ss"],
                "no forced delivery": z3.Not(v["fc"]),
                "rq -> inf": z3.Implies(v["rq"], v["inf"]),
                "rp -> inf": z3.Implies(v["rp"], v["inf"]),
                "st -> inf": z3.Implies(v["st"], v["inf"]),
                "inf -> rq | rp": z3.Implies(v["inf"], z3.Or(v["rq"], v["rp"])),
                "!(rq & rp)": z3.Not(z3.And(v["rq"], v["rp"])),
                "D > 0 -> rp": z3.Implies(v["D"] > 0, v["rp"]),
                "rq -> rqdc = rqd": z3.Implies(v["rq"], v["rqdc"] == v["rqd"]),
                "rq -> rqcr = rqc": z3.Implies(v["rq"], v["rqcr"] == v["rqc"]),
                "rq -> qdc = rqd": z3.Implies(v["rq"], v["qdc"] == v["rqd"]),
                "rp -> rpdc = qdc": z3.Implies(v["rp"], v["rpdc"] == v["qdc"]),
                "rp -> rpcr = ccr": z3.Implies(v["rp"], v["rpcr"] == v["ccr"]),
                "rp -> rqd + D <= rpdc": z3.Implies(v["rp"], v["rqd"] + v["D"] <= v["rpdc"]),
                "rp & !rpx -> rqd + D = rpdc": z3.Implies(
                    z3.And(v["rp"], z3.Not(v["rpx"])), v["rqd"] + v["D"] == v["rpdc"]
                ),
                "rp -> rqc = D + ccr": z3.Implies(
                    z3.And(v["rp"], z3.Not(v["rpx"])), v["rqc"] == v["D"] + v["ccr"]
                ),
                "rpx -> rqd + rqc = rpdc": z3.Implies(v["rpx"], v["rqd"] + v["rqc"] == v["rpdc"]),
                "rp & rpcr > 0 -> R = 0": z3.Implies(z3.And(v["rp"], v["rpcr"] > 0), v["R"] == 0),
                "rpx & rpdc > rqd + D -> R = 0": z3.Implies(
                    z3.And(v["rpx"], v["rpdc"] > v["rqd"] + v["D"]), v["R"] == 0
                ),
                "!inf -> R = 0 | rcc = 0": z3.Implies(
                    z3.Not(v["inf"]), z3.Or(v["R"] == 0, v["rcc"] == 0)
                ),
                "!inf -> rqc = ccr": z3.Implies(z3.Not(v["inf"]), v["rqc"] == v["ccr"]),
                "!inf -> qdc = rqd": z3.Implies(z3.Not(v["inf"]), v["qdc"] == v["rqd"]),
                "rqc <= rcc": v["rqc"] <= v["rcc"],
                "rqc <= Q": v["rqc"] <= Q,
                "rcd + rcc <= rdc + rc": v["rcd"] + v["rcc"] <= rl,
                "!hasL & !st -> rcd + rcc = rdc + rc": z3.Implies(
                    z3.And(z3.Not(v["hasL"]), z3.Not(v["st"])), v["rcd"] + v["rcc"] == rl
                ),
                "st -> stl <= rdc + rc": z3.Implies(v["st"], v["stl"] <= rl),
                "st & !hasL -> stl = rdc + rc": z3.Implies(
                    z3.And(v["st"], z3.Not(v["hasL"])), v["stl"] == rl
                ),
                "st -> rcd <= stl": z3.Implies(v["st"], v["rcd"] <= v["stl"]),
                "st -> rcd + rcc <= stl": z3.Implies(v["st"], v["rcd"] + v["rcc"] <= v["stl"]),
                "hasL -> rcd + rcc <= wLo": z3.Implies(v["hasL"], v["rcd"] + v["rcc"] <= v["wLo"]),
                "st & hasL -> stl <= wLo": z3.Implies(
                    z3.And(v["st"], v["hasL"]), v["stl"] <= v["wLo"]
                ),
                "wLo <= wLl": v["wLo"] <= v["wLl"],
                "!hasL -> wLo = wLl": z3.Implies(z3.Not(v["hasL"]), v["wLo"] == v["wLl"]),
                "wLl = rdc + rc": v["wLl"] == rl,
                "sn <= bLs": v["sn"] <= v["bLs"],
                "bLs <= rn + riw": v["bLs"] <= v["rn"] + v["riw"],
                "ne -> wLs = rn + riw": z3.Implies(v["ne"], v["wLs"] == v["rn"] + v["riw"]),
                "ne -> bLs <= wLs": z3.Implies(v["ne"], v["bLs"] <= v["wLs"]),
                "!ne -> bLs = rn + riw": z3.Implies(
                    z3.Not(v["ne"]), v["bLs"] == v["rn"] + v["riw"]
                ),
                "!ne -> wLs = bLs": z3.Implies(z3.Not(v["ne"]), v["wLs"] == v["bLs"]),
                "hasL -> ne": z3.Implies(v["hasL"], v["ne"]),
                "riw <= W": v["riw"] <= max(W, self.W0),
                "riw > T": v["riw"] > T,
                "rc > Tc": v["rc"] > Tc,
                "idle -> rc > Tc": z3.Implies(idle, v["rc"] > Tc),
                "rc >= 0": v["rc"] >= 0,
                "rdd -> rc = 0": z3.Implies(v["rdd"], v["rc"] == 0),
                "rdd -> rcd + rcc = rdc": z3.Implies(
                    z3.And(v["rdd"], z3.Not(v["fa"])), v["rcd"] + v["rcc"] == v["rdc"]
                ),
                "rc <= C": v["rc"] <= C,
                "sg < C - Tc": v["sg"] < C - Tc,
                "rc + sg = C": v["rc"] + v["sg"] == C,
                "rc >= F + rcc": v["rc"] >= v["F"] + v["rcc"],
                "rdc + rc >= rcd + rcc": rl >= v["rcd"] + v["rcc"],
                "!fa -> rdc + F <= rcd": z3.Implies(z3.Not(v["fa"]), v["rdc"] + v["F"] <= v["rcd"]),
                "!fa -> rdc + F = rcd": z3.Implies(z3.Not(v["fa"]), v["rdc"] + v["F"] == v["rcd"]),
                "fa -> rdc + F <= fadc": z3.Implies(v["fa"], v["rdc"] + v["F"] <= v["fadc"]),
            }
        )
        return cands


Encoding = PublishEncoding | LinkEncoding | ConsumeEncoding


@dataclass(frozen=True)
class AmqpProof:
    """What Z3-AMQ-EVERY-SUPPLY established for a topology: per PROP-AMQ-* ``proved``
    (for every supply) or ``not-proved`` (the invariant does not imply it: violated at
    some supply, or the invariant is too weak — not a finding by itself); the inductive
    invariant's lemmas, those dropped, the obligation AMQ-SERIAL, and the time taken."""

    topology: str
    shape: str
    verdicts: dict[str, Status]
    lemmas: tuple[str, ...]
    dropped: tuple[str, ...]
    serial: Status
    seconds: float
    queries: int = 0
    numbers: dict[str, int] = field(default_factory=dict)
    #: AMQ-SERIAL's parts not proved, in words (empty when ``serial`` is proved)
    serial_open: tuple[str, ...] = ()
    #: what a user can do about them (empty when nothing specific is known)
    serial_hint: str = ""

    @property
    def proved(self) -> bool:
        """Every property and AMQ-SERIAL proved: the topology holds for every supply."""
        return self.serial == "proved" and all(s == "proved" for s in self.verdicts.values())

    @property
    def status(self) -> str:
        """FAM-EVERY-SUPPLY (the engine's ``SupplyProof`` reading): ``proved`` or ``open``
        (a property not proved is searched for by the explorer, which finds its witness)."""
        return "proved" if self.proved else "open"

    @property
    def properties(self) -> dict[str, bool | None]:
        """FAM-EVERY-SUPPLY: each PROP-AMQ-* proved for every supply (True) or open (None)."""
        return {p: (True if s == "proved" else None) for p, s in self.verdicts.items()}

    @property
    def open(self) -> tuple[str, ...]:
        """The properties not proved, in the order of PROP-AMQ-*."""
        return tuple(p for p, s in self.verdicts.items() if s != "proved")

    @property
    def statement(self) -> str:
        """What was proved, in words (Z3-AMQ-EVERY-SUPPLY)."""
        nums = ", ".join(f"{k}={v:,}" for k, v in self.numbers.items())
        return (
            f"an inductive invariant of {len(self.lemmas)} lemmas over the {self.shape} "
            f"shape's transition relation ({nums}; supply symbolic, every count unbounded) "
            f"implies every PROP-AMQ-* (Z3-AMQ-EVERY-SUPPLY)"
        )


class DeadlinePassed(TimeoutError):
    """FAM-DEADLINE: the proof's deadline (``--timeout``/``--prove-timeout``) passed
    before it was done; nothing is claimed."""


def _valid(
    hyp: z3.BoolRef, goal: z3.BoolRef, timeout_ms: int, deadline: float | None = None
) -> tuple[bool, z3.ModelRef | None]:
    """Whether ``hyp`` implies ``goal``; within ``timeout_ms`` and, when given, before
    ``deadline`` (``time.monotonic()``; FAM-DEADLINE: :class:`DeadlinePassed`)."""
    if deadline is not None:
        left = int((deadline - time.monotonic()) * 1000)
        if left <= 0:
            raise DeadlinePassed("the deadline passed")
        timeout_ms = min(timeout_ms, left)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(hyp, z3.Not(goal))
    r = solver.check()
    if r == z3.unknown and deadline is not None and time.monotonic() >= deadline:
        raise DeadlinePassed("the deadline passed")
    return r == z3.unsat, solver.model() if r == z3.sat else None


def houdini(
    enc: Encoding, timeout_ms: int = 10_000, deadline: float | None = None
) -> tuple[dict[str, z3.BoolRef], list[str], int]:
    """Z3-AMQ-INVARIANT: the largest subset of :meth:`lemmas` that holds initially and
    is kept by every abstract action; returns it, the dropped names and the queries.
    ``deadline`` (``time.monotonic()``): FAM-DEADLINE, :class:`DeadlinePassed` past it."""
    lemmas = enc.lemmas()
    dropped: list[str] = []
    queries = 0

    def drop(model: z3.ModelRef | None, goals: Mapping[str, z3.BoolRef]) -> bool:
        gone = [
            n
            for n, f in goals.items()
            if model is None or z3.is_false(model.eval(f, model_completion=True))
        ]
        for n in gone:
            dropped.append(n)
            del lemmas[n]
        return bool(gone)

    ok, model = _valid(enc.init(), z3.And(*lemmas.values()), timeout_ms, deadline)
    queries += 1
    while not ok and drop(model, dict(lemmas)):
        ok, model = _valid(enc.init(), z3.And(*lemmas.values()), timeout_ms, deadline)
        queries += 1
    changed = True
    while changed:
        changed = False
        for a in enc.actions:
            while True:
                pairs = [(enc.v[k], a.nexts[k]) for k in enc.v]
                post = {n: z3.substitute(f, *pairs) for n, f in lemmas.items()}
                hyp = z3.And(a.guard, a.side, *lemmas.values())
                ok, model = _valid(hyp, z3.And(*post.values()), timeout_ms, deadline)
                queries += 1
                if ok:
                    break
                if not drop(model, post):
                    raise RuntimeError(f"Houdini: {a.name} gave up (Z3 unknown)")
                changed = True
    return lemmas, dropped, queries


SUPPORTED: Final = (
    "publish (a RabbitMQ 4 session whose window is fixed, rabbitmq4 or never, a queue "
    "without a length limit); link and consume (a client credit window renewed on "
    "arrival, no hand grants, a client window fixed, rabbitmq4 or never; link: no "
    "drains; consume: the credit sent absolute, at most one drain)"
)


def encoding_for(t: Topology) -> Encoding | None:
    """The abstraction of ``t``'s shape when Z3-AMQ-ABSTRACTION covers it, else ``None``
    (then "for every supply" stays not established, SCOPE-EXIT)."""
    if t.shape == "link":
        c, r = t.receiver.credit, t.receiver
        if not isinstance(c, CreditWindow) or c.renew_on != "arrival":
            return None
        if r.grants or r.drains or _renewal(r.window) is None:
            return None
        if t.sender_credit.formula != "serial":
            return None
        return LinkEncoding(t)
    if t.shape == "consume":
        c, r = t.receiver.credit, t.receiver
        if not isinstance(c, CreditWindow) or c.renew_on != "arrival":
            return None
        if c.encoding != "absolute":
            return None
        if r.grants or r.drains > 1 or _renewal(r.window) is None:
            return None
        if t.queue is not None and t.queue.leader_changes:  # AMQ-FAULT-LEADER-CHANGE
            return None
        return ConsumeEncoding(t)
    if t.shape != "publish" or t.broker_window is None or t.queue is None:
        return None
    if _renewal(t.broker_window) is None or t.queue.max_length is not None:
        return None
    if t.sender_credit.formula != "serial" or t.broker_credit is None:
        return None
    return PublishEncoding(t)


def prove_every_supply(
    t: Topology, timeout_ms: int = 10_000, deadline: float | None = None
) -> AmqpProof | None:
    """Z3-AMQ-EVERY-SUPPLY for ``t``; ``None`` when its shape or policies are outside
    Z3-AMQ-ABSTRACTION. ``deadline`` (``time.monotonic()``): FAM-DEADLINE, every query
    ends by then or :class:`DeadlinePassed` is raised (never a proof)."""
    started = time.perf_counter()
    enc = encoding_for(t)
    if enc is None:
        return None
    lemmas, dropped, queries = houdini(enc, timeout_ms, deadline)
    inv = z3.And(*lemmas.values()) if lemmas else z3.BoolVal(True)
    verdicts: dict[str, Status] = {}
    for prop, formula in enc.properties().items():
        ok, _ = _valid(inv, formula, timeout_ms, deadline)
        queries += 1
        verdicts[prop] = "proved" if ok else "not-proved"
    assert tuple(verdicts) == properties.ALL
    ok, _ = _valid(inv, enc.serial_defined(), timeout_ms, deadline)
    queries += 1
    serial_open: list[str] = []
    if not ok:  # say which distance is not bounded (SCOPE-TEXT), never a formula
        for words, part in enc.serial_parts().items():
            held, _ = _valid(inv, part, timeout_ms, deadline)
            queries += 1
            if not held:
                serial_open.append(words)
    return AmqpProof(
        topology=t.name,
        shape=t.shape,
        verdicts=verdicts,
        lemmas=tuple(lemmas),
        dropped=tuple(dropped),
        serial="proved" if ok else "not-proved",
        seconds=time.perf_counter() - started,
        queries=queries,
        serial_open=tuple(serial_open),
        serial_hint=enc.serial_hint(tuple(serial_open)),
        numbers=(
            {"max_incoming_window": enc.W, "max_link_credit": enc.C}
            if isinstance(enc, PublishEncoding)
            else {"incoming window": enc.W, "credit window": enc.C, "max_queue_credit": enc.Q}
            if isinstance(enc, ConsumeEncoding)
            else {"incoming window": enc.W, "credit window": enc.C}
        ),
    )


def probe_supply(t: Topology) -> int:
    """The supply a directed run is given to look for a witness of a property the proof
    left open (Z3-AMQ-WITNESS): enough for two full windows and two rounds of credit."""
    enc = encoding_for(t)
    if enc is None:
        return t.supply
    return max(t.supply, 2 * (max(enc.W, enc.W0) + 2 * enc.C))
