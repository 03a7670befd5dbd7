"""FAM-EVERY-SUPPLY for HTTP/2 (H2-EVERY-SUPPLY, H2-SUPPLY-ABSTRACTION, H2-SUPPLY-WITNESS):
every number of octets per stream at once, by exploring an abstraction, not the octets.

A stream's body is either empty or *unbounded* (``left`` = :data:`MANY`: at least one
octet still to send, how many unknown). A sender with ``MANY`` left sends what it would
send with plenty left (a full frame: the model's own ``next_frame``), and keeps ``MANY``;
or that frame is its *last*, of any size ``1..d``, after which ``left`` is 0 (the empty
END_STREAM frame follows). Every concrete run, of any supply, is a run of this system
(the sender's choices depend on ``left`` only through ``min(…, left)`` and ``left == 0``),
so a complete search that finds no violation proves every property for every supply. A
violation it finds is made concrete (the octets the run sent) and searched again by the
explicit explorer, whose shortest witness is the answer; if that search does not show it,
the answer is ``open``. A search cut by its budget or the deadline (FAM-DEADLINE) is
``open``, never ``proved``."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from creditflow.conformance.explore.explorer import (
    NO_DEADLOCK,
    DeadlinePassed,
    explore,
    with_deadline,
)
from creditflow.conformance.families.http2.checking import Checked, Http2System
from creditflow.conformance.family.interface import SupplyProof
from creditflow.model.http2 import properties, sender
from creditflow.model.http2.state import Data, End, SendHalf, State
from creditflow.model.http2.system import Step
from creditflow.model.http2.topology import Topology

#: H2-SUPPLY-ABSTRACTION: ``left`` of a body with at least one octet unsent, size unknown
MANY = -1
#: what the sender's rules see for ``MANY``: more than any frame or window (2^62)
_PLENTY = 1 << 62
#: H2-EVERY-SUPPLY: the abstraction's state budget per shape of bodies
DEFAULT_BUDGET = 20_000
#: H2-SUPPLY-WITNESS: the states of the never-ending bodies searched first for a witness
WITNESS_BUDGET = 12_000


def _with_left(end: End, i: int, left: int) -> End:
    h = end.streams[i]
    assert isinstance(h, SendHalf)
    return end._replace(streams=sender.replace(end.streams, i, h._replace(left=left)))


def _seen(end: End) -> End:
    """``end`` as the sender's rules see it: ``MANY`` is plenty."""
    for i, h in enumerate(end.streams):
        if isinstance(h, SendHalf) and h.left == MANY:
            end = _with_left(end, i, _PLENTY)
    return end


class AbstractSystem(Http2System):
    """H2-SUPPLY-ABSTRACTION: the connection with every non-empty body ``MANY``; with
    ``last_frames`` false only full frames are sent (the bodies never end: H2-SUPPLY-WITNESS
    looks for a witness there first, as it is cheap; it proves nothing)."""

    def __init__(self, topology: Topology, last_frames: bool = True) -> None:
        super().__init__(topology)
        self.last_frames = last_frames

    def successors(self, state: Checked) -> Sequence[tuple[int, Checked]]:
        s, bits = state
        if s.dead:
            return []
        out: list[tuple[int, Checked]] = []
        for a, act in enumerate(self.model.actions):
            steps: list[Step]
            if act.name == "send_data" and self._many(s, act.end, act.stream):
                steps = self._sends(s, act.end, act.stream)
            else:
                step = self.model.step(s, a)
                steps = [] if step is None else [step]
            for step in steps:
                bad = bits
                for pid in properties.step_violations(self.model, s, a, step):
                    bad |= 1 << self.step_property_ids.index(pid)
                out.append((a, (step.state, bad)))
        return out

    @staticmethod
    def _many(s: State, e: int, i: int) -> bool:
        h = s.ends[e].streams[i]
        return isinstance(h, SendHalf) and h.state == "open" and h.left == MANY

    def _sends(self, s: State, e: int, i: int) -> list[Step]:
        """A full frame keeping ``MANY``, or a last frame of ``1..d`` octets."""
        t = self.topology
        end = _seen(s.ends[e])
        frame = sender.next_frame(t.end(e), t.end(1 - e), end, i)
        if frame is None:
            return []
        steps = []
        full = _with_left(sender.send_data(end, frame), i, MANY)
        steps.append(Step(self.model.put(s, e, self._back(full, s.ends[e]), (frame,)), frame))
        for d in range(1, frame.data + 1 if self.last_frames else 1):
            last = Data(i, d, frame.padding, False)
            after = sender.send_data(_with_left(end, i, d), last)
            steps.append(Step(self.model.put(s, e, self._back(after, s.ends[e]), (last,)), last))
        return steps

    @staticmethod
    def _back(end: End, before: End) -> End:
        """Other streams' ``MANY`` restored after the rules saw plenty."""
        for i, (h, b) in enumerate(zip(end.streams, before.streams, strict=True)):
            many = isinstance(b, SendHalf) and b.left == MANY
            if many and isinstance(h, SendHalf) and h.left == _PLENTY:
                end = _with_left(end, i, MANY)
        return end

    def blocked_mask(self, state: Checked) -> int:
        s = state[0]
        seen = State((_seen(s.ends[0]), _seen(s.ends[1])), s.wires, s.error, s.refused_end, s.dead)
        return self.model.blocked_mask(seen)

    def violations(self, state: Checked) -> tuple[str, ...]:
        s, bits = state
        seen = State((_seen(s.ends[0]), _seen(s.ends[1])), s.wires, s.error, s.refused_end, s.dead)
        return super().violations((seen, bits))


@dataclass(frozen=True)
class Http2Proof(SupplyProof):
    """H2-EVERY-SUPPLY's answer; for ``refuted``, ``witness`` is the topology with the
    octets per stream the explicit explorer showed the violation at (H2-SUPPLY-WITNESS),
    ``states`` the abstraction's states searched, ``seconds`` the time taken."""

    witness: Topology | None = None
    states: int = 0
    seconds: float = 0.0


def shapes(t: Topology) -> list[Topology]:
    """H2-SUPPLY-ABSTRACTION: every stream's body empty or ``MANY``, each combination."""
    choices = itertools.product((0, MANY), repeat=len(t.streams))
    return [t.with_octets(tuple(c)) for c in choices]


def _concrete(system: AbstractSystem, path: Sequence[tuple[Any, Checked]]) -> Topology:
    """H2-SUPPLY-WITNESS: the octets each stream sent along an abstract run (one more
    where its body is still ``MANY`` at the end)."""
    t = system.topology
    sent = [0] * len(t.streams)
    for a, (s, _) in path[1:]:
        act = system.model.actions[a]
        if act.name == "send_data":
            frame = s.wires[act.end][-1]
            assert isinstance(frame, Data)
            sent[frame.stream] += frame.data
    final = path[-1][1][0]
    octets = []
    for i, st in enumerate(t.streams):
        h = final.ends[st.sender].streams[i]
        assert isinstance(h, SendHalf)
        octets.append(sent[i] + 1 if h.left == MANY else sent[i])
    return t.with_octets(tuple(octets))


def prove(t: Topology, deadline: float | None = None, budget: int = DEFAULT_BUDGET) -> Http2Proof:
    """H2-EVERY-SUPPLY: proved, refuted (a witness the explicit explorer shows) or open."""
    started = time.perf_counter()
    states = 0
    ids = properties.PROPERTY_IDS
    for last_frames in (False, True):
        for shape in shapes(t):
            system = AbstractSystem(shape, last_frames)
            try:
                explored = explore(
                    system,
                    max_states=budget if last_frames else min(budget, WITNESS_BUDGET),
                    stop_at_deadlock=True,
                    progress=with_deadline(None, deadline),
                )
            except DeadlinePassed as exc:
                return Http2Proof(
                    "open",
                    f"H2-SUPPLY-ABSTRACTION not searched to the end: {exc} (FAM-DEADLINE)",
                    dict.fromkeys(ids),
                    None,
                    states,
                    time.perf_counter() - started,
                )
            states += explored.n_states
            finding = explored.primary()
            if finding is not None:
                return _refute(t, system, finding, states, started, deadline)
            if not explored.complete and last_frames:
                return Http2Proof(
                    "open",
                    f"H2-SUPPLY-ABSTRACTION not searched to the end: {budget:,} states were "
                    f"not enough (a body's last frame may have any size up to a frame)",
                    dict.fromkeys(ids),
                    None,
                    states,
                    time.perf_counter() - started,
                )
    statement = (
        f"H2-SUPPLY-ABSTRACTION: any octets per stream, {len(t.streams)} stream(s), "
        f"{states:,} abstract states"
    )
    return Http2Proof(
        "proved",
        statement,
        dict.fromkeys(ids, True),
        None,
        states,
        time.perf_counter() - started,
    )


def _refute(
    t: Topology,
    system: AbstractSystem,
    finding: Any,
    states: int,
    started: float,
    deadline: float | None,
) -> Http2Proof:
    """H2-SUPPLY-WITNESS: the abstract run made concrete, searched again explicitly."""
    prop = system.deadlock_property if finding.property_id == NO_DEADLOCK else finding.property_id
    concrete = _concrete(system, finding.path)
    witness = Topology(t.name, t.client, t.server, concrete.streams, t.description)
    ids = properties.PROPERTY_IDS
    try:
        again = explore(
            Http2System(witness),
            max_states=DEFAULT_BUDGET,
            stop_at_deadlock=True,
            progress=with_deadline(None, deadline),
        )
    except DeadlinePassed as exc:
        again = None
        why = f"{exc} (FAM-DEADLINE)"
    else:
        why = "the explicit search did not show it"
    shown = again.primary() if again is not None else None
    octets = ", ".join(f"{s.octets:,}" for s in witness.streams)
    seconds = time.perf_counter() - started
    if shown is not None:
        got = system.deadlock_property if shown.property_id == NO_DEADLOCK else shown.property_id
        verdicts: dict[str, bool | None] = dict.fromkeys(ids)
        verdicts[got] = False
        return Http2Proof(
            "refuted",
            f"{got} violated with octets per stream ({octets}) (H2-SUPPLY-WITNESS)",
            verdicts,
            witness,
            states,
            seconds,
        )
    return Http2Proof(
        "open",
        f"H2-SUPPLY-ABSTRACTION shows {prop} with octets ({octets}) but {why}",
        dict.fromkeys(ids),
        None,
        states,
        seconds,
    )


class Http2EverySupply:
    """FAM-EVERY-SUPPLY: :func:`prove` within the engine's deadline."""

    def prove(self, instance: Any, deadline: float | None) -> Http2Proof:
        assert isinstance(instance, Topology)
        return prove(instance, deadline)


#: FAM-EVERY-SUPPLY: the HTTP/2 family's proof for every supply
EVERY_SUPPLY = Http2EverySupply()
