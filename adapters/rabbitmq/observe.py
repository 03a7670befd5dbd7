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
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from creditflow.adapters.rabbitmq.broker import INSTALL_HINT, PrivateBroker

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
    def from_options(cls, node: str, cookie_file: str | None,
                     epmd_port: int | None = None) -> NodeTarget:
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
        env = {k: benv[k] for k in ("ERL_EPMD_PORT", "ERL_EPMD_ADDRESS") if k in benv}
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
cf_observe:agent(Node).
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
        env.update({"HOME": self._home, "CF_NODE": self.target.node,
                    "CF_COOKIE": self.target.cookie, "CF_SRC": str(erlang_source()),
                    "ERL_AFLAGS": "-start_epmd false"})
        me = f"cfobserve{secrets.token_hex(3)}@{host}"
        self._proc = subprocess.Popen(
            [erl, "-noshell", "-hidden", name_flag, me, "-setcookie", "cf_placeholder",
             "-kernel", "inet_dist_use_interface", "{127,0,0,1}", "-eval", _BOOT],
            env=env, cwd=self._home, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._pump, daemon=True).start()
        self._answer(60.0, "connect")
        self.info = json.loads(self.request("info"))
        version = str(self.info.get("rabbit_version", ""))
        if not version.startswith(SUPPORTED_VERSIONS):
            self.close()
            raise ObserveError(f"{self.target.node} runs RabbitMQ {version}; "
                               f"observe supports {', '.join(v + 'x' for v in SUPPORTED_VERSIONS)}")
        return self

    def _pump(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _answer(self, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        noise: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise ObserveError(f"{self.target.node}: no answer to {what} "
                                   f"within {timeout:.0f} s") from None
            if line is None:
                self.close()
                tail = " ".join(n.strip() for n in noise)[-200:]
                raise ObserveError(f"lost the connection to {self.target.node} "
                                   f"during {what}{': ' + tail if tail else ''}")
            if line.startswith(ANSWER):
                body = line[len(ANSWER):].rstrip("\n")
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

    def snapshot(self, max_pause_ms: int = 5000) -> dict[str, Any]:
        """One consistent cut (OBS-CUT) as plain data."""
        fd, path = tempfile.mkstemp(prefix="cf-snap-", suffix=".json", dir=self._home)
        os.close(fd)
        try:
            self.request(f"snapshot {max_pause_ms} {path}")
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
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        shutil.rmtree(self._home, ignore_errors=True)

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
