"""The ``http2`` family's adapter alphabet (FAM-ALPHABET, AD-H2-ALPHABET,
AD-H2-CONFORM-OPS): the ops ``conform`` draws, the model side that answers them under
the policy an adapter declares (AD-H2-POLICY), the runs it tries (AD-H2-CONFORM-RUNS)
and ``open_command`` for ``--adapter-cmd``.

The model side is ``model/http2``'s own rules applied to the implementation's sending
half of stream 1 (H2-SEND, H2-DEBIT, H2-WINDOW-UPDATE, H2-ZERO-INCREMENT, H2-WINDOW-MAX,
H2-SETTINGS-APPLY, H2-NEGATIVE, H2-RESET), plus its receiving windows as the peer's DATA
and the implementation's WINDOW_UPDATEs move them (H2-RECV-EXCESS, H2-DEBIT).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.differential.adapter import PROTOCOL, AdapterFailure
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT, JsonLinesProcess
from creditflow.model.http2 import sender, settings
from creditflow.model.http2.constants import (
    CONNECTION_INITIAL_WINDOW,
    DEFAULT_INITIAL_WINDOW_SIZE,
    DEFAULT_MAX_FRAME_SIZE,
    FLOW_CONTROL_ERROR,
    MAX_WINDOW_SIZE,
    PROTOCOL_ERROR,
)
from creditflow.model.http2.state import CONNECTION, End, SendHalf, Settings, WindowUpdate
from creditflow.model.http2.topology import EndConfig

FAMILY = "http2"
#: AD-H2-CONFORM: explorer runs, then Hypothesis runs
PHASES = ("explorer-runs", "hypothesis-runs")
#: AD-H2-CONFORM: budgets without --max-examples / --steps / --depth
DEFAULT_EXAMPLES = 12
DEFAULT_STEPS = 3
DEFAULT_DEPTH = 1
#: AD-H2-CONFORM-OPS: the stream every run uploads on and the peer's frames target
STREAM = 1
#: the shrunk window of the SETTINGS op (§6.9.2: 65,535 → 16,384 moves an open stream by −49,151)
SHRINK = 16_384
#: AD-H2-CONFORM-OPS: DATA frames of ``flood`` (one more than hypercorn's app queue)
FLOOD_FRAMES = 12
FLOOD_OCTETS = 1_000


@dataclass(frozen=True)
class H2Op:
    """One op of the alphabet (AD-H2-CONFORM-OPS): its name and the adapter requests it
    sends (``flood`` is several)."""

    name: str
    requests: tuple[dict[str, Any], ...]

    def __str__(self) -> str:
        return self.name


def _op(name: str, *requests: dict[str, Any]) -> H2Op:
    return H2Op(name, tuple(requests))


#: AD-H2-CONFORM-OPS: what a run draws after its prefix (AD-H2-CONFORM-RUNS).
OPS: tuple[H2Op, ...] = (
    _op("window_update(0, 0)", {"op": "window_update", "stream": 0, "increment": 0}),
    _op("window_update(1, 0)", {"op": "window_update", "stream": STREAM, "increment": 0}),
    _op(
        "window_update(0, 2^31-1)",
        {"op": "window_update", "stream": 0, "increment": MAX_WINDOW_SIZE},
    ),
    _op(
        "window_update(1, 2^31-1)",
        {"op": "window_update", "stream": STREAM, "increment": MAX_WINDOW_SIZE},
    ),
    _op("window_update(1, 60000)", {"op": "window_update", "stream": STREAM, "increment": 60_000}),
    _op("settings(16384)", {"op": "settings", "initial_window_size": SHRINK}),
    _op("data(1, 16384)", {"op": "data", "stream": STREAM, "octets": DEFAULT_MAX_FRAME_SIZE}),
    _op("consume(1)", {"op": "consume", "stream": STREAM}),
    _op("cancel(1)", {"op": "cancel", "stream": STREAM}),
    _op("rst_stream(1)", {"op": "rst_stream", "stream": STREAM, "error": "CANCEL"}),
    _op(
        "flood(1)",
        *[{"op": "data", "stream": STREAM, "octets": FLOOD_OCTETS}] * FLOOD_FRAMES,
        {"op": "ping"},
    ),
    _op("ping", {"op": "ping"}),
)
OPS_BY_NAME = {o.name: o for o in OPS}

#: AD-H2-CONFORM-RUNS: the prefixes a run starts with, after ``reset``
RUNS: tuple[Mapping[str, Any], ...] = (
    # both windows spent: 65,535 of 100,000 octets sent, the rest queued
    {"name": "blocked", "upload": 100_000, "connection_credit": 0},
    # only the stream window spent: the connection credited 1,000,000 octets
    {"name": "credited", "upload": 200_000, "connection_credit": 1_000_000},
    # a whole request (or response) of 1,000 octets, END_STREAM sent: the other end's
    # body is what is left to read (httpcore reads a response only once its body ended)
    {"name": "ended", "upload": 1_000, "connection_credit": 0, "end_stream": True},
)


#: the peer's frames an implementation answers (a PING ACK, an error, a SETTINGS ACK)
ANSWERED = frozenset({"ping", "window_update", "settings"})


@dataclass
class Expect:
    """What the model says one adapter request must bring (AD-H2-CONFORM-RULES): the
    DATA octets the implementation sends on stream 1, the error it must answer with
    (``code``, and whether on the connection), whether a PING ACK and an RST_STREAM are
    due."""

    data: int = 0
    code: str = ""
    connection: bool = False
    rule: str = ""
    ping_ack: bool = False
    rst_stream: bool = False
    why: str = ""
    #: errors the implementation may send without the model asking (§5.1, §5.4.1)
    allowed: tuple[str, ...] = ()


@dataclass
class H2Model:
    """The model side of one run (AD-H2-ALPHABET): ``model/http2``'s sending rules on the
    implementation's half of stream 1 and the windows of the peer's DATA."""

    policy: Mapping[str, Any]
    role: str
    ops: frozenset[str]
    cfg: EndConfig = field(default_factory=EndConfig)
    peer: EndConfig = field(default_factory=EndConfig)
    end: End = field(
        default_factory=lambda: End(
            CONNECTION_INITIAL_WINDOW,
            DEFAULT_INITIAL_WINDOW_SIZE,
            CONNECTION_INITIAL_WINDOW,
            0,
            DEFAULT_INITIAL_WINDOW_SIZE,
            (),
            0,
            (SendHalf("idle", DEFAULT_INITIAL_WINDOW_SIZE, 0),),
        )
    )
    ending: bool = False
    #: the peer's send windows (the implementation's receive windows), by the frames
    peer_conn: int = CONNECTION_INITIAL_WINDOW
    peer_stream: int = DEFAULT_INITIAL_WINDOW_SIZE
    peer_ended: bool = False
    stream_reset: bool = False
    dead: bool = False
    held: int = 0

    @property
    def idle_reader(self) -> bool:
        """AD-H2-POLICY ``x-reads-after-body``: once its body ended, the implementation
        reads frames only as its application reads the response, so a frame that wants
        an answer (PING, an erroneous WINDOW_UPDATE or SETTINGS) is not answered at rest."""
        return bool(self.policy.get("x-reads-after-body")) and self.half.state == "closed"

    @property
    def half(self) -> SendHalf:
        return sender.half(self.end, 0)

    def possible(self, op: H2Op) -> bool:
        """Whether the model (and the adapter's ``ops``) allow ``op`` now."""
        if self.dead:
            return False
        for req in op.requests:
            if req["op"] not in self.ops:
                return False
        first = op.requests[0]["op"]
        if self.idle_reader and any(r["op"] in ANSWERED for r in op.requests):
            return False  # x-reads-after-body: nothing reads such a frame now
        if first == "data":
            return not self.peer_ended and not self.stream_reset
        if first in ("cancel", "rst_stream", "consume"):
            return not self.stream_reset and not (first == "consume" and self.held == 0)
        return True

    def sendable(self) -> int:
        """H2-SEND at rest: the octets the sender sends now, frame by frame, until
        :func:`sender.next_frame` has none (H2-NO-EXCESS, H2-NEGATIVE)."""
        total = 0
        while self.half.state == "open":
            frame = sender.next_frame(self.cfg, self.peer, self.end, 0)
            if frame is None or (frame.data == 0 and not self.ending):
                break
            self.end = sender.send_data(self.end, frame)
            total += frame.data
        return total

    def apply(self, req: Mapping[str, Any]) -> Expect:
        """AD-H2-ALPHABET: one adapter request applied to the model; what it expects."""
        op = req["op"]
        if op == "open":
            h = self.half
            self.end = self.end._replace(streams=(SendHalf("open", self.end.send_initial, h.left),))
            return Expect()
        if op == "send":
            if self.half.state == "idle":  # x-send: request, a GET of its own
                self.apply({"op": "open"})
                self.peer_ended = True  # the peer's GET carried END_STREAM
            h = self.half
            self.end = self.end._replace(streams=(h._replace(left=h.left + int(req["octets"])),))
            self.ending = bool(req.get("end_stream"))
            return Expect(data=self.sendable())
        if op == "window_update":
            return self._window_update(int(req["stream"]), int(req["increment"]))
        if op == "settings":
            out = settings.on_settings(self.end, Settings(int(req["initial_window_size"])))
            if out.error:
                self.dead = True
                return Expect(code=FLOW_CONTROL_ERROR, connection=True, rule="H2-WINDOW-MAX")
            self.end = out.end
            return Expect(data=self.sendable())
        if op == "data":
            return self._data(int(req["octets"]))
        if op == "consume":
            self.held = 0
            return Expect()
        if op in ("cancel", "rst_stream"):
            if self.half.state in ("open", "closed"):
                self.end = sender.reset_half(self.end, 0).end
            self.stream_reset = True
            return Expect(rst_stream=op == "cancel", rule="H2-RESET")
        if op == "ping":
            return Expect(ping_ack=True)
        return Expect()

    def _window_update(self, stream: int, increment: int) -> Expect:
        """H2-WINDOW-UPDATE, H2-ZERO-INCREMENT, H2-WINDOW-MAX through ``model/http2``."""
        if stream != 0 and self.half.state not in ("open", "closed"):
            # a reset stream's WINDOW_UPDATE is ignored; a zero increment there may
            # still be PROTOCOL_ERROR (§6.9), as a connection error (§5.4.1)
            return Expect(allowed=(PROTOCOL_ERROR,) if increment == 0 else ())
        if stream != 0 and self.half.state == "closed" and self.peer_ended:
            # §5.1: a closed stream's late WINDOW_UPDATE may be ignored or be an error
            return Expect(allowed=(PROTOCOL_ERROR, FLOW_CONTROL_ERROR, "STREAM_CLOSED"))
        index = CONNECTION if stream == 0 else 0
        out = sender.on_window_update(self.end, WindowUpdate(index, increment), (STREAM,))
        if out.error:
            code = out.error.partition(":")[0]
            rule = "H2-ZERO-INCREMENT" if code == PROTOCOL_ERROR else "H2-WINDOW-MAX"
            if out.fatal:
                self.dead = True
            else:
                self.end = out.end
                self.stream_reset = True
            return Expect(code=code, connection=out.fatal, rule=rule, why=out.error)
        self.end = out.end
        return Expect(data=self.sendable())

    def _data(self, octets: int) -> Expect:
        """H2-RECV-EXCESS, H2-DEBIT: the peer's DATA within or beyond the implementation's
        receive windows."""
        if octets > self.peer_conn:
            self.dead = True
            return Expect(code=FLOW_CONTROL_ERROR, connection=True, rule="H2-RECV-EXCESS")
        if octets > self.peer_stream:
            self.stream_reset = True
            return Expect(code=FLOW_CONTROL_ERROR, rule="H2-RECV-EXCESS")
        self.peer_conn -= octets
        self.peer_stream -= octets
        self.held += octets
        return Expect()

    def credited(self, frames: Sequence[Mapping[str, Any]]) -> None:
        """The implementation's WINDOW_UPDATEs (its credit policy, AD-H2-POLICY ``credit``)
        open the peer's windows again."""
        for f in frames:
            if f["from"] == "implementation" and f["type"] == "WINDOW_UPDATE":
                if f["stream"] == 0:
                    self.peer_conn += int(f["increment"])
                elif f["stream"] == STREAM:
                    self.peer_stream += int(f["increment"])


def prefix(info: Mapping[str, Any], run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """AD-H2-CONFORM-RUNS: ``reset``, stream 1 opened and its upload queued (nghttpd's
    ``send`` is a GET on its own, ``x-send: request``), the connection credit."""
    policy = info.get("policy") or {}
    reqs: list[dict[str, Any]] = [{"op": "reset", "settings": {}}]
    if policy.get("x-send") == "request":
        reqs.append({"op": "send", "stream": STREAM, "octets": run["upload"], "end_stream": True})
    else:
        reqs.append({"op": "open", "stream": STREAM})
        reqs.append(
            {
                "op": "send",
                "stream": STREAM,
                "octets": run["upload"],
                "end_stream": bool(run.get("end_stream")),
            }
        )
    if run["connection_credit"]:
        reqs.append({"op": "window_update", "stream": 0, "increment": run["connection_credit"]})
    return reqs


class Http2Command(JsonLinesProcess):
    """AD-CMD for the ``http2`` family: any command whose ``hello`` lists ``http2`` and
    says what AD-H2-HELLO asks (``version``, ``role``, ``policy``, ``ops``)."""

    family = FAMILY

    def __init__(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(list(argv), timeout=timeout)
        for key in ("version", "role", "policy", "ops"):
            if key not in self.info:
                self._fail(PROTOCOL, f'hello lacks "{key}" (AD-H2-HELLO)')


@dataclass(frozen=True)
class Http2Alphabet:
    """FAM-ALPHABET for HTTP/2 (AD-H2-ALPHABET); ``conform`` and ``replay`` are the
    family's entry points the CLI calls (AD-H2-CONFORM-CLI)."""

    family: str = FAMILY
    ops: Sequence[str] = tuple(o.name for o in OPS)
    phases: Sequence[str] = PHASES
    default_examples: int = DEFAULT_EXAMPLES
    default_steps: int = DEFAULT_STEPS

    def model_side(self, declared: Mapping[str, Any]) -> H2Model:
        """AD-H2-POLICY: the model for an adapter's ``hello`` (``policy``, ``role``,
        ``ops``)."""
        return H2Model(
            dict(declared.get("policy") or {}),
            str(declared.get("role", "client")),
            frozenset(declared.get("ops") or ()),
        )

    def policies(self, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """AD-H2-HELLO: the ``policy`` object of ``hello``."""
        return dict(info.get("policy") or {})

    def runs(self, info: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        """AD-H2-CONFORM-RUNS."""
        return [dict(r) for r in RUNS]

    def open_command(self, argv: Sequence[str], timeout: float) -> Http2Command:
        """AD-CMD: the command driven as an HTTP/2 adapter; an :class:`AdapterFailure` if
        its ``hello`` is not one."""
        return Http2Command(argv, timeout=timeout)

    @property
    def conform(self) -> Any:
        # deferred: START-LAZY, the search and Hypothesis load only for a conform run
        from creditflow.conformance.families.http2.conform import run_conform

        return run_conform

    @property
    def replay(self) -> Any:
        # deferred: START-LAZY, as conform
        from creditflow.conformance.families.http2.replay import replay_traces

        return replay_traces


ALPHABET = Http2Alphabet()

__all__ = ["ALPHABET", "OPS", "RUNS", "AdapterFailure", "H2Model", "H2Op", "prefix"]
