"""The HTTP/2 family (spec/http2.md): every preset explored with the one explorer, the
stall and leak shapes with their shortest witnesses, each property failing on a model
with one rule broken (monkeypatched), the reader's one-line errors, the registry.

The presets run every rule of the spec: H2-CONSTANTS, H2-SCOPE, H2-TS, H2-STREAM-STATES,
H2-OPEN, H2-TWO-LEVELS, H2-INITIAL, H2-DATA-ONLY, H2-PADDING, H2-SEND, H2-NO-EXCESS,
H2-DEBIT, H2-EMPTY-END, H2-FRAME-SIZE, H2-RECEIVE, H2-RECV-EXCESS, H2-RESET-COUNTS,
H2-DISCARD-CREDIT, H2-CONSUME, H2-POL-CREDIT, H2-CREDIT, H2-WINDOW-UPDATE,
H2-ZERO-INCREMENT, H2-WINDOW-MAX, H2-SETTINGS, H2-SETTINGS-APPLY, H2-SETTINGS-ACK,
H2-NEGATIVE, H2-RESET, H2-ERRORS, H2-TOPOLOGY; the tests below name the ones they pin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from creditflow.conformance.explore.explorer import NO_DEADLOCK, explore
from creditflow.conformance.families.http2.checking import CHECKING, Http2System
from creditflow.conformance.families.http2.reader import READER, Http2TopologyError
from creditflow.conformance.family import registry
from creditflow.conformance.inputs.reading import InputError
from creditflow.model.http2 import receiver, sender, settings
from creditflow.model.http2.constants import (
    FLOW_CONTROL_ERROR,
    MAX_WINDOW_SIZE,
    PROTOCOL_ERROR,
)
from creditflow.model.http2.properties import (
    BOUNDS,
    CONSERVATION,
    EMPTY_END,
    NEGATIVE_TRACKED,
    NO_ERROR,
    WITHIN_WINDOW,
)
from creditflow.model.http2.state import CONNECTION, SendHalf, WindowUpdate
from creditflow.model.http2.system import Http2Model, initial_end
from creditflow.model.http2.topology import EndConfig, StreamConfig, Topology

HOLDING = (
    "upload",
    "download",
    "many-streams",
    "settings-shrink",
    "reset-in-flight",
    "unread-beside-busy",
)


def run(name_or_topology: str | Topology):
    t = READER.read(name_or_topology, {}) if isinstance(name_or_topology, str) else name_or_topology
    result = explore(CHECKING.system(t, {}), max_states=200_000)
    assert result.complete
    return result


@pytest.mark.parametrize("name", HOLDING)
def test_presets_hold(name):
    """PROP-H2-NO-STALL and every state and step property hold on the real-size presets."""
    result = run(name)
    assert result.findings == {}, {k: f.length for k, f in result.findings.items()}
    assert result.n_states > 1


def test_preset_defaults_are_real():
    """H2-CONSTANTS: 65,535-octet windows, 16,384-octet frames."""
    t = READER.read("upload", {})
    end = initial_end(t, 0)
    assert end.send_conn == 65_535 and end.streams[0] == SendHalf("open", 65_535, 131_072)
    assert t.server.max_frame_size == 16_384
    frame = sender.next_frame(t.client, t.server, end, 0)
    assert frame is not None and frame.data == 16_384


def shortest(result, pid):
    f = result.findings[pid]
    assert f.shortest or pid != NO_DEADLOCK
    return f


def test_unread_stream_starves_the_connection_under_consume_credit():
    """PROP-H2-NO-STALL, H2-POL-CREDIT: stream 1 takes the connection window in four frames
    (3 × 16,384 + 16,383) and is never read: stream 3 is blocked forever."""
    result = run("unread-starves-connection")
    f = result.findings[NO_DEADLOCK]
    assert f.length == 4 and f.kind == "blocked-forever"
    assert f.processes == ("stream 3 sender",)


def test_reset_never_credited_leaks_the_connection():
    """H2-DISCARD-CREDIT broken by policy: DATA discarded on the reset stream is never
    returned, and stream 3 stalls (dart-lang/http #1374)."""
    result = run("reset-never-credited")
    f = result.findings[NO_DEADLOCK]
    assert f.length == 5 and "stream 3 sender" in f.processes
    # the same topology with the rule kept holds
    good = READER.read("reset-never-credited", {})
    fixed = Topology(good.name, good.client, EndConfig(), good.streams)
    assert run(fixed).findings == {}


def test_empty_end_refused_at_window_zero():
    """H2-EMPTY-END, PROP-H2-EMPTY-END: 65,535 octets exactly, then the empty END_STREAM
    frame at window 0, refused by the server."""
    result = run("empty-end-refused")
    assert result.findings[EMPTY_END].length == 10
    assert NO_ERROR in result.findings


def test_sender_into_negative_window():
    """H2-NEGATIVE broken by policy (httpcore #1082): a SETTINGS shrink to 16,384 after two
    frames leaves the stream window at -16,384 and the client sends anyway (step 5)."""
    result = run("negative-window-send")
    assert result.findings[WITHIN_WINDOW].length == 5
    assert NO_ERROR in result.findings  # the server answers FLOW_CONTROL_ERROR


def test_within_window_fails_when_the_connection_window_is_ignored(monkeypatch):
    """PROP-H2-WITHIN-WINDOW, H2-TWO-LEVELS: a sender that looks at its stream window only."""
    monkeypatch.setattr(sender, "room", lambda end, i: sender.half(end, i).window)
    result = run("unread-beside-busy")
    assert WITHIN_WINDOW in result.findings


def test_conservation_fails_when_the_ack_is_not_applied(monkeypatch):
    """PROP-H2-CONSERVATION, H2-SETTINGS-ACK: a receiver that never applies its own change."""
    monkeypatch.setattr(
        settings,
        "on_ack",
        lambda end: settings.Outcome(end._replace(unacked=end.unacked[1:])),
    )
    result = run("settings-shrink")
    assert CONSERVATION in result.findings
    assert NEGATIVE_TRACKED in result.findings


def test_conservation_fails_when_discarded_data_is_not_counted(monkeypatch):
    """PROP-H2-CONSERVATION, H2-RESET-COUNTS: discarded DATA not taken from the connection
    window."""
    original = receiver.on_data

    def broken(cfg, end, frame, sid):
        out = original(cfg, end, frame, sid)
        if receiver.half(end, frame.stream).state != "open":
            return out._replace(end=out.end._replace(recv_conn=out.end.recv_conn + frame.length))
        return out

    monkeypatch.setattr(receiver, "on_data", broken)
    assert CONSERVATION in run("reset-in-flight").findings


def test_no_stall_fails_when_discarded_data_is_not_credited(monkeypatch):
    """PROP-H2-NO-STALL, H2-DISCARD-CREDIT: the rule removed from a correct topology."""
    monkeypatch.setattr(receiver, "owe_discarded", lambda cfg, end, octets: end)
    t = READER.read("reset-never-credited", {})
    result = run(Topology(t.name, t.client, EndConfig(), t.streams))
    assert NO_DEADLOCK in result.findings


def over_credit() -> Topology:
    return Topology(
        "over-credit",
        EndConfig(),
        EndConfig(over_credit=MAX_WINDOW_SIZE - 60_000),
        (StreamConfig(1, "upload", 16_384),),
    )


def sender_bounded(s) -> bool:
    client = s.ends[0]
    return client.send_conn <= MAX_WINDOW_SIZE and all(
        h.window <= MAX_WINDOW_SIZE for h in client.streams
    )


def test_bounds_excess_is_flow_control_error():
    """H2-WINDOW-MAX, PROP-H2-BOUNDS: a receiver that over-credits; the sender answers
    FLOW_CONTROL_ERROR and no window exceeds 2^31 − 1."""
    result = run(over_credit())
    # the faulty receiver's own window passes the bound (its fault, reported) ...
    assert BOUNDS in result.findings
    # ... but the sender never applies the excess: it raises FLOW_CONTROL_ERROR
    assert all(sender_bounded(s) for s, _ in result.graph.states)
    final = result.findings[NO_ERROR].path[-1][1][0]
    assert final.error.startswith(FLOW_CONTROL_ERROR)


def test_bounds_fails_without_the_check(monkeypatch):
    """PROP-H2-BOUNDS: a sender that applies every increment unchecked."""

    def unchecked(end, frame, names):
        if frame.stream == CONNECTION:
            return sender.Outcome(end._replace(send_conn=end.send_conn + frame.increment))
        h = sender.half(end, frame.stream)
        new = h._replace(window=h.window + frame.increment)
        return sender.Outcome(end._replace(streams=sender.replace(end.streams, frame.stream, new)))

    monkeypatch.setattr(sender, "on_window_update", unchecked)
    result = run(over_credit())
    assert BOUNDS in result.findings
    assert not all(sender_bounded(s) for s, _ in result.graph.states)


def test_zero_increment_is_protocol_error():
    """H2-ZERO-INCREMENT: a stream error on a stream, a connection error on stream 0."""
    t = READER.read("upload", {})
    end = initial_end(t, 0)
    on_stream = sender.on_window_update(end, WindowUpdate(0, 0), (1,))
    assert on_stream.error.startswith(PROTOCOL_ERROR) and not on_stream.fatal
    on_conn = sender.on_window_update(end, WindowUpdate(CONNECTION, 0), (1,))
    assert on_conn.error.startswith(PROTOCOL_ERROR) and on_conn.fatal


def test_negative_tracked_fails_when_clamped(monkeypatch):
    """PROP-H2-NEGATIVE-TRACKED, H2-NEGATIVE: a sender that clamps a negative window to 0."""
    original = settings.on_settings

    def clamped(end, frame):
        out = original(end, frame)
        streams = tuple(
            h._replace(window=max(h.window, 0)) if isinstance(h, SendHalf) else h
            for h in out.end.streams
        )
        return out._replace(end=out.end._replace(streams=streams))

    monkeypatch.setattr(settings, "on_settings", clamped)
    assert NEGATIVE_TRACKED in run("settings-shrink").findings


def test_empty_end_fails_when_the_sender_needs_window(monkeypatch):
    """PROP-H2-EMPTY-END: a sender whose rules never send the empty END_STREAM frame."""
    original = sender.next_frame

    def refusing(cfg, peer, end, i):
        frame = original(cfg, peer, end, i)
        return None if frame is not None and frame.length == 0 else frame

    monkeypatch.setattr(sender, "next_frame", refusing)
    result = run("upload")
    assert EMPTY_END in result.findings and NO_DEADLOCK in result.findings


def test_padding_counts_and_is_credited():
    """H2-PADDING: padded frames take their padding from both windows; the receiver
    returns it; the upload completes."""
    t = Topology(
        "padded", EndConfig(padding=100), EndConfig(), (StreamConfig(1, "upload", 40_000),)
    )
    model = Http2Model(t)
    s = model.initial()
    step = model.step(s, [a for a, act in enumerate(model.actions) if act.name == "send_data"][0])
    assert step is not None and step.sent is not None and step.sent.length == 16_384
    assert step.sent.data == 16_284
    assert run(t).findings == {}


def test_reader_one_line_errors(tmp_path: Path):
    """H2-TOPOLOGY: the file and the JSON path in one line; an InputError (exit 2)."""
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"family": "http2", "name": "x", "streams": [{"id": 2}]}))
    with pytest.raises(Http2TopologyError) as err:
        READER.read(str(bad), {})
    assert isinstance(err.value, InputError)
    assert str(bad) in str(err.value) and "streams[0].id" in str(err.value)
    assert "\n" not in str(err.value)
    bad.write_text(
        json.dumps(
            {"family": "http2", "name": "x", "streams": [{"id": 1}], "client": {"padding": 999}}
        )
    )
    with pytest.raises(Http2TopologyError, match=r"client\.padding"):
        READER.read(str(bad), {})
    bad.write_text('{"family": "http2", "name": "x", "name": "y"}')
    with pytest.raises(InputError):
        READER.read(str(bad), {})


def test_registry_and_reader_recognise():
    family = registry.get("http2")
    assert family.reader.load() is READER and family.checking.load() is CHECKING
    assert READER.recognises({"family": "http2"}) and not READER.recognises({"family": "amqp"})
    assert set(HOLDING) < set(READER.preset_names())
    assert isinstance(CHECKING.system(READER.read("upload", {}), {}), Http2System)


def test_codec_words_and_picture():
    """FAM-CODEC: a state line, steps in words, a DOT picture; the meta rebuilds the
    topology through the reader (H2-TOPOLOGY)."""
    from creditflow.conformance.families.http2.codec import CODEC

    t = READER.read("unread-starves-connection", {})
    system = CHECKING.system(t, {})
    f = explore(system).findings[NO_DEADLOCK]
    words = [CODEC.step_words(system, a) for a, _ in f.path[1:]]
    assert words == ["send_data(stream 1)"] * 4
    last = f.path[-1][1]
    assert "client sends into 0" in CODEC.state_line(system, last)
    dot = CODEC.picture(system, last, "stall")
    assert dot.startswith("digraph") and "DATA(1, 16383)" in dot
    assert READER.from_trace_meta(CODEC.meta(t), "trace") == t
