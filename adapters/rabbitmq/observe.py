"""The broker side of ``creditflow observe`` (spec/observe.md): a hidden Erlang node on
loopback that loads ``cf_observe.erl`` into itself and into the RabbitMQ node, takes
consistent-cut snapshots (OBS-CUT, with a node-side watchdog, OBS-WATCHDOG), records
``credit_flow`` traces (OBS-TRACE) and runs the pika workload (OBS-WORKLOAD).

Plain data goes to :mod:`creditflow.conformance.observe`; nothing there imports this.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from creditflow.adapters.rabbitmq.broker import INSTALL_HINT, PrivateBroker
from creditflow.adapters.rabbitmq.erlang import start_hidden_node
from creditflow.conformance.outputs import write_atomic
from creditflow.conformance.runtime import children

#: RabbitMQ versions whose internals (record layouts, message shapes) OBS-* was written for
SUPPORTED_VERSIONS = ("3.10.",)
ANSWER = "@@CF@@ "


class ObserveError(RuntimeError):
    """Connecting to or observing the node failed (exit code 3); one line says why."""


@dataclass
class NodeTarget:
    """Where the node is and how to reach it (OBS-CONNECT)."""

    node: str
    cookie: str
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(
        cls, node: str, cookie_file: str | None, epmd_port: int | None = None
    ) -> NodeTarget:
        path = Path(cookie_file) if cookie_file else Path.home() / ".erlang.cookie"
        try:
            cookie = path.read_text().strip()
        except OSError as exc:
            raise ObserveError(f"cannot read the Erlang cookie {path}: {exc.strerror}") from exc
        if "@" not in node:
            raise ObserveError(f"bad node name {node!r}: expected NAME@HOST")
        env = {"ERL_EPMD_PORT": str(epmd_port)} if epmd_port else {}
        return cls(node=node, cookie=cookie, env=env)

    @classmethod
    def of_broker(cls, broker: PrivateBroker) -> NodeTarget:
        benv = broker.erl_environment()
        cookie = (Path(benv["HOME"]) / ".erlang.cookie").read_text().strip()
        env: dict[str, str] = {
            k: benv[k] for k in ("ERL_EPMD_PORT", "ERL_EPMD_ADDRESS") if k in benv
        }
        return cls(node=broker.node, cookie=cookie, env=env)


def erlang_source() -> Path:
    """The node-side module shipped as package data."""
    return Path(str(resources.files("creditflow.adapters") / "erlang" / "cf_observe.erl"))


_BOOT = r"""
Node = list_to_atom(os:getenv("CF_NODE")),
erlang:set_cookie(Node, list_to_atom(os:getenv("CF_COOKIE"))),
Src = os:getenv("CF_SRC"),
{ok, Mod, Bin} = compile:file(Src, [binary, return_errors]),
{module, Mod} = code:load_binary(Mod, Src, Bin),
[_, Host] = string:split(atom_to_list(Node), "@"),
Name = hd(string:split(atom_to_list(Node), "@")),
Reg = case erl_epmd:names(Host) of {ok, Ns} -> lists:keymember(Name, 1, Ns); _ -> unknown end,
case net_kernel:connect_node(Node) of
    true -> ok;
    false when Reg =:= false ->
        io:format("@@CF@@ error no node ~s is registered with epmd on ~s~n", [Node, Host]), halt(3);
    false when Reg =:= unknown ->
        io:format("@@CF@@ error cannot reach epmd on ~s for ~s~n", [Host, Node]), halt(3);
    false ->
        io:format("@@CF@@ error ~s refused the connection (wrong cookie?)~n", [Node]), halt(3)
end,
case rpc:call(Node, code, load_binary, [Mod, Src, Bin], 30000) of
    {module, Mod} -> io:format("@@CF@@ ok ready~n");
    Other -> io:format("@@CF@@ error cannot load ~s on ~s: ~0p~n", [Mod, Node, Other]), halt(3)
end,
{_, Ref} = spawn_monitor(fun() -> cf_observe:agent(Node) end),
receive {'DOWN', Ref, _, _, Why} ->
    io:format("@@CF@@ error agent stopped: ~0p~n", [Why]), halt(3)
end.
"""


class ObserveAgent:
    """The hidden node (see module doc). Every failure is an :class:`ObserveError`."""

    def __init__(self, target: NodeTarget, timeout: float = 120.0) -> None:
        self.target = target
        self.timeout = timeout
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._home = tempfile.mkdtemp(prefix="cf-observe-")
        self.info: dict[str, Any] = {}

    def start(self) -> ObserveAgent:
        erl = shutil.which("erl")
        if erl is None:
            raise ObserveError(f"no erl program: {INSTALL_HINT}")
        host = self.target.node.split("@", 1)[1]
        name_flag = "-name" if "." in host else "-sname"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ERL_", "RABBITMQ_"))}
        env.update(self.target.env)
        env.update(
            {
                "HOME": self._home,
                "CF_NODE": self.target.node,
                "CF_COOKIE": self.target.cookie,
                "CF_SRC": str(erlang_source()),
                "ERL_AFLAGS": "-start_epmd false",
            }
        )
        me = f"cfobserve{secrets.token_hex(3)}@{host}"
        name_args = [name_flag, me, "-setcookie", "cf_placeholder"]
        self._proc = start_hidden_node(erl, name_args, _BOOT, env, self._home, self._lines)
        self._answer(60.0, "connect")
        self.info = json.loads(self.request("info"))
        version = str(self.info.get("rabbit_version", ""))
        if not version.startswith(SUPPORTED_VERSIONS):
            self.close()
            raise ObserveError(
                f"{self.target.node} runs RabbitMQ {version}; "
                f"observe supports {', '.join(v + 'x' for v in SUPPORTED_VERSIONS)}"
            )
        return self

    def _answer(self, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        noise: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise ObserveError(
                    f"{self.target.node}: no answer to {what} within {timeout:.0f} s"
                ) from None
            if line is None:
                self.close()
                tail = " ".join(n.strip() for n in noise)[-200:]
                raise ObserveError(
                    f"lost the connection to {self.target.node} "
                    f"during {what}{': ' + tail if tail else ''}"
                )
            if line.startswith(ANSWER):
                body = line[len(ANSWER) :].rstrip("\n")
                if body.startswith("ok"):
                    return body[3:]
                raise ObserveError(f"{self.target.node}: {body[6:]}")
            noise.append(line)

    def request(self, line: str, timeout: float | None = None) -> str:
        """Send one agent request; its answer text (raises :class:`ObserveError`)."""
        if self._proc is None or self._proc.poll() is not None:
            raise ObserveError(f"not connected to {self.target.node}")
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise ObserveError(f"lost the connection to {self.target.node}: {exc}") from exc
        return self._answer(timeout or self.timeout, line.split(" ", 1)[0])

    # -- operations -------------------------------------------------------------------

    @property
    def workdir(self) -> Path:
        """The agent's private directory (its HOME; trace events land here)."""
        return Path(self._home)

    def snapshot(self, max_pause_ms: int = 5000, hold_ms: int = 0) -> dict[str, Any]:
        """One consistent cut (OBS-CUT) as plain data (``hold_ms``: stay suspended that
        long before reading — to test OBS-WATCHDOG)."""
        fd, path = tempfile.mkstemp(prefix="cf-snap-", suffix=".json", dir=self._home)
        os.close(fd)
        try:
            self.request(f"snapshot {max_pause_ms} {path} {hold_ms}")
            return json.loads(Path(path).read_text(errors="replace"))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def trace_start(self, events_path: str | Path) -> None:
        self.request(f"trace_start {Path(events_path).resolve()}")

    def trace_stop(self) -> int:
        """Stop tracing; the number of events written."""
        return int(self.request("trace_stop").split()[0])

    def eval(self, expression: str) -> Any:
        """Evaluate Erlang on the node; the value as JSON data (pids as text)."""
        b64 = base64.b64encode(expression.encode()).decode()
        return json.loads(self.request(f"eval {b64}"))

    def suspended(self) -> list[str]:
        """Credit-flow processes that are sys-suspended right now."""
        return json.loads(self.request("suspended"))

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            children.stop_group(proc, grace=10.0)
        shutil.rmtree(self._home, ignore_errors=True)

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, but raise :class:`ObserveError` as soon as the agent stops
        (the node went away: the tracer link takes the agent down with it)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                self._answer(1.0, "recording")
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

    def kill(self) -> None:
        """Die like a crashed client (the node's watchdog and tracer links react)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=5)
            self._proc = None

    def __enter__(self) -> ObserveAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_events(path: str | Path) -> list[list[Any]]:
    """The event lines the agent wrote, sorted by their strict monotonic stamp."""
    events = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip():
                events.append(json.loads(line))
    events.sort(key=lambda e: (e[0], e[1]))
    return events


PID_RE = re.compile(r"^<\d+\.\d+\.\d+>$")


# -- recording (OBS-TRACE-FILE) ---------------------------------------------------------

TRACE_FORMAT = "creditflow-observe-trace/1"


@dataclass(frozen=True, slots=True)
class WorkloadResult:
    """OBS-WORKLOAD's counts per publisher (persistent, transient, fan-out), the queues'
    lengths at the end, and the cut taken during the stall (``snapshot_during``, reported
    by the CLI as a snapshot, not printed with the counts)."""

    published: tuple[int, ...]
    confirmed: tuple[int, ...]
    nacked: tuple[int, ...]
    errors: tuple[str, ...]
    connection_blocked_seen: tuple[int, ...]
    queued: dict[str, int]
    consumed_fan1: int
    stalled_queue: Any
    snapshot_during: dict[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        """The counts as ``observe workload`` prints them (without the snapshot)."""
        return {
            "published": list(self.published),
            "confirmed": list(self.confirmed),
            "nacked": list(self.nacked),
            "errors": list(self.errors),
            "connection_blocked_seen": list(self.connection_blocked_seen),
            "queued": dict(self.queued),
            "consumed_fan1": self.consumed_fan1,
            "stalled_queue": self.stalled_queue,
        }


@dataclass(frozen=True, slots=True)
class RecordSummary:
    """OBS-TRACE-FILE: where the trace went, how many events it holds (``written`` by
    the tracer; ``events_between_cuts``, OBS-WINDOW), the workload run meanwhile, and
    each cut's pause."""

    trace: str
    events: int
    written: int
    events_between_cuts: int
    workload: WorkloadResult | None
    pause_ms: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "events": self.events,
            "written": self.written,
            "events_between_cuts": self.events_between_cuts,
            "workload": self.workload.to_json() if self.workload is not None else None,
            "pause_ms": list(self.pause_ms),
        }


def record(
    agent: ObserveAgent,
    out: str | Path,
    seconds: float = 0.0,
    during: Callable[[], WorkloadResult] | None = None,
    max_pause_ms: int = 5000,
) -> RecordSummary:
    """Trace, take the first cut, run ``during()`` (or wait ``seconds``), take the last
    cut, stop tracing; write the trace document to ``out`` and return a summary.

    The tracer is started before the first cut and stopped after the last, so every
    event between the two cuts is in the file (OBS-WINDOW)."""
    out = Path(out)
    events_path = agent.workdir / "events.jsonl"
    agent.trace_start(events_path)
    stopped = False
    try:
        first = agent.snapshot(max_pause_ms)
        t0 = time.monotonic()
        extra = during() if during is not None else None
        left = seconds - (time.monotonic() - t0)
        if left > 0:
            agent.wait(left)
        last = agent.snapshot(max_pause_ms)
        written = agent.trace_stop()
        stopped = True
    finally:
        if not stopped:
            with contextlib.suppress(ObserveError):
                agent.trace_stop()
    events = read_events(events_path)
    doc = {
        "format": TRACE_FORMAT,
        "node": agent.target.node,
        "info": agent.info,
        "first": first,
        "last": last,
        "events": events,
    }
    write_atomic(out, json.dumps(doc, separators=(",", ":")))  # OUT-ATOMIC
    inside = sum(1 for e in events if first["t_suspended"] < e[0] < last["t_suspended"])
    return RecordSummary(
        trace=str(out),
        events=len(events),
        written=written,
        events_between_cuts=inside,
        workload=extra,
        pause_ms=(first["pause_ms"], last["pause_ms"]),
    )


# -- the workload (OBS-WORKLOAD) ---------------------------------------------------------


class ConfirmedPublisher(threading.Thread):
    """One pika ``SelectConnection`` publishing ``count`` messages with publisher confirms,
    up to ``window`` unconfirmed at once (so credit flow can run out)."""

    def __init__(
        self,
        params: Any,
        exchange: str,
        routing_key: str,
        count: int,
        body: bytes,
        persistent: bool,
        window: int = 2000,
    ) -> None:
        super().__init__(daemon=True)
        self.params, self.exchange, self.routing_key = params, exchange, routing_key
        self.count, self.body, self.persistent, self.window = count, body, persistent, window
        self.sent = 0
        self.acked = 0
        self.nacked = 0
        self.blocked_seen = 0
        self.error: str | None = None
        self._outstanding: set[int] = set()
        self._ch: Any = None
        self._conn: Any = None

    def run(self) -> None:
        import pika  # deferred: pika is needed only by the workload and its publishers

        try:
            self._conn = pika.SelectConnection(
                self.params,
                on_open_callback=self._opened,
                on_open_error_callback=lambda _c, e: self._fail(f"open: {e}"),
                on_close_callback=lambda _c, _r: self._conn.ioloop.stop(),
            )
            self._conn.add_on_connection_blocked_callback(self._blocked)
            self._conn.ioloop.start()
        except Exception as exc:  # noqa: BLE001 - reported through .error
            self.error = f"{type(exc).__name__}: {exc}"

    def _fail(self, why: str) -> None:
        self.error = why
        self._conn.ioloop.stop()

    def _blocked(self, *_: Any) -> None:
        self.blocked_seen += 1

    def _opened(self, conn: Any) -> None:
        conn.channel(on_open_callback=self._channel)

    def _channel(self, ch: Any) -> None:
        self._ch = ch
        ch.confirm_delivery(self._confirm, callback=lambda _f: self._pump())

    def _confirm(self, frame: Any) -> None:
        m = frame.method
        done = (
            {t for t in self._outstanding if t <= m.delivery_tag}
            if m.multiple
            else {m.delivery_tag} & self._outstanding
        )
        self._outstanding -= done
        if type(m).__name__ == "Ack":
            self.acked += len(done)
        else:
            self.nacked += len(done)
        self._pump()

    def _pump(self) -> None:
        import pika  # deferred: pika is needed only by the workload and its publishers

        props = pika.BasicProperties(delivery_mode=2 if self.persistent else 1)
        while self.sent < self.count and len(self._outstanding) < self.window:
            self._ch.basic_publish(self.exchange, self.routing_key, self.body, props)
            self.sent += 1
            self._outstanding.add(self.sent)
        if self.sent >= self.count and not self._outstanding:
            self._conn.close()


def queue_pid_expr(name: str) -> str:
    """Erlang text for the pid of classic queue ``name`` in vhost ``/``."""
    return (
        f'{{ok, Q}} = rabbit_amqqueue:lookup(rabbit_misc:r(<<"/">>, queue, <<"{name}">>)), '
        "P = amqqueue:get_pid(Q)"
    )


def run_workload(
    agent: ObserveAgent,
    params: Any,
    publishes: int = 10_000,
    stall_seconds: float = 1.5,
    snapshot_during: bool = True,
) -> WorkloadResult:
    """OBS-WORKLOAD: persistent and transient publishers, one queue each and a fan-out
    through an exchange; a queue suspended with ``sys:suspend`` while they publish (and
    a snapshot taken then), a slow consumer; released; every publish confirmed and
    every message counted at the end. Returns the counts and the mid-run snapshot."""
    import pika  # deferred: pika is needed only by the workload and its publishers

    conn = pika.BlockingConnection(params)
    ch = conn.channel()
    for q in ("cf.persistent", "cf.transient", "cf.fan1", "cf.fan2"):
        ch.queue_declare(q, durable=q == "cf.persistent")
        ch.queue_purge(q)
    ch.exchange_declare("cf.fanout", "fanout")
    ch.queue_bind("cf.fan1", "cf.fanout")
    ch.queue_bind("cf.fan2", "cf.fanout")
    conn.close()
    share = publishes // 3
    pubs = [
        ConfirmedPublisher(params, "", "cf.persistent", share, b"p" * 5000, True),
        ConfirmedPublisher(params, "", "cf.transient", share, b"t" * 64, False),
        ConfirmedPublisher(params, "cf.fanout", "", publishes - 2 * share, b"f" * 64, False),
    ]
    consumed = {"n": 0}
    stop = threading.Event()

    def slow_consumer() -> None:
        c = pika.BlockingConnection(params)
        cch = c.channel()
        cch.basic_qos(prefetch_count=5)
        for method, _props, _body in cch.consume("cf.fan1", inactivity_timeout=0.2):
            if method is not None:
                time.sleep(0.0005)
                cch.basic_ack(method.delivery_tag)
                consumed["n"] += 1
            elif stop.is_set():
                break
        cch.cancel()
        c.close()

    consumer = threading.Thread(target=slow_consumer, daemon=True)
    consumer.start()
    stalled = agent.eval(f"{queue_pid_expr('cf.transient')}, sys:suspend(P), P.")
    for p in pubs:
        p.start()
    time.sleep(stall_seconds)
    during = agent.snapshot() if snapshot_during else None
    agent.eval(f"{queue_pid_expr('cf.transient')}, sys:resume(P), P.")
    for p in pubs:
        p.join(timeout=300)
    stop.set()
    consumer.join(timeout=60)
    time.sleep(0.3)
    counts = {
        q: agent.eval(f"{queue_pid_expr(q)}, rabbit_amqqueue:info(Q, [messages]).")
        for q in ("cf.persistent", "cf.transient", "cf.fan1", "cf.fan2")
    }
    counts = {q: int(v[0][1]) for q, v in counts.items()}
    return WorkloadResult(
        published=tuple(p.sent for p in pubs),
        confirmed=tuple(p.acked for p in pubs),
        nacked=tuple(p.nacked for p in pubs),
        errors=tuple(p.error for p in pubs if p.error),
        connection_blocked_seen=tuple(p.blocked_seen for p in pubs),
        queued=counts,
        consumed_fan1=consumed["n"],
        stalled_queue=stalled,
        snapshot_during=during,
    )
