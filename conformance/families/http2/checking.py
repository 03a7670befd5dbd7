"""FAM-CHECKING for HTTP/2: a connection's transition system (H2-TS) as the one explorer
searches it. A checked state is ``(state, bits)``: bit ``k`` is set once a step violated
the ``k``-th step property (PROP-H2-WITHIN-WINDOW, PROP-H2-BOUNDS,
PROP-H2-NEGATIVE-TRACKED); PROP-H2-NO-STALL is the explorer's PROP-NO-DEADLOCK over the
senders of the streams whose application reads (EXP-DEADLOCK)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.model.http2 import properties
from creditflow.model.http2.state import (
    Data,
    Frame,
    Headers,
    RstStream,
    SendHalf,
    Settings,
    SettingsAck,
    State,
    WindowUpdate,
)
from creditflow.model.http2.system import Http2Model
from creditflow.model.http2.topology import END_NAMES, Topology

Checked = tuple[State, int]

#: the property ids the system reports as state properties (the explorer adds
#: PROP-NO-DEADLOCK, which is PROP-H2-NO-STALL)
SYSTEM_PROPERTY_IDS = tuple(p for p in properties.PROPERTY_IDS if p != properties.NO_STALL)


def frame_words(model: Http2Model, f: Frame) -> str:
    """A frame in words (FAM-CODEC): ``DATA(1, 16384)``, ``WINDOW_UPDATE(0, 16384)``."""
    ids = model.stream_ids
    if isinstance(f, Data):
        pad = f"+{f.padding} pad" if f.padding else ""
        return f"DATA({ids[f.stream]}, {f.data}{pad}{', END_STREAM' if f.end else ''})"
    if isinstance(f, WindowUpdate):
        sid = 0 if f.stream < 0 else ids[f.stream]
        return f"WINDOW_UPDATE({sid}, {f.increment})"
    if isinstance(f, Settings):
        return f"SETTINGS(INITIAL_WINDOW_SIZE={f.initial_window_size})"
    if isinstance(f, SettingsAck):
        return "SETTINGS(ACK)"
    if isinstance(f, RstStream):
        return f"RST_STREAM({ids[f.stream]})"
    assert isinstance(f, Headers)
    return f"HEADERS({ids[f.stream]})"


class Http2System:
    """A :class:`~creditflow.model.system.TransitionSystem` of one connection; a stall
    is reported as PROP-H2-NO-STALL (``deadlock_property``, FAM-CHECKING)."""

    deadlock_property = properties.NO_STALL

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.model = Http2Model(topology)
        self.process_names: Sequence[str] = self.model.process_names
        self.property_ids: Sequence[str] = SYSTEM_PROPERTY_IDS
        self.step_property_ids: Sequence[str] = properties.STEP_PROPERTY_IDS

    def initial(self) -> Checked:
        return (self.model.initial(), 0)

    def successors(self, state: Checked) -> Sequence[tuple[int, Checked]]:
        s, bits = state
        out = []
        for a, step in self.model.successors(s):
            bad = bits
            for pid in properties.step_violations(self.model, s, a, step):
                bad |= 1 << self.step_property_ids.index(pid)
            out.append((a, (step.state, bad)))
        return out

    def describe(self, action: int) -> str:
        return self.model.describe(action)

    def violations(self, state: Checked) -> tuple[str, ...]:
        s, bits = state
        stepped = tuple(p for k, p in enumerate(self.step_property_ids) if bits >> k & 1)
        return tuple(dict.fromkeys(properties.violations(self.model, s) + stepped))

    def blocked_mask(self, state: Checked) -> int:
        return self.model.blocked_mask(state[0])

    def pending_work(self, state: Checked) -> bool:
        return self.model.pending_work(state[0])

    def render(self, state: Checked) -> Mapping[str, Any]:
        """The state as named variables (TRACE-*): per end its windows, per stream each
        half, the frames in flight in words."""
        s, _ = state
        out: dict[str, Any] = {}
        for e, end in enumerate(s.ends):
            name = END_NAMES[e]
            out[f"{name}.send_connection_window"] = end.send_conn
            out[f"{name}.recv_connection_window"] = end.recv_conn
            out[f"{name}.connection_owed"] = end.conn_owed
            out[f"{name}.initial_window_size"] = end.recv_initial
            out[f"{name}.peer_initial_window_size"] = end.send_initial
            for i, h in enumerate(end.streams):
                sid = self.model.stream_ids[i]
                if isinstance(h, SendHalf):
                    out[f"{name}.stream{sid}"] = {
                        "state": h.state,
                        "window": h.window,
                        "left": h.left,
                    }
                else:
                    out[f"{name}.stream{sid}"] = {
                        "state": h.state,
                        "window": h.window,
                        "buffered": h.buffered,
                        "owed": h.owed,
                    }
            out[f"{name}→{END_NAMES[1 - e]}"] = tuple(
                frame_words(self.model, f) for f in s.wires[e]
            )
        out["error"] = s.error
        return out

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        """``mbt::actionTaken`` and its parameters: ``stream`` (0 for the connection) and
        the ``end`` taking it."""
        act = self.model.actions[action]
        params: dict[str, Any] = {"end": END_NAMES[act.end]}
        if act.stream >= 0:
            params["stream"] = self.model.stream_ids[act.stream]
        elif act.stream == -1:
            params["stream"] = 0
        return act.name, params


class Checking:
    """FAM-CHECKING: options are none yet (the supply is the topology's own)."""

    def system(self, instance: Any, options: Mapping[str, Any]) -> Http2System:
        assert isinstance(instance, Topology)
        return Http2System(instance)

    def symmetry(self, system: Any) -> Any | None:
        return None

    def supply(self, instance: Any) -> int | None:
        assert isinstance(instance, Topology)
        return instance.supply


CHECKING = Checking()
