"""A real standalone Spark cluster on loopback, for tests and benchmarks (SW-CLUSTER).

:class:`StandaloneSparkCluster` starts one standalone master and N workers from the
installed pyspark (``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master``
and ``…deploy.worker.Worker``, ``SPARK_HOME`` being pyspark's package folder), each in
its own process group, bound to 127.0.0.1, with its configuration, logs, work and
scratch folders in a private temporary folder; it waits until every worker has
registered (from the daemons' logs) and always stops both kinds of daemon by process
group, also when the body raises or the process gets SIGTERM::

    with StandaloneSparkCluster(workers=2) as cluster:
        subprocess.run(["creditflow", "sweep", "smoke", "--master", cluster.master_url],
                       env=cluster.driver_env(), check=True)

What Spark 4.3 allows, checked on this version: the master's and workers' web UIs
cannot be switched off (``spark.ui.enabled`` only concerns an application's UI), so
they listen on an ephemeral port of 127.0.0.1 (``--webui-port 0``); the master's REST
submission server (port 6066 by default) is switched off; the master's RPC port is
ephemeral too (``--port 0``) and read back from its log, so clusters never collide.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from creditflow.conformance.runtime import children
from creditflow.conformance.sweep.spark import SparkSetupError, java_version

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"
#: Every daemon listens on HOST only, on ports the system picks (its own and its web UI's)
LOOPBACK_ANY_PORTS = ("--host", HOST, "--port", "0", "--webui-port", "0")
#: The daemons only schedule: a small heap, the C1 compiler and the serial collector.
DAEMON_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
MASTER_STARTED = re.compile(r"Starting Spark master at (spark://[^\s:]+:(\d+))")
WORKER_REGISTERED = re.compile(r"Successfully registered with master")
ERROR_LINE = re.compile(r"\b(ERROR|Error:|Exception\b|[A-Za-z]+Exception:)")
FINISHED_TASK = re.compile(r"INFO Executor: Finished task ")
#: Environment variables of the caller that would change what the daemons run.
FOREIGN_SPARK_VARIABLES = (
    "SPARK_CONF_DIR",
    "SPARK_MASTER_OPTS",
    "SPARK_WORKER_OPTS",
    "SPARK_DAEMON_JAVA_OPTS",
    "SPARK_WORKER_INSTANCES",
    "SPARK_WORKER_CORES",
    "SPARK_WORKER_MEMORY",
    "SPARK_MASTER_HOST",
    "SPARK_MASTER_PORT",
    "SPARK_MASTER_WEBUI_PORT",
    "SPARK_WORKER_PORT",
    "SPARK_WORKER_WEBUI_PORT",
    "SPARK_WORKER_DIR",
    "SPARK_LOCAL_DIRS",
    "SPARK_PUBLIC_DNS",
    "SPARK_IDENT_STRING",
    "PYSPARK_GATEWAY_PORT",
    "PYSPARK_GATEWAY_SECRET",
)


class ClusterError(SparkSetupError):
    """The cluster did not start; the message is one line naming the daemon and its log."""


def spark_home() -> Path:
    """pyspark's package folder, which holds ``bin/spark-class`` and ``jars/``."""
    try:
        import pyspark  # deferred: an optional dependency (creditflow[spark])
    except ImportError:
        raise SparkSetupError(
            "pyspark is not installed: pip install 'creditflow[spark]' (scripts/setup.sh does)"
        ) from None
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").exists():
        raise SparkSetupError(f"{home}/bin/spark-class not found: a pyspark without its launcher")
    return home


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid`` (from /proc on Linux)."""
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: signal 0 tells whether any member is left
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def _die_with_parent() -> None:
    """In the daemon, before exec: SIGTERM when the process that started it dies (Linux
    ``PR_SET_PDEATHSIG``), a last resort should this process be killed by SIGKILL."""
    if sys.platform.startswith("linux"):
        import ctypes  # deferred: Linux only, in the daemon just before exec

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


@dataclass
class Daemon:
    """One daemon: its process (the leader of its own process group) and its log."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def reason(self) -> str:
        """The log's most telling line: the last error, else the usage Spark prints when
        it rejects an argument, else the last line."""
        lines = [line.strip() for line in self.log_text().splitlines() if line.strip()]
        errors = [line for line in lines if ERROR_LINE.search(line)]
        if errors:
            return errors[-1][:200]
        if any(line.startswith("Usage:") for line in lines):
            return "it rejected its command line (it printed its usage)"
        return lines[-1][:200] if lines else "(empty log)"

    def alive(self) -> bool:
        return bool(group_members(self.pid))


@dataclass(eq=False)
class StandaloneSparkCluster:
    """A standalone Spark master and ``workers`` workers on 127.0.0.1 (SW-CLUSTER).

    ``cores_per_worker`` and ``worker_memory`` are what each worker offers (an
    application's executor asks for ``spark.executor.memory``, 1g by default, so a
    worker needs at least that); ``daemon_memory`` is each daemon's own heap. ``root``:
    the folder for configuration, logs and work (default: a new temporary folder,
    removed on stop unless ``keep`` is true or the start failed: the error names a log
    in it)."""

    workers: int = 2
    cores_per_worker: int = 1
    worker_memory: str = "1g"
    daemon_memory: str = "256m"
    root: Path | None = None
    keep: bool = False
    start_timeout: float = 180.0
    stop_timeout: float = 30.0
    master_url: str = ""
    daemons: list[Daemon] = field(default_factory=list)
    _own_root: bool = False
    _stopping: bool = False
    _previous_handlers: dict[int, Any] = field(default_factory=dict)

    # -- life cycle ----------------------------------------------------------------
    def __enter__(self) -> StandaloneSparkCluster:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> StandaloneSparkCluster:
        """Start the master, then the workers; return once every worker has registered.
        Stops whatever it started if anything fails (ClusterError, SparkSetupError)."""
        if self.workers < 1 or self.cores_per_worker < 1:
            raise ValueError("a cluster needs at least one worker with at least one core")
        if self.daemons:
            raise RuntimeError("a StandaloneSparkCluster starts once; make a new one")
        java_version()
        home = spark_home()
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="creditflow-spark-cluster-"))
            self._own_root = True
        self._stopping = False
        self._install_signal_handlers()
        atexit.register(self.stop)
        try:
            master = self._spawn(
                home,
                "master",
                [MASTER_CLASS, *LOOPBACK_ANY_PORTS],
            )
            deadline = time.monotonic() + self.start_timeout
            match = self._wait_for(master, MASTER_STARTED, 1, deadline)
            self.master_url = match.group(1)
            workers = [
                self._spawn(
                    home,
                    f"worker-{index}",
                    [
                        WORKER_CLASS,
                        self.master_url,
                        *LOOPBACK_ANY_PORTS,
                        "--cores",
                        str(self.cores_per_worker),
                        "--memory",
                        self.worker_memory,
                        "--work-dir",
                        str(self._folder(f"worker-{index}", "work")),
                    ],
                )
                for index in range(1, self.workers + 1)
            ]
            for worker in workers:
                self._wait_for(worker, WORKER_REGISTERED, 1, deadline)
        except BaseException:
            self.keep = True  # the error names a log: leave it there
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every daemon by its process group: SIGTERM (a worker then kills its
        executors), SIGKILL for what is left after ``stop_timeout``; workers first.
        Idempotent; returns only when no process of any daemon's group is left."""
        if self._stopping:
            return
        self._stopping = True
        survivors: list[str] = []
        try:
            for daemon in reversed(self.daemons):  # workers, then the master
                survivors += self._terminate(daemon)
            if survivors:
                raise ClusterError(f"processes survived SIGKILL: {'; '.join(survivors)}")
        finally:
            self._restore_signal_handlers()
            atexit.unregister(self.stop)
            if self._own_root and not self.keep and self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)

    # -- what a driver needs ---------------------------------------------------------
    @property
    def pids(self) -> list[int]:
        """The daemons' pids (each the leader of its process group): master first."""
        return [daemon.pid for daemon in self.daemons]

    def running(self) -> list[int]:
        """Live processes left in any daemon's process group (executors included)."""
        return [pid for daemon in self.daemons for pid in group_members(daemon.pid)]

    def finished_tasks(self) -> dict[str, int]:
        """Per worker, the tasks its executors reported finished (from their logs in the
        worker's work folder): which workers an application really used."""
        assert self.root is not None
        counts = {}
        for daemon in self.daemons[1:]:
            logs = (self.root / daemon.name / "work").glob("app-*/*/stderr")
            counts[daemon.name] = sum(
                len(FINISHED_TASK.findall(log.read_text(encoding="utf-8", errors="replace")))
                for log in logs
            )
        return counts

    def driver_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment for a driver process of this cluster: bound to 127.0.0.1, its
        Python workers running this interpreter."""
        env = dict(os.environ if base is None else base)
        for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET"):
            env.pop(name, None)
        env.update(
            SPARK_LOCAL_IP=HOST, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable
        )
        return env

    # -- internals -------------------------------------------------------------------
    def _folder(self, *parts: str) -> Path:
        assert self.root is not None
        path = self.root.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _daemon_env(self, home: Path, name: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in FOREIGN_SPARK_VARIABLES}
        env.update(
            SPARK_HOME=str(home),
            SPARK_CONF_DIR=str(self._folder("conf")),  # empty: no spark-env.sh, no defaults
            SPARK_LOCAL_IP=HOST,
            SPARK_LOG_DIR=str(self._folder("logs")),
            SPARK_LOCAL_DIRS=str(self._folder(name, "scratch")),
            SPARK_DAEMON_MEMORY=self.daemon_memory,
            SPARK_DAEMON_JAVA_OPTS=DAEMON_JAVA_OPTIONS,
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
            PYSPARK_PYTHON=env.get("PYSPARK_PYTHON", sys.executable),
        )
        return env

    def _spawn(self, home: Path, name: str, arguments: list[str]) -> Daemon:
        log = self._folder("logs") / f"{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [str(home / "bin" / "spark-class"), *arguments],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self._daemon_env(home, name),
                cwd=self._folder(name),
                start_new_session=True,  # its own process group, killed as one
                preexec_fn=_die_with_parent,
            )
        children.track(process)  # SIG-CHILDREN: a command's interrupt or exit reaches it
        daemon = Daemon(name, process, log)
        self.daemons.append(daemon)
        return daemon

    def _wait_for(
        self, daemon: Daemon, pattern: re.Pattern[str], count: int, deadline: float
    ) -> re.Match[str]:
        while True:
            matches = list(pattern.finditer(daemon.log_text()))
            if len(matches) >= count:
                return matches[count - 1]
            if daemon.process.poll() is not None:
                raise ClusterError(
                    f"Spark {daemon.name} exited with code {daemon.process.returncode} "
                    f"before it was ready ({daemon.log}): {daemon.reason()}"
                )
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"Spark {daemon.name} not ready after {self.start_timeout:.0f} s "
                    f"({daemon.log}): {daemon.reason()}"
                )
            time.sleep(0.2)

    def _terminate(self, daemon: Daemon) -> list[str]:
        """Stop one daemon's process group; what survived, as text (normally nothing).
        The leader is reaped only once its group is empty: until then it is at most a
        zombie, so its pid (the group's id) cannot be reused by another group."""
        pgid = daemon.pid
        survivors: list[int] = []
        for sig, wait in ((signal.SIGTERM, self.stop_timeout), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
            deadline = time.monotonic() + wait
            while (survivors := group_members(pgid)) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not survivors:
                break
        with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
            daemon.process.wait(timeout=5)
        children.untrack(daemon.process)
        return [f"Spark {daemon.name}: {survivors}"] if survivors else []

    def _install_signal_handlers(self) -> None:
        """On SIGTERM or SIGHUP: stop the cluster, then let the signal do what it did
        before. (SIGINT raises KeyboardInterrupt, and the context manager stops it.)"""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous = signal.getsignal(sig)
            if previous is signal.SIG_IGN:
                continue
            self._previous_handlers[sig] = previous
            signal.signal(sig, self._on_signal)

    def _restore_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        while self._previous_handlers:
            sig, previous = self._previous_handlers.popitem()
            if signal.getsignal(sig) == self._on_signal:
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        previous = self._previous_handlers.get(signum, signal.SIG_DFL)
        self.stop()  # restores the previous handlers
        if callable(previous):
            previous(signum, frame)
        else:
            os.kill(os.getpid(), signum)  # SIG_DFL: terminate as the signal would have
