"""A long-lived hidden Erlang node connected to a :class:`PrivateBroker`, to evaluate many
expressions on the broker quickly (milliseconds each, against about a second of CPU for
every ``rabbitmqctl eval``, which boots a VM and the CLI).

The session node uses the broker's private ``HOME`` (cookie) and epmd, listens on
loopback only, is ``-hidden`` (the broker does not see it as a cluster member) and
evaluates each expression on the broker with ``erl_eval`` over ``rpc`` — what
``rabbitmqctl eval`` does. Output the expression prints (``io:format``) comes back as
the result, as with ``rabbitmqctl eval``.

    >>> with ErlangSession(broker) as session:           # doctest: +SKIP
    ...     session.eval("1 + 1.")
"""

from __future__ import annotations

import base64
import contextlib
import queue
import secrets
import shutil
import subprocess
import threading
import time

from creditflow.adapters.rabbitmq.broker import INSTALL_HINT, BrokerError, PrivateBroker
from creditflow.conformance.runtime import children

READY = "@@CF-READY@@"
END = "@@CF-END@@"

_LOOP = r"""
Node = list_to_atom(os:getenv("CF_BROKER_NODE")),
case net_kernel:connect_node(Node) of
    true -> io:format("~s~n", ["@@CF-READY@@"]);
    false -> io:format("@@CF-FAILED@@ cannot connect to ~s~n", [Node]), halt(1)
end,
Loop = fun L() ->
    case io:get_line("") of
        eof -> halt(0);
        Line ->
            Text = binary_to_list(base64:decode(string:trim(Line))),
            Status = try
                {ok, Toks, _} = erl_scan:string(Text),
                {ok, Exprs} = erl_parse:parse_exprs(Toks),
                case rpc:call(Node, erl_eval, exprs, [Exprs, []], @TIMEOUT@) of
                    {value, _, _} -> "ok";
                    {badrpc, R} -> lists:flatten(io_lib:format("error ~w", [R]))
                end
            catch C:E -> lists:flatten(io_lib:format("error ~w", [{C, E}]))
            end,
            io:format("~n@@CF-END@@ ~s~n", [Status]),
            L()
    end
end,
Loop().
"""


def start_hidden_node(
    erl: str,
    name_args: list[str],
    program: str,
    env: dict[str, str],
    cwd: str,
    lines: queue.Queue[str | None],
) -> subprocess.Popen[str]:
    """An Erlang VM in its own process group (tracked, SIG-CHILDREN), ``-noshell`` and
    ``-hidden``, named by ``name_args``, distribution on loopback only, evaluating
    ``program``; a daemon thread puts every line it prints on ``lines`` (stderr
    included), then ``None`` once its output ends."""
    proc = children.track(
        subprocess.Popen(  # SIG-CHILDREN
            [
                erl,
                "-noshell",
                "-hidden",
                *name_args,
                "-kernel",
                "inet_dist_use_interface",
                "{127,0,0,1}",
                "-eval",
                program,
            ],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    )

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return proc


class ErlangSession:
    """Evaluate Erlang expressions on a broker through one hidden node (see module doc)."""

    def __init__(self, broker: PrivateBroker, timeout: float = 120.0) -> None:
        self.broker = broker
        self.timeout = timeout
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()

    def start(self) -> ErlangSession:
        erl = shutil.which("erl")
        if erl is None:
            raise BrokerError(f"no erl program: {INSTALL_HINT}")
        env = self.broker.erl_environment()
        env["CF_BROKER_NODE"] = self.broker.node
        name = f"cfsession{secrets.token_hex(3)}@localhost"
        loop = _LOOP.replace("@TIMEOUT@", str(int(self.timeout * 1000)))
        self._proc = start_hidden_node(
            erl, ["-sname", name], loop, env, str(self.broker.workdir), self._lines
        )
        first = self._next_line(30.0)
        while first is not None and READY not in first:
            if "@@CF-FAILED@@" in first:
                break
            first = self._next_line(30.0)
        if first is None or READY not in first:
            self.close()
            raise BrokerError(f"erlang session could not reach {self.broker.node}: {first!r}")
        return self

    def _next_line(self, timeout: float) -> str | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def eval(self, expression: str, timeout: float | None = None) -> str:
        """Evaluate ``expression`` on the broker; what it printed (``BrokerError`` if it
        failed, the session died, or no answer came within the timeout)."""
        if self._proc is None or self._proc.poll() is not None:
            raise BrokerError("erlang session is not running")
        assert self._proc.stdin is not None
        self._proc.stdin.write(base64.b64encode(expression.encode()).decode() + "\n")
        self._proc.stdin.flush()
        deadline = time.monotonic() + (timeout or self.timeout) + 5
        out: list[str] = []
        while True:
            line = self._next_line(max(0.1, deadline - time.monotonic()))
            if line is None:
                self.close()
                raise BrokerError(
                    "erlang session: no answer from the broker "
                    f"(output so far: {''.join(out)[-300:]!r})"
                )
            if line.startswith(END):
                status = line[len(END) :].strip()
                if status != "ok":
                    raise BrokerError(f"eval on {self.broker.node} failed: {status[:400]}")
                return "".join(out).strip()
            out.append(line)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        children.stop_group(proc, grace=5.0)

    def __enter__(self) -> ErlangSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
