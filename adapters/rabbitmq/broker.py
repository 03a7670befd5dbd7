"""A private RabbitMQ broker from Debian's ``rabbitmq-server`` package, on loopback.

Used by the real-broker conformance tests (paging, alarms). Everything is private to
one work directory: its own ``HOME`` and Erlang cookie, its own ``epmd`` on a free
loopback port, its own node name, data, logs, config and ports; nothing is started
system-wide and nothing outlives :meth:`PrivateBroker.stop`.

Facts behind it: ``../shared/reference/broker-setup.md`` (the Debian wrappers switch
user, epmd defaults to all interfaces, ``await_startup`` exits 69 at first, …).

    >>> with PrivateBroker(workdir) as broker:          # doctest: +SKIP
    ...     broker.ctl("list_queues")
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from creditflow.conformance.runtime import children

#: Where Debian's package keeps the scripts the /usr/sbin wrappers call.
DEBIAN_SCRIPTS = Path("/usr/lib/rabbitmq/bin")
INSTALL_HINT = "install Debian's rabbitmq-server package (make test does: scripts/setup.sh)"


class BrokerError(RuntimeError):
    """The broker could not be started, reached or stopped; the message says why."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scripts_dir() -> Path:
    override = os.environ.get("CREDITFLOW_RABBITMQ_SCRIPTS")
    directory = Path(override) if override else DEBIAN_SCRIPTS
    if not (directory / "rabbitmq-server").is_file():
        raise BrokerError(f"no RabbitMQ server scripts in {directory}: {INSTALL_HINT}")
    return directory


@dataclass
class PrivateBroker:
    """One RabbitMQ node on 127.0.0.1 with private state under ``workdir``."""

    workdir: Path
    config_lines: list[str] = field(default_factory=list)
    #: plugins named in the enabled-plugins file (e.g. ``rabbitmq_amqp1_0``, AD-AMQ-RMQ-BROKER)
    plugins: list[str] = field(default_factory=list)
    start_timeout: float = 90.0
    node: str = ""
    amqp_port: int = 0
    _env: dict[str, str] = field(default_factory=dict, repr=False)
    _epmd: subprocess.Popen | None = field(default=None, repr=False)
    _started: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        self.scripts = _scripts_dir()

    # -- set-up -------------------------------------------------------------------------

    def _prepare(self) -> None:
        w = self.workdir
        home = w / "home"
        for d in (home, w / "mnesia", w / "log"):
            d.mkdir(parents=True, exist_ok=True)
        cookie = home / ".erlang.cookie"
        if not cookie.exists():
            cookie.write_text(secrets.token_hex(16))
            cookie.chmod(0o400)
        self.amqp_port = free_port()
        dist_port = free_port()
        ctl_port = free_port()
        epmd_port = free_port()
        self.node = f"cf{secrets.token_hex(4)}@localhost"
        (w / "rabbitmq.conf").write_text(
            "\n".join(
                [
                    f"listeners.tcp.default = 127.0.0.1:{self.amqp_port}",
                    "disk_free_limit.absolute = 1MB",
                    "log.console = false",
                    "log.file.level = info",
                    *self.config_lines,
                ]
            )
            + "\n"
        )
        (w / "enabled_plugins").write_text(f"[{','.join(self.plugins)}].\n")
        (w / "rabbitmq-env.conf").write_text("")
        dist_args = "-kernel inet_dist_use_interface {127,0,0,1}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update(
            {
                "HOME": str(home),
                "RABBITMQ_NODENAME": self.node,
                "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
                "RABBITMQ_NODE_PORT": str(self.amqp_port),
                "RABBITMQ_DIST_PORT": str(dist_port),
                "RABBITMQ_CTL_DIST_PORT_MIN": str(ctl_port),
                "RABBITMQ_CTL_DIST_PORT_MAX": str(ctl_port + 10),
                "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": dist_args,
                "RABBITMQ_CTL_ERL_ARGS": dist_args,
                "RABBITMQ_MNESIA_BASE": str(w / "mnesia"),
                "RABBITMQ_LOG_BASE": str(w / "log"),
                "RABBITMQ_CONFIG_FILE": str(w / "rabbitmq.conf"),
                "RABBITMQ_ENABLED_PLUGINS_FILE": str(w / "enabled_plugins"),
                "RABBITMQ_PID_FILE": str(w / "rabbit.pid"),
                "RABBITMQ_CONF_ENV_FILE": str(w / "rabbitmq-env.conf"),
                "ERL_EPMD_PORT": str(epmd_port),
                "ERL_EPMD_ADDRESS": "127.0.0.1",
                "ERL_AFLAGS": "-start_epmd false",
            }
        )
        self._env = env
        epmd = shutil.which("epmd") or "/usr/bin/epmd"
        if not Path(epmd).exists():
            raise BrokerError(f"no epmd program: {INSTALL_HINT}")
        self._epmd = children.track(
            subprocess.Popen(  # SIG-CHILDREN
                [epmd, "-port", str(epmd_port), "-address", "127.0.0.1"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )

    # -- life cycle ---------------------------------------------------------------------

    def start(self) -> PrivateBroker:
        """Start the node and wait until it is ready (raises :class:`BrokerError`)."""
        self._prepare()
        done = subprocess.run(
            [str(self.scripts / "rabbitmq-server"), "-detached"],
            env=self._env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            self._stop_epmd()
            raise BrokerError(f"rabbitmq-server -detached failed: {done.stderr.strip()[:300]}")
        self._started = True
        deadline = time.monotonic() + self.start_timeout
        last = ""
        while time.monotonic() < deadline:
            probe = self._run_ctl(["await_startup", "--timeout", "10"], timeout=30)
            if probe.returncode == 0:
                return self
            last = ((probe.stderr or probe.stdout).strip().splitlines()[-1:] or [""])[0]
            if not self._node_alive():
                break
            time.sleep(1.0)
        log = self.log_tail()
        self.stop()
        raise BrokerError(f"broker did not start within {self.start_timeout:.0f} s: {last} {log}")

    def _node_alive(self) -> bool:
        pid_file = self.workdir / "rabbit.pid"
        if not pid_file.exists():
            return True  # not written yet
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
            return state != "Z"
        except (ValueError, OSError):
            return False

    def log_tail(self, lines: int = 5) -> str:
        logs = sorted((self.workdir / "log").glob("*.log"))
        if not logs:
            return ""
        text = logs[-1].read_text(errors="replace").splitlines()
        return " | ".join(text[-lines:])

    def stop(self) -> None:
        """Stop the node and our epmd; kill what does not stop."""
        if self._started:
            self._run_ctl(["stop"], timeout=60)
            pid_file = self.workdir / "rabbit.pid"
            if pid_file.exists():
                with contextlib.suppress(ValueError, OSError):
                    os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
            self._started = False
        self._stop_epmd()

    def _stop_epmd(self) -> None:
        if self._epmd is not None:
            self._epmd.terminate()
            children.stop_group(self._epmd, grace=5.0)
            self._epmd = None

    def __enter__(self) -> PrivateBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- commands -----------------------------------------------------------------------

    def _run_ctl(self, args: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.scripts / "rabbitmqctl"), "-n", self.node, *args],
            env=self._env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def ctl(self, *args: str, timeout: float = 60) -> str:
        """Run ``rabbitmqctl ARGS`` against this node; its stdout (raises on failure)."""
        done = self._run_ctl(list(args), timeout)
        if done.returncode != 0:
            raise BrokerError(
                f"rabbitmqctl {' '.join(args)} failed ({done.returncode}): "
                f"{(done.stderr or done.stdout).strip()[:400]}"
            )
        return done.stdout

    def eval(self, expression: str, timeout: float = 60) -> str:
        """Evaluate Erlang on the node (``rabbitmqctl eval``); its printed result."""
        return self.ctl("eval", expression, timeout=timeout).strip()

    def erl_environment(self) -> dict[str, str]:
        """The environment another Erlang node needs to reach this one: the private
        ``HOME`` (cookie), epmd port and flags (see :mod:`creditflow.adapters.rabbitmq.erlang`)."""
        return dict(self._env)

    def connection_parameters(self, **kwargs: object):
        """pika connection parameters for this broker (guest on loopback)."""
        import pika

        return pika.ConnectionParameters(host="127.0.0.1", port=self.amqp_port, **kwargs)
