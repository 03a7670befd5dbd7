"""The transition system over a connection (H2-TS): states, actions, successors.

Actions are ints, indexes into :attr:`Http2Model.actions`, each an :class:`Action`
named as the adapter protocol names its ops (``send_data``, ``receive``, ``consume``,
``window_update``, ``settings``, ``reset``, ``open``). :meth:`Http2Model.step` gives the
one successor of an enabled action or ``None``. Rules are looked up through their
modules at call time (``sender.next_frame``, …), so a test can replace one rule and
watch a property catch it."""

from __future__ import annotations

from typing import NamedTuple

from creditflow.model.http2 import receiver, sender, settings
from creditflow.model.http2.constants import CONNECTION_INITIAL_WINDOW
from creditflow.model.http2.state import (
    CONNECTION,
    Data,
    End,
    Frame,
    Half,
    Headers,
    RecvHalf,
    RstStream,
    SendHalf,
    Settings,
    SettingsAck,
    State,
    WindowUpdate,
    Wire,
)
from creditflow.model.http2.topology import CLIENT, END_NAMES, Topology


class Action(NamedTuple):
    """An action: its name, the stream index it concerns (``CONNECTION`` for stream 0,
    ``-2`` where none) and the end that takes it."""

    name: str
    stream: int
    end: int


class Step(NamedTuple):
    """The successor of an action and the DATA frame it sent, if any (for
    PROP-H2-WITHIN-WINDOW)."""

    state: State
    sent: Data | None = None


NONE = -2


def initial_end(t: Topology, e: int) -> End:
    """H2-INITIAL, H2-OPEN: an end after the connection preface (each end has applied
    the other's SETTINGS and seen its own acknowledged); streams opened at the start are
    open at both ends."""
    cfg, peer = t.end(e), t.end(1 - e)
    halves: list[Half] = []
    for s in t.streams:
        later = s.opens == "later"
        if s.sender == e:
            halves.append(
                SendHalf("idle", 0, s.octets)
                if later
                else SendHalf("open", peer.initial_window_size, s.octets)
            )
        else:
            halves.append(
                RecvHalf("idle", 0, 0, 0)
                if later
                else RecvHalf("open", cfg.initial_window_size, 0, 0)
            )
    return End(
        CONNECTION_INITIAL_WINDOW,
        peer.initial_window_size,
        cfg.connection_window,
        0,
        cfg.initial_window_size,
        (),
        0,
        tuple(halves),
    )


class Http2Model:
    """H2-TS over one :class:`Topology`."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        t = topology
        actions: list[Action] = []
        for i, s in enumerate(t.streams):
            if s.opens == "later":
                actions.append(Action("open", i, CLIENT))
            actions.append(Action("send_data", i, s.sender))
            if s.reads == "all":
                actions.append(Action("consume", i, s.receiver))
            if t.end(s.receiver).stream_credit.trigger == "manual":
                actions.append(Action("window_update", i, s.receiver))
            if s.reset is not None:
                actions.append(Action("reset", i, s.sender if s.reset == "sender" else s.receiver))
        for e in (0, 1):
            if t.end(e).connection_credit.trigger == "manual":
                actions.append(Action("window_update", CONNECTION, e))
            if t.end(e).settings_changes:
                actions.append(Action("settings", NONE, e))
        actions.extend([Action("receive", NONE, 0), Action("receive", NONE, 1)])
        self.actions: tuple[Action, ...] = tuple(actions)
        #: PROP-H2-NO-STALL: the streams whose application reads, by index
        self.reading: tuple[int, ...] = tuple(
            i for i, s in enumerate(t.streams) if s.reads == "all"
        )
        self.stream_ids = tuple(s.id for s in t.streams)

    def initial(self) -> State:
        t = self.topology
        wires: list[Wire] = []
        for e in (0, 1):
            extra = t.end(e).connection_window - CONNECTION_INITIAL_WINDOW
            wires.append((WindowUpdate(CONNECTION, extra),) if extra > 0 else ())
        return State((initial_end(t, 0), initial_end(t, 1)), (wires[0], wires[1]))

    def describe(self, a: int) -> str:
        """An action in words (FAM-CODEC): ``send_data(stream 1)``, ``receive(client→server)``."""
        act = self.actions[a]
        if act.name == "receive":
            return f"receive({END_NAMES[act.end]}→{END_NAMES[1 - act.end]})"
        if act.name == "settings":
            return f"settings({END_NAMES[act.end]})"
        if act.stream == CONNECTION:
            return f"{act.name}(connection @{END_NAMES[act.end]})"
        where = f" @{END_NAMES[act.end]}" if act.name in ("window_update", "reset") else ""
        return f"{act.name}(stream {self.stream_ids[act.stream]}{where})"

    def successors(self, s: State) -> list[tuple[int, Step]]:
        """Every enabled action and its step, in action order (H2-TS)."""
        if s.dead:
            return []
        out = []
        for a in range(len(self.actions)):
            step = self.step(s, a)
            if step is not None:
                out.append((a, step))
        return out

    def step(self, s: State, a: int) -> Step | None:
        """H2-TS: the successor of action ``a`` in ``s``, or ``None`` if not enabled."""
        act = self.actions[a]
        t = self.topology
        e = act.end
        end = s.ends[e]
        cfg = t.end(e)
        if s.dead:
            return None
        if act.name == "send_data":
            frame = sender.next_frame(cfg, t.end(1 - e), end, act.stream)
            if frame is None:
                return None
            return Step(self.put(s, e, sender.send_data(end, frame), (frame,)), frame)
        if act.name == "consume":
            if not receiver.may_consume(end, act.stream):
                return None
            r = receiver.consume(cfg, end, act.stream)
            return Step(self.put(s, e, r.end, r.out))
        if act.name == "window_update":
            if not receiver.may_update_by_hand(cfg, end, act.stream):
                return None
            r = receiver.window_update(cfg, end, act.stream)
            return Step(self.put(s, e, r.end, r.out))
        if act.name == "settings":
            if not settings.may_send_settings(cfg, end):
                return None
            so = settings.send_settings(cfg, end)
            return Step(self.put(s, e, so.end, so.out))
        if act.name == "reset":
            if end.streams[act.stream].state != "open":
                return None
            if t.streams[act.stream].sender == e:
                o = sender.reset_half(end, act.stream)
                return Step(self.put(s, e, o.end, o.out))
            r = receiver.reset(cfg, end, act.stream)
            return Step(self.put(s, e, r.end, r.out))
        if act.name == "open":
            if end.streams[act.stream].state != "idle":
                return None
            st = t.streams[act.stream]
            opened = settings.open_half(end, act.stream, st.sender == e, st.octets)
            return Step(self.put(s, e, opened, (Headers(act.stream),)))
        assert act.name == "receive"
        if not s.wires[e]:
            return None
        return Step(self.receive(s, e))

    def put(
        self,
        s: State,
        e: int,
        end: End,
        out: tuple[Frame, ...],
        error: str = "",
        fatal: bool = False,
        refused: bool = False,
    ) -> State:
        """``s`` with end ``e`` replaced and ``out`` appended to its wire; the first error
        is kept (H2-ERRORS)."""
        ends = (end, s.ends[1]) if e == 0 else (s.ends[0], end)
        wire = s.wires[e] + out
        wires = (wire, s.wires[1]) if e == 0 else (s.wires[0], wire)
        return State(
            ends,
            wires,
            s.error or error,
            s.refused_end or refused,
            s.dead or fatal,
        )

    def receive(self, s: State, w: int) -> State:
        """H2-TS ``receive``: the end at the far side of wire ``w`` takes its first frame."""
        t = self.topology
        r = 1 - w
        frame, rest = s.wires[w][0], s.wires[w][1:]
        s = s._replace(wires=(rest, s.wires[1]) if w == 0 else (s.wires[0], rest))
        end, cfg = s.ends[r], t.end(r)
        if isinstance(frame, Data):
            o = receiver.on_data(cfg, end, frame, self.stream_ids[frame.stream])
            return self.put(s, r, o.end, o.out, o.error, o.fatal, o.refused_end)
        if isinstance(frame, WindowUpdate):
            so = sender.on_window_update(end, frame, self.stream_ids)
            return self.put(s, r, so.end, so.out, so.error, so.fatal)
        if isinstance(frame, Settings):
            se = settings.on_settings(end, frame)
            return self.put(s, r, se.end, se.out, se.error, se.fatal)
        if isinstance(frame, SettingsAck):
            se = settings.on_ack(end)
            return self.put(s, r, se.end, se.out)
        if isinstance(frame, RstStream):
            if t.streams[frame.stream].sender == r:
                return self.put(s, r, sender.on_reset(end, frame.stream), ())
            ro = receiver.on_reset(cfg, end, frame.stream)
            return self.put(s, r, ro.end, ro.out)
        assert isinstance(frame, Headers)
        st = t.streams[frame.stream]
        if end.streams[frame.stream].state != "idle":
            return s
        return self.put(s, r, settings.open_half(end, frame.stream, st.sender == r, st.octets), ())

    def blocked_mask(self, s: State) -> int:
        """PROP-H2-NO-STALL: bit ``k`` is set iff the sender of the ``k``-th reading stream
        holds data or its END_STREAM frame and may send nothing."""
        if s.dead:
            return 0
        t = self.topology
        mask = 0
        for k, i in enumerate(self.reading):
            e = t.streams[i].sender
            end = s.ends[e]
            if end.streams[i].state == "open" and (
                sender.next_frame(t.end(e), t.end(1 - e), end, i) is None
            ):
                mask |= 1 << k
        return mask

    def pending_work(self, s: State) -> bool:
        """PROP-H2-NO-STALL: a reading stream's body or END_STREAM is still to be sent."""
        if s.dead:
            return False
        t = self.topology
        return any(
            s.ends[t.streams[i].sender].streams[i].state in ("idle", "open") for i in self.reading
        )

    @property
    def process_names(self) -> tuple[str, ...]:
        return tuple(f"stream {self.stream_ids[i]} sender" for i in self.reading)
