"""FAM-CODEC for HTTP/2: a state in one line, a step in words (``send_data(stream 1)``,
``receive(client→server)``, as ``docs/http2.md`` explains them) and a DOT picture of the
two ends and the frames in flight (EXP-PICTURE). No Python repr reaches a user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from creditflow.conformance.families.http2.checking import Http2System, frame_words
from creditflow.model.http2.state import SendHalf, State
from creditflow.model.http2.topology import END_NAMES, Topology


def _state(system: Any, state: Any) -> tuple[Http2System, State]:
    assert isinstance(system, Http2System)
    s = (
        state[0]
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], int)
        else state
    )
    assert isinstance(s, State)
    return system, s


def _halves(system: Http2System, s: State) -> list[str]:
    out = []
    for i, st in enumerate(system.topology.streams):
        snd = s.ends[st.sender].streams[i]
        rcv = s.ends[st.receiver].streams[i]
        assert isinstance(snd, SendHalf)
        out.append(
            f"stream {st.id}: {snd.state} window {snd.window} left {snd.left} / "
            f"{rcv.state} window {rcv.window}"
        )
    return out


class Codec:
    """FAM-CODEC: HTTP/2 states and steps for traces (``#meta.creditflow.model``
    ``http2``) and for a person."""

    model = "http2"
    version = 1

    def meta(self, instance: Any) -> Mapping[str, Any]:
        """The topology as its document, for ``show``/``replay`` (the reader's
        ``from_trace_meta``)."""
        assert isinstance(instance, Topology)
        doc: dict[str, Any] = {"family": "http2", "name": instance.name}
        if instance.description:
            doc["description"] = instance.description
        for e in (0, 1):
            end = asdict(instance.end(e))
            end["settings_changes"] = list(end["settings_changes"])
            doc[END_NAMES[e]] = end
        doc["streams"] = [asdict(s) for s in instance.streams]
        return {"topology": doc}

    def state_line(self, system: Any, state: Any) -> str:
        sy, s = _state(system, state)
        conn = ", ".join(f"{END_NAMES[e]} sends into {s.ends[e].send_conn}" for e in (0, 1))
        line = f"connection: {conn}; " + "; ".join(_halves(sy, s))
        return line + (f"; error: {s.error}" if s.error else "")

    def step_words(self, system: Any, action: int) -> str:
        assert isinstance(system, Http2System)
        return system.describe(action)

    def picture(self, system: Any, state: Any, title: str) -> str:
        sy, s = _state(system, state)
        lines = [
            "digraph http2 {",
            f'  label="{title}"; rankdir=LR; node [shape=box];',
        ]
        for e in (0, 1):
            end = s.ends[e]
            label = (
                f"{END_NAMES[e]}\\nsend connection window {end.send_conn}"
                f"\\nreceive connection window {end.recv_conn}"
            )
            lines.append(f'  {END_NAMES[e]} [label="{label}"];')
        for e in (0, 1):
            frames = "\\n".join(frame_words(sy.model, f) for f in s.wires[e]) or "(empty)"
            lines.append(f'  {END_NAMES[e]} -> {END_NAMES[1 - e]} [label="{frames}"];')
        streams = "\\n".join(_halves(sy, s))
        lines.append(f'  streams [shape=note, label="{streams}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"


CODEC = Codec()
