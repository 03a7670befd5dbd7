"""The ``http2`` adapters (spec/adapter-protocol-http2.md, AD-H2-*) at their pinned
releases, against RFC 9113's flow-control rules computed by hand, read off the frames
our own peer saw; the findings pinned to their releases; the version cache.

No test here is skipped when a library or program is missing: ``scripts/setup.sh``
installs the ``http2`` extra and Debian's nghttp2, and a missing one fails (AD-H2-VERSION).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from creditflow.adapters.http2 import frames as fr
from creditflow.adapters.http2 import nghttpd_server, serving, versions
from creditflow.adapters.http2.driver import Http2Adapter, Http2Reply, beyond_window
from creditflow.adapters.http2.peer import Peer
from creditflow.adapters.registry import UnknownAdapter, http2_adapter_factory
from creditflow.conformance.differential.adapter import AdapterFailure
from tests.adapter_setup import fake_installed_release

ADAPTERS = ("h2", "httpcore", "hypercorn", "node", "nghttp2")
W = fr.DEFAULT_WINDOW  # 65,535: §6.5.2, §6.9.2
MAX = fr.MAX_WINDOW  # 2^31 − 1: §6.9.1


def start(name: str) -> Http2Adapter:
    adapter = http2_adapter_factory(name)()
    assert isinstance(adapter, Http2Adapter)
    return adapter


@pytest.fixture(scope="module", params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Iterator[Http2Adapter]:
    """Each pinned adapter, started once per module (AD-H2-VERSION): AD-H2-H2,
    AD-H2-HTTPCORE, AD-H2-HYPERCORN, AD-H2-NODE, AD-H2-NGHTTPD."""
    a = start(request.param)
    try:
        yield a
    finally:
        a.close()


class Run:
    """One connection: every reply's frames checked against §6.9.1 (the implementation
    never sends DATA beyond either window, AD-H2-WIRE) and kept in :attr:`frames`."""

    def __init__(self, adapter: Http2Adapter, **settings: int) -> None:
        self.adapter = adapter
        self.frames: list[dict[str, Any]] = []
        self.opened: set[int] = set()
        self.reply = self.op("reset", settings=settings)
        if self.policy.get("x-connects") == "on open":  # httpcore connects for a request
            self.open(1)

    def open(self, stream: int) -> None:
        if stream not in self.opened:
            self.opened.add(stream)
            self.op("open", stream=stream)

    def op(self, op: str, **args: Any) -> Http2Reply:
        self.reply = self.adapter.step({"op": op, **args})
        assert beyond_window(self.reply.frames) == []
        self.frames += self.reply.frames
        return self.reply

    @property
    def policy(self) -> dict[str, Any]:
        return self.adapter.policy

    def upload(self, stream: int, octets: int, end_stream: bool = False) -> Http2Reply:
        """The implementation's application sends ``octets`` on a new ``stream``
        (AD-H2-OPS ``open`` + ``send``; ``x-send: request`` adapters send a whole
        response to the peer's GET, with END_STREAM)."""
        if self.policy.get("x-send") == "request":
            return self.op("send", stream=stream, octets=octets, end_stream=True)
        self.open(stream)
        return self.op("send", stream=stream, octets=octets, end_stream=end_stream)

    def sent(self, kind: str, side: str = "implementation") -> list[dict[str, Any]]:
        return [f for f in self.reply.frames if f["from"] == side and f["type"] == kind]

    def errors(self) -> list[str]:
        """The error codes of the implementation's RST_STREAM and GOAWAY frames."""
        return [
            f["error"]
            for f in self.reply.frames
            if f["from"] == "implementation" and f["type"] in ("RST_STREAM", "GOAWAY")
        ]


def lib(adapter: Http2Adapter) -> str:
    return str(adapter.info["name"])


#: The findings at the pinned releases (docs/http2-adapters.md), like an expectations
#: file: (library, release) → what it does instead of what RFC 9113 asks. A release
#: not listed must do what the RFC asks.
FINDINGS: dict[tuple[str, str], dict[str, str]] = {
    # H2-F1: Node destroys the session on nghttp2's connection error and sends GOAWAY
    # with INTERNAL_ERROR instead of PROTOCOL_ERROR / FLOW_CONTROL_ERROR
    ("node", "20.20.2"): {
        "PROTOCOL_ERROR": "INTERNAL_ERROR",
        "conn-overflow": "INTERNAL_ERROR",
        # a stream's window past 2^31 − 1: RST_STREAM as asked, then GOAWAY all the same
        "stream-overflow": "FLOW_CONTROL_ERROR,INTERNAL_ERROR",
    },
    # H2-F3: with a negative stream window httpcore computes a negative chunk size and
    # the request fails ("Cannot send N bytes, flow control window is -M").
    # H2-F4: a connection error h2 detects inside httpcore fails the request; the
    # GOAWAY h2 queued is never written.
    # H2-F5: closing a response early sends no RST_STREAM: the server goes on sending
    # into a stream nobody reads, and httpcore never credits that DATA back.
    ("httpcore", "1.0.9"): {
        "cancel": "silent",
        "negative-window": "request-fails",
        "PROTOCOL_ERROR": "request-fails",
        "conn-overflow": "request-fails",
    },
    # H2-F2: hypercorn credits DATA on receipt and blocks its whole connection once one
    # stream's application queue (max_app_queue_size, 10) is full: no PING answered,
    # every other stream starves
    ("hypercorn", "0.17.3"): {"unread-stream": "connection-stalls"},
    ("hypercorn", "0.18.0"): {"unread-stream": "connection-stalls"},
    ("hypercorn", "0.14.4"): {"unread-stream": "connection-stalls"},
}


def finding(adapter: Http2Adapter, key: str, default: str) -> str:
    """What ``adapter``'s release is known to do for ``key`` (else ``default``)."""
    return FINDINGS.get((lib(adapter), str(adapter.info["version"])), {}).get(key, default)


def rfc_error(adapter: Http2Adapter, code: str) -> str:
    """The error code ``adapter`` is known to send where RFC 9113 asks for ``code``."""
    return finding(adapter, code, code)


# -- AD-H2-HELLO / AD-H2-POLICY --------------------------------------------------------


def test_hello_names_the_pinned_release_and_declares_a_policy(adapter: Http2Adapter) -> None:
    """AD-H2-HELLO: family ``http2``, the release pinned (or the machine's program), a
    role, the ops of AD-H2-OPS and every policy key of AD-H2-POLICY."""
    name = lib(adapter)
    expected = versions.PINNED.get(name) or versions.program_release(name)
    assert adapter.info["version"] == expected
    assert adapter.info["role"] in ("client", "server")
    assert {"reset", "state", "data", "window_update", "settings", "rst_stream"} <= set(adapter.ops)
    for key in (
        "credit",
        "reset_credit",
        "discard_credit",
        "split",
        "initial_settings",
        "negative_window",
        "empty_end_stream",
    ):
        assert key in adapter.policy, key


def test_initial_settings_are_what_it_declares(adapter: Http2Adapter) -> None:
    """AD-H2-POLICY ``initial_settings``, §6.5.2: the SETTINGS it sent are the ones it
    declares; a SETTINGS it never sent leaves 65,535 and 16,384 (§6.5.2 defaults)."""
    run = Run(adapter)
    blocked_upload(run)  # an implementation reading only while a request waits reads now
    got = run.reply.state["peer"]["settings"]
    for key, value in adapter.policy["initial_settings"].items():
        assert got[key] == value, key
    acks = [f for f in run.frames if f["type"] == "SETTINGS" and f["ack"]]
    assert {f["from"] for f in acks} == {"implementation", "peer"}  # §6.5.3 both ways


# -- §6.9.1: never beyond either window; resume on WINDOW_UPDATE ---------------------------


def test_sends_exactly_the_initial_window_then_resumes_on_window_update(
    adapter: Http2Adapter,
) -> None:
    """§6.9.1, §6.9.2: a 100,000-octet body stops at exactly 65,535 octets (both initial
    windows); a connection WINDOW_UPDATE alone releases nothing (the stream window is
    0); a stream WINDOW_UPDATE of 10,000 releases exactly 10,000 more."""
    run = Run(adapter)
    run.upload(1, 100_000)
    sent = sum(
        f["length"] for f in run.frames if f["from"] == "implementation" and f["type"] == "DATA"
    )
    assert sent == W
    assert run.reply.peer_connection["recv_window"] == 0
    run.op("window_update", stream=0, increment=100_000)
    assert run.reply.data_octets() == 0
    run.op("window_update", stream=1, increment=10_000)
    assert run.reply.data_octets() == 10_000
    assert run.reply.peer_stream(1)["recv_window"] == 0


def test_frames_are_split_as_it_declares(adapter: Http2Adapter) -> None:
    """AD-H2-POLICY ``split``, §4.2: no DATA frame exceeds the peer's
    SETTINGS_MAX_FRAME_SIZE (16,384 by default)."""
    run = Run(adapter)
    run.upload(1, 50_000)
    lengths = [
        f["length"] for f in run.frames if f["from"] == "implementation" and f["type"] == "DATA"
    ]
    assert sum(lengths) == 50_000
    assert max(lengths) <= fr.DEFAULT_MAX_FRAME


# -- §6.9.2: SETTINGS_INITIAL_WINDOW_SIZE moves open streams' windows ----------------------


def test_a_settings_shrink_makes_the_window_negative_and_it_waits(
    adapter: Http2Adapter,
) -> None:
    """§6.9.2: after 65,535 octets the stream window is 0; SETTINGS_INITIAL_WINDOW_SIZE
    16,384 moves it to −49,151; WINDOW_UPDATE 49,151 brings it to 0 (nothing sent), then
    1,000 more releases exactly 1,000 (AD-H2-POLICY ``negative_window``). FINDING H2-F3
    (httpcore 1.0.9): the upload fails instead, "Cannot send 85314 bytes, flow control
    window is -49151"."""
    run = Run(adapter)
    run.upload(1, 200_000)
    run.op("window_update", stream=0, increment=1_000_000)
    run.op("settings", initial_window_size=16_384)
    assert run.reply.peer_stream(1)["recv_window"] == 16_384 - W
    assert run.reply.data_octets() == 0
    run.op("window_update", stream=1, increment=W - 16_384)
    assert run.reply.data_octets() == 0
    run.op("window_update", stream=1, increment=1_000)
    if finding(adapter, "negative-window", "waits") == "request-fails":
        assert run.reply.data_octets() == 0
        error = run.reply.state["implementation"]["streams"]["1"]["error"]
        assert "flow control window is -49151" in error
    else:
        assert run.reply.data_octets() == 1_000


def test_a_settings_growth_releases_the_difference(adapter: Http2Adapter) -> None:
    """§6.9.2: raising SETTINGS_INITIAL_WINDOW_SIZE from 65,535 to 100,000 adds 34,465
    to the open stream's window, and exactly that much more is sent."""
    run = Run(adapter)
    run.upload(1, 200_000)
    run.op("window_update", stream=0, increment=1_000_000)
    run.op("settings", initial_window_size=100_000)
    assert run.reply.data_octets() == 100_000 - W


# -- §6.9: a zero increment; §6.9.1: a window above 2^31 − 1 -------------------------------


def assert_refused(run: Run, code: str, *, connection: bool, key: str | None = None) -> None:
    """The implementation answered a flow-control violation with ``code`` (GOAWAY for a
    connection error; RST_STREAM or GOAWAY for a stream error, §5.4.1), or does what its
    release is known to do instead (FINDINGS[``key``], default ``code``)."""
    got = finding(run.adapter, key or code, code)
    if got == "request-fails":  # H2-F4: the request fails, nothing goes on the wire
        assert run.errors() == []
        error = run.reply.state["implementation"]["streams"]["1"].get("error", "")
        assert "LocalProtocolError" in error
    elif connection:
        assert run.reply.goaway() == got
    else:
        assert got in run.errors()


def blocked_upload(run: Run) -> None:
    """Stream 1 sends 65,535 of 100,000 octets and waits for window (so that even an
    implementation reading frames only while a request waits reads the next one)."""
    run.upload(1, 100_000)
    assert run.reply.peer_stream(1)["recv_window"] == 0


def test_a_zero_connection_increment_is_a_protocol_error(adapter: Http2Adapter) -> None:
    """§6.9: a WINDOW_UPDATE of 0 on the connection is a connection error
    PROTOCOL_ERROR: a GOAWAY with that code."""
    run = Run(adapter)
    blocked_upload(run)
    run.op("window_update", stream=0, increment=0)
    assert_refused(run, "PROTOCOL_ERROR", connection=True)


def test_a_zero_stream_increment_is_a_protocol_error(adapter: Http2Adapter) -> None:
    """§6.9: a WINDOW_UPDATE of 0 on a stream is a stream error PROTOCOL_ERROR (an
    RST_STREAM, or a GOAWAY: §5.4.1 lets an endpoint treat it as a connection error)."""
    run = Run(adapter)
    blocked_upload(run)
    run.op("window_update", stream=1, increment=0)
    assert_refused(run, "PROTOCOL_ERROR", connection=False)


def window_raised_to_the_limit(adapter: Http2Adapter, stream: int, extra: int) -> Run:
    """A blocked upload whose window on ``stream`` (0: the connection) is raised to
    1,000, no octet moving, then by 2^31 − 1 − 1,000 + ``extra`` octets."""
    run = Run(adapter)
    blocked_upload(run)
    run.op("window_update", stream=stream, increment=1_000)
    assert run.reply.data_octets() == 0
    run.op("window_update", stream=stream, increment=MAX - 1_000 + extra)
    return run


def test_a_connection_window_above_the_limit_is_a_flow_control_error(
    adapter: Http2Adapter,
) -> None:
    """§6.9.1: with the connection window at 1,000 (stream 1's at 0, so nothing moves),
    an increment to exactly 2^31 − 1 is accepted; one octet more is GOAWAY
    FLOW_CONTROL_ERROR."""
    for extra in (0, 1):
        run = window_raised_to_the_limit(adapter, stream=0, extra=extra)
        if extra == 0:
            assert run.errors() == []
        else:
            assert_refused(run, "FLOW_CONTROL_ERROR", connection=True, key="conn-overflow")


def test_a_stream_window_above_the_limit_is_a_flow_control_error(
    adapter: Http2Adapter,
) -> None:
    """§6.9.1: with stream 1's window at 1,000 (the connection's at 0), an increment to
    exactly 2^31 − 1 is accepted; one more octet is a stream error FLOW_CONTROL_ERROR.
    FINDING H2-F1 (node 20.20.2): the RST_STREAM is followed by GOAWAY INTERNAL_ERROR."""
    over = finding(adapter, "stream-overflow", "FLOW_CONTROL_ERROR").split(",")
    for extra in (0, 1):
        run = window_raised_to_the_limit(adapter, stream=1, extra=extra)
        if extra == 0:
            assert run.errors() == []
        else:
            assert run.errors() == over


# -- §6.9.1: the empty END_STREAM DATA frame ---------------------------------------------


def test_an_empty_end_stream_is_sent_with_no_window_left(adapter: Http2Adapter) -> None:
    """§6.9.1: a body of exactly 65,535 octets leaves both windows at 0; the DATA frame
    carrying END_STREAM then has length 0 or is the last frame of the body — END_STREAM
    is never held back for want of window (AD-H2-POLICY ``empty_end_stream``)."""
    run = Run(adapter)
    run.upload(1, W, end_stream=True)
    data = [f for f in run.frames if f["from"] == "implementation" and f["type"] == "DATA"]
    assert sum(f["length"] for f in data) == W
    assert data[-1]["end_stream"] is True


# -- receiving: credit returned, DATA on reset streams -----------------------------------


def open_inbound(run: Run, stream: int) -> None:
    """A stream on which the peer can send DATA to the implementation (a client that
    reads a response only once its request body has ended ends it: ``x-reads-after-body``)."""
    run.open(stream)
    if "send" in run.adapter.ops and run.policy.get("x-send") != "request":
        ended = bool(run.policy.get("x-reads-after-body"))
        run.op("send", stream=stream, octets=0, end_stream=ended)


def test_credit_is_returned_as_declared(adapter: Http2Adapter) -> None:
    """AD-H2-POLICY ``credit``: 40,000 octets to the implementation, read by its
    application (``consume`` where offered), come back as WINDOW_UPDATEs on the
    connection adding up to at most what was received: all of it for a policy that
    returns on receipt, all but less than half a window at the half-window threshold."""
    run = Run(adapter)
    open_inbound(run, 1)
    before = len(run.frames)
    run.op("data", stream=1, octets=40_000)
    if "consume" in adapter.ops:
        run.op("consume", stream=1, octets=40_000)
    ups = [
        f["increment"]
        for f in run.frames[before:]
        if f["from"] == "implementation" and f["type"] == "WINDOW_UPDATE" and f["stream"] == 0
    ]
    assert sum(ups) <= 40_000
    credit = adapter.policy["credit"]
    if credit.get("threshold") == "half":  # what is still unreturned is below half a window
        assert 40_000 - sum(ups) <= credit.get("window", W) // 2
    elif credit.get("policy") == "receipt":
        assert sum(ups) == 40_000


def assert_credited(run: Run, before: int, declared: str) -> None:
    """After 65,535 octets on a reset stream, the connection credit given back is what
    ``declared`` says: ``connection`` at least half of it, ``none`` nothing. A receiver
    whose connection window exceeds twice 65,535 (``x-large-window``) need not give any
    back yet (its half-window threshold is not reached), so nothing is concluded."""
    credited = run.reply.peer_connection["send_window"] - (before - W)
    if declared == "connection":
        assert credited >= W // 2
    elif declared == "x-large-window":
        assert run.policy["credit"]["window"] > 2 * W and credited == 0
    else:
        assert declared == "none"
        assert credited == 0


def test_data_after_a_reset_is_credited_back_as_declared(adapter: Http2Adapter) -> None:
    """§6.9, §5.1: DATA received after sending RST_STREAM still counts against the
    connection window. The implementation resets stream 1 (``cancel``), then a whole
    connection window of 65,535 octets the peer had in flight arrives on it. A receiver
    that credits such DATA back (AD-H2-POLICY ``reset_credit`` = ``connection``) gives
    the connection at least half of it back; one that does not (``none``) leaves the
    connection window at 0 for good: every other stream stalls."""
    run = Run(adapter)
    open_inbound(run, 1)
    if "cancel" not in adapter.ops:  # the application cannot reset a stream by itself
        assert adapter.policy["reset_credit"] == "x-untested"
        assert "unknown op" in str(adapter.try_step({"op": "cancel", "stream": 1}))
        return
    run.op("cancel", stream=1)
    if finding(adapter, "cancel", "rst") == "silent":  # H2-F5
        assert run.sent("RST_STREAM") == []
    else:
        assert [f["stream"] for f in run.sent("RST_STREAM")] == [1]
    before = run.reply.peer_connection["send_window"]
    run.op("data", stream=1, octets=W)  # in flight when the stream was reset
    assert set(run.errors()) <= {"STREAM_CLOSED"}  # §5.1: it may answer with RST_STREAM
    assert_credited(run, before, adapter.policy["reset_credit"])


def test_unread_data_of_a_reset_stream_is_credited_back_as_declared(
    adapter: Http2Adapter,
) -> None:
    """§6.9, §5.1: the peer fills the connection window on stream 1, which the
    application never reads, then resets stream 1. A receiver that credits back what it
    discards (AD-H2-POLICY ``discard_credit`` = ``connection``) gives the connection at
    least half a window back; one that does not (``none``) leaves it at 0: a leak that
    stalls every other stream."""
    run = Run(adapter)
    open_inbound(run, 1)
    before = run.reply.peer_connection["send_window"]
    run.op("data", stream=1, octets=W)
    run.op("rst_stream", stream=1, error="CANCEL")
    run.op("ping")
    assert_credited(run, before, adapter.policy["discard_credit"])


def unread_stream_run(adapter: Http2Adapter, frames: int = 12) -> Run:
    """Stream 1's application reads nothing while the peer sends it ``frames``
    1,000-octet DATA frames (within every window); then 1,000 octets on stream 3, which
    its application reads, then a PING."""
    run = Run(adapter)
    open_inbound(run, 1)
    open_inbound(run, 3)
    for _ in range(frames):
        run.op("data", stream=1, octets=1_000)
    run.op("data", stream=3, octets=1_000)
    if "consume" in adapter.ops:
        # a client reading frames only while a request reads keeps reading stream 3
        more = 1 << 20 if adapter.policy.get("x-reads-after-body") else 0
        run.op("consume", stream=3, octets=1_000 + more)
    run.op("ping")
    return run


def test_one_unread_stream_does_not_stop_the_connection(adapter: Http2Adapter) -> None:
    """PROP-H2 no stall, §6.7: with stream 1 unread, stream 3 still receives and a PING is
    still answered. FINDING H2-F2 (hypercorn 0.14.4, 0.17.3, 0.18.0): the eleventh
    unread frame blocks hypercorn's whole connection — no PING ACK, stream 3's
    application receives nothing."""
    run = unread_stream_run(adapter)
    acks = [f for f in run.sent("PING") if f["ack"]]
    if finding(adapter, "unread-stream", "ok") == "connection-stalls":
        assert acks == []
        assert run.reply.state["implementation"]["streams"]["3"]["read"] == 0
    else:
        assert len(acks) == 1


def test_hypercorn_stalls_at_its_application_queue_size() -> None:
    """FINDING H2-F2, pinned to hypercorn 0.17.3 and checked at 0.18.0 (AD-H2-VERSION):
    ten unread frames (max_app_queue_size) still leave the connection working; the
    eleventh stops it."""
    for name in ("hypercorn", "hypercorn@0.18.0"):
        adapter = start(name)
        try:
            assert adapter.policy["x-app-queue"] == 10
            ok = unread_stream_run(adapter, frames=10)
            assert [f for f in ok.sent("PING") if f["ack"]] != []
            stalled = unread_stream_run(adapter, frames=11)
            assert [f for f in stalled.sent("PING") if f["ack"]] == []
        finally:
            adapter.close()


# -- AD-H2-TRANSPORT, AD-H2-RESET, AD-H2-REFUSE, AD-H2-REPLY, AD-H2-STATE -----------------


def test_transport_refusals_and_reset(tmp_path: Path) -> None:
    """AD-H2-TRANSPORT: a line that is not JSON and an unknown op are answered
    ``ok: false`` and the adapter goes on; AD-H2-RESET: an unknown setting is refused,
    naming it; AD-H2-REFUSE: an out-of-order stream, consuming more than is held and an
    increment past 31 bits are refused and change nothing."""
    adapter = start("h2")
    try:
        adapter.submit(b"not json\n")
        (raw,) = adapter.collect(1)
        answer = json.loads(raw)
        assert answer["ok"] is False and answer["error"].startswith("not JSON")
        assert "unknown op" in str(adapter.try_step({"op": "no-such-op"}))
        refused = adapter.try_step({"op": "reset", "settings": {"window": 5}})
        assert isinstance(refused, str) and "window" in refused
        run = Run(adapter)
        assert "next stream is 1" in str(adapter.try_step({"op": "open", "stream": 3}))
        run.open(1)
        held = adapter.try_step({"op": "consume", "stream": 1, "octets": 1})
        assert isinstance(held, str) and "holds 0 octets" in held
        big = adapter.try_step({"op": "window_update", "stream": 0, "increment": MAX + 1})
        assert isinstance(big, str) and "2^31 - 1" in big
        after = run.op("state")
        assert after.frames == ()  # nothing was sent by the refused ops
    finally:
        adapter.close()


def test_reply_and_state_agree_with_the_library_at_rest() -> None:
    """AD-H2-REPLY, AD-H2-STATE, AD-H2-QUIESCE, AD-H2-ENDS: after every op the answer is at
    rest, so h2's own windows equal the peer's account of them, level by level, both
    directions; h2 is the client (odd stream ids), the peer the server."""
    adapter = start("h2")
    try:
        assert adapter.info["role"] == "client"
        run = Run(adapter)
        run.upload(1, 30_000)
        run.op("data", stream=1, octets=20_000)
        run.op("consume", stream=1, octets=20_000)
        run.op("settings", initial_window_size=40_000)
        run.op("window_update", stream=0, increment=5_000)
        state = run.reply.state
        peer, lib_view = state["peer"], state["implementation"]
        assert lib_view["connection"]["send_window"] == peer["connection"]["recv_window"]
        assert lib_view["connection"]["recv_window"] == peer["connection"]["send_window"]
        mine, theirs = lib_view["streams"]["1"], peer["streams"]["1"]
        assert mine["send_window"] == theirs["recv_window"] == 40_000 - 30_000
        assert mine["recv_window"] == theirs["send_window"]
        assert set(f["from"] for f in run.frames) == {"implementation", "peer"}
    finally:
        adapter.close()


def test_a_helper_that_cannot_start_is_an_adapter_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AD-H2-FAILURE, AD-H2-CHILD: a Node program that exits at once ends the adapter
    with one stderr line (exit 3), an adapter failure for the driver."""
    monkeypatch.setenv("CREDITFLOW_H2_PROGRAM", "/bin/false")
    argv = [sys.executable, "-m", "creditflow.adapters.http2.node_http2"]
    with pytest.raises(AdapterFailure) as exc:
        Http2Adapter(argv, name="node")
    message = str(exc.value)
    assert "exited with code 3" in message and "\n" not in message


def test_helpers_listen_on_loopback_and_die_with_the_adapter() -> None:
    """AD-H2-LOOPBACK, AD-H2-CHILD: nghttpd listens on 127.0.0.1 only, in the adapter's
    process group, and is gone once the adapter is closed."""
    adapter = start("nghttp2")
    try:
        Run(adapter)
        pid = adapter._proc.pid  # noqa: SLF001 - the transport's child, for this check
        found = subprocess.run(
            ["pgrep", "-g", str(os.getpgid(pid)), "nghttpd"], capture_output=True, text=True
        )
        helpers = found.stdout.split()
        assert len(helpers) == 1
        listening = Path("/proc/net/tcp").read_text()
        port = nghttpd_server.listening_port(int(helpers[0]))
        assert port is not None and f"0100007F:{port:04X}" in listening
    finally:
        adapter.close()
    assert not Path(f"/proc/{helpers[0]}").exists() or "zombie" in (
        Path(f"/proc/{helpers[0]}/status").read_text().lower()
    )


def test_the_alphabet_note_maps_every_op() -> None:
    """AD-H2-ALPHABET: until the family's alphabet is written, its spec section maps every
    op an adapter can offer (serving's ops but ``reset``) to a model action."""
    text = (
        Path(__file__).resolve().parent.parent / "spec" / "adapter-protocol-http2.md"
    ).read_text()
    section = text.split("## AD-H2-ALPHABET", 1)[1]
    rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| `")]
    mapped = {row.strip("`").split("(")[0] for row in rows}
    offered = {*serving.APP_OPS, *serving.PEER_OPS, *serving.SESSION_OPS} - {"reset", "ping"}
    assert offered <= mapped, sorted(offered - mapped)


# -- AD-H2-PEER: the codec by hand ----------------------------------------------------------


def test_the_codec_writes_rfc_9113_frame_headers() -> None:
    """AD-H2-FRAMES, §4.1: length 24 bits, type, flags, stream 31 bits, payload; a
    WINDOW_UPDATE's 31-bit increment; the reader splits a byte stream at any point."""
    frame = fr.window_update(3, 1000)
    octets = frame.encode()
    assert octets == bytes([0, 0, 4, 8, 0, 0, 0, 0, 3, 0, 0, 3, 0xE8])
    reader = fr.FrameReader()
    both = octets + fr.data(1, 5, end_stream=True).encode()
    got = [*reader.feed(both[:7]), *reader.feed(both[7:20]), *reader.feed(both[20:])]
    assert [fr.describe(f) for f in got] == [
        {"type": "WINDOW_UPDATE", "stream": 3, "increment": 1000},
        {"type": "DATA", "stream": 1, "length": 5, "end_stream": True},
    ]


def test_the_peer_accounts_windows_by_the_frames() -> None:
    """AD-H2-WINDOWS: DATA the implementation sends lowers the peer's receive windows;
    a SETTINGS the implementation acked moves every stream's window by the difference
    (§6.9.2); DATA beyond a window is marked."""
    peer = Peer("server")
    peer.take_output()
    peer.receive(fr.PREFACE + fr.settings({}).encode())
    peer.receive(fr.headers(1, hpack_block()).encode() + fr.data(1, 60_000).encode())
    assert peer.streams[1].recv == W - 60_000 and peer.conn_recv == W - 60_000
    peer.send_settings({"SETTINGS_INITIAL_WINDOW_SIZE": 1_000})
    peer.receive(fr.settings(ack=True).encode())  # acks the first SETTINGS
    assert peer.streams[1].recv == W - 60_000
    peer.receive(fr.settings(ack=True).encode())
    assert peer.streams[1].recv == 1_000 - 60_000
    peer.receive(fr.data(1, 1).encode())
    assert peer.log[-1]["beyond_window"] is True


def hpack_block() -> bytes:
    import hpack  # deferred: only this codec test needs an encoder of its own

    return bytes(hpack.Encoder().encode([(":method", "GET"), (":path", "/")]))


# -- AD-H2-VERSION --------------------------------------------------------------------------


def test_an_unknown_adapter_and_a_bogus_release_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AD-H2-VERSION: an unknown library is a usage error at once; a release name that
    is no name, and a program release the machine lacks, are one-line adapter failures
    before any install."""
    monkeypatch.setenv("CREDITFLOW_CACHE", str(tmp_path))
    with pytest.raises(UnknownAdapter):
        http2_adapter_factory("quiche")
    for name in ("h2@../../x", "node@0.0.1"):
        with pytest.raises(AdapterFailure) as exc:
            http2_adapter_factory(name)()
        assert "\n" not in str(exc.value) and "cannot install" in str(exc.value)
    assert versions.main(["install", "nghttp2@0.0.1"]) == 3


def test_an_installed_release_runs_from_its_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AD-H2-VERSION, AD-VERSION: ``h2@V`` with a completed install puts V's folder
    first on PYTHONPATH (no pip run); plain ``h2`` runs the project's pinned release."""
    folder = fake_installed_release(tmp_path, monkeypatch, "http2", "h2", "9.9.9")
    cmd = versions.command("h2@9.9.9")
    assert cmd.env["PYTHONPATH"].split(":")[0] == str(folder)
    assert cmd.version == "9.9.9"
    assert versions.command("h2").version == versions.PINNED["h2"]


# -- the version matrix (docs/http2-adapters.md) ------------------------------------------


def shrink_run(adapter: Http2Adapter) -> Run:
    """The SETTINGS shrink of §6.9.2 up to the point where the window is back at +1,000."""
    run = Run(adapter)
    run.upload(1, 200_000)
    run.op("window_update", stream=0, increment=1_000_000)
    run.op("settings", initial_window_size=16_384)
    run.op("window_update", stream=1, increment=W - 16_384 + 1_000)
    return run


def test_version_matrix_httpcore_negative_window() -> None:
    """FINDING H2-F3 at another release (AD-H2-VERSION): httpcore 1.0.5 fails the upload
    on a negative window exactly as 1.0.9 does."""
    adapter = start("httpcore@1.0.5")
    try:
        assert adapter.info["version"] == "1.0.5"
        run = shrink_run(adapter)
        assert run.reply.data_octets() == 0
        assert (
            "flow control window is -49151"
            in (run.reply.state["implementation"]["streams"]["1"]["error"])
        )
    finally:
        adapter.close()


def test_version_matrix_h2_holds_the_rules() -> None:
    """AD-H2-VERSION: h2 4.1.0 tracks the negative window and answers a zero increment
    with GOAWAY PROTOCOL_ERROR, as 4.3.0 does."""
    adapter = start("h2@4.1.0")
    try:
        assert adapter.info["version"] == "4.1.0"
        run = shrink_run(adapter)
        assert run.reply.data_octets() == 1_000
        run.op("window_update", stream=0, increment=0)
        assert run.reply.goaway() == "PROTOCOL_ERROR"
    finally:
        adapter.close()


def node_connection_errors(name: str) -> tuple[str, str | None, str | None]:
    """The release and the GOAWAY codes of ``name`` for a zero connection increment and
    for a connection window one octet past 2^31 − 1 (while an upload waits)."""
    adapter = start(name)
    try:
        codes = []
        for increment in (0, MAX - 1_000 + 1):
            run = Run(adapter)
            blocked_upload(run)
            if increment:
                run.op("window_update", stream=0, increment=1_000)
            run.op("window_update", stream=0, increment=increment)
            codes.append(run.reply.goaway())
        return str(adapter.info["version"]), codes[0], codes[1]
    finally:
        adapter.close()


def test_version_matrix_node_connection_error_codes() -> None:
    """FINDING H2-F1 across releases (AD-H2-VERSION: ``node@V`` is npm's Node binary in the
    cache): 20.18.0 and 22.23.5 answer with PROTOCOL_ERROR and FLOW_CONTROL_ERROR as
    RFC 9113 asks; 20.19.0 already sends INTERNAL_ERROR for the zero increment; the
    machine's 20.20.2 for both."""
    assert node_connection_errors("node@20.18.0") == (
        "20.18.0",
        "PROTOCOL_ERROR",
        "FLOW_CONTROL_ERROR",
    )
    assert node_connection_errors("node@22.23.5") == (
        "22.23.5",
        "PROTOCOL_ERROR",
        "FLOW_CONTROL_ERROR",
    )
    assert node_connection_errors("node@20.19.0") == (
        "20.19.0",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
    )
