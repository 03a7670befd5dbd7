"""A quiet Spark session that works on a fresh machine (SW-ENGINE set-up).

What :func:`start_spark` does, and why (feasibility.md §1, measured):

* ``PYSPARK_PYTHON`` and ``PYSPARK_DRIVER_PYTHON`` default to this interpreter, so the
  Python workers find creditflow and its dependencies (not the ``python3`` on PATH);
* with a ``local`` master or a standalone one on a loopback address (SW-CLUSTER),
  ``SPARK_LOCAL_IP=127.0.0.1`` and the driver bound to
  127.0.0.1: a hostname that resolves to a loopback address (or not at all) then
  neither warns nor makes Spark bind to an external interface;
* ``spark.ui.enabled=false`` (no port opened), no console progress bars;
* for a local master, a driver JVM with the C1 compiler only and the serial garbage
  collector: it only schedules, and in local mode it shares the cores with the Python
  workers (measured: about a third of its CPU use and of its start-up time);
* the log4j2 configuration shipped beside this module (errors only; per-task failure
  reports off, since failures become rows), and the JVM's three start-up lines that no
  configuration removes filtered out of stderr;
* a Java check first, so a missing or too old JDK is one clear line, not a stack trace;
* for a cluster master, the creditflow package shipped to the executors as a zip
  (``sc.addPyFile``), so only its dependencies (networkx, numpy) must be installed there.

Under ``spark-submit`` (or when a session is already active, as in tests and notebooks)
the existing session and its configuration are used as they are.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
MIN_JAVA = 17
LOG4J2_FILE = Path(__file__).with_name("log4j2.properties")
#: Lines the JVM prints at start-up whatever the configuration (feasibility.md §1).
STDERR_NOISE = (
    "WARNING: Using incubator modules",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)
PACKAGES = ("model", "conformance", "adapters", "spec")
#: JVM options of a local-mode driver (measured in benchmarks/sweep_bench.py's README notes)
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class SparkSetupError(RuntimeError):
    """Spark cannot start here; the message is one line saying what to install or set."""


def is_local(master: str) -> bool:
    return re.fullmatch(r"local(\[[^\]]*\])?", master.strip()) is not None


def is_loopback(master: str) -> bool:
    """A ``local`` master, or a standalone master on a loopback address (SW-CLUSTER):
    its executors run on this machine, so the driver binds to 127.0.0.1."""
    if is_local(master):
        return True
    match = re.fullmatch(r"spark://\[?([^\]/]+?)\]?:\d+/?", master.strip())
    if not match:
        return False
    host = match.group(1)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def java_version() -> int:
    """The major version of the ``java`` Spark will use; :class:`SparkSetupError` if none."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise SparkSetupError(
            "Java not found: Spark needs a JDK >= 17 (Debian: apt-get install "
            "openjdk-17-jre-headless; scripts/setup.sh does it) or JAVA_HOME set"
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkSetupError(f"cannot run {java} -version ({exc})") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        raise SparkSetupError(f"cannot tell the version of {java}: {out.strip()[:120]}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0_…"
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise SparkSetupError(f"{java} is Java {major}; Spark 4 needs Java >= {MIN_JAVA}")
    return major


@contextmanager
def _filtered_stderr() -> Iterator[None]:
    """Point fd 2 at a pipe while the JVM starts: the JVM (and the Python workers it
    forks later) keep the pipe as their stderr, and a thread forwards every line except
    :data:`STDERR_NOISE` to the real stderr."""
    try:
        real = os.dup(2)
    except OSError:
        yield
        return
    read_end, write_end = os.pipe()

    def forward() -> None:
        with os.fdopen(read_end, "rb") as pipe:
            for line in pipe:
                text = line.decode("utf-8", "replace")
                if not any(text.startswith(noise) for noise in STDERR_NOISE):
                    os.write(real, line)

    threading.Thread(target=forward, name="spark-stderr", daemon=True).start()
    sys.stderr.flush()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(real, 2)


def package_zip(directory: Path) -> Path:
    """The creditflow package as a zip for ``sc.addPyFile`` (a namespace package with
    one folder per subpackage, as installed)."""
    path = directory / "creditflow.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        # zipimport finds a namespace package (creditflow/) only by its directory entry
        archive.writestr("creditflow/", "")
        for name in PACKAGES:
            module = __import__(f"creditflow.{name}", fromlist=["__file__"])
            root = Path(str(module.__file__)).resolve().parent
            for file in sorted(root.rglob("*")):
                if "__pycache__" in file.parts:
                    continue
                target = f"creditflow/{name}/{file.relative_to(root)}"
                if file.is_dir():
                    archive.writestr(target + "/", "")
                else:
                    archive.write(file, target)
            archive.writestr(f"creditflow/{name}/", "")
    return path


@dataclass
class SparkHandle:
    """A session, and whether :func:`start_spark` created it (then :meth:`stop` stops it)."""

    spark: SparkSession
    owned: bool

    @property
    def sc(self) -> SparkContext:
        return self.spark.sparkContext

    @property
    def master(self) -> str:
        return str(self.sc.master)

    def stop(self) -> None:
        if self.owned:
            self.spark.stop()


def start_spark(
    master: str | None = None, app_name: str = "creditflow", ship_code: bool | None = None
) -> SparkHandle:
    """A Spark session for a sweep (see the module docstring). ``master``: ``local[*]``
    by default; ``ship_code``: default true for non-local masters."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkSetupError(
            "pyspark is not installed: pip install 'creditflow[spark]' (scripts/setup.sh does)"
        ) from None
    from pyspark import SparkContext

    active = SparkSession.getActiveSession()
    if active is None and SparkContext._active_spark_context is not None:
        active = SparkSession.builder.getOrCreate()  # wraps the running context
    if active is not None:
        if master and master != active.sparkContext.master:
            raise SparkSetupError(
                f"a Spark session with master {active.sparkContext.master} is already "
                f"active in this process; cannot switch to {master}"
            )
        return SparkHandle(active, owned=False)
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit launched the JVM
    builder: Any = SparkSession.builder.appName(app_name)
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # a crashed worker's report then carries its Python traceback, or the watchdog's
        # reason for killing it (SW-FAILURE)
        "spark.python.worker.faulthandler.enabled": "true",
    }
    if not under_submit:
        java_version()
        master = master or DEFAULT_MASTER
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        java_options = f"-Dlog4j2.configurationFile=file:{LOG4J2_FILE}"
        if is_local(master):
            # the driver JVM only schedules; C1 and the serial collector cut its CPU use
            # (which the Python workers share in local mode) and its start-up time
            java_options += " " + LOCAL_JVM_OPTIONS
        if is_loopback(master):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            conf["spark.driver.host"] = "127.0.0.1"
            conf["spark.driver.bindAddress"] = "127.0.0.1"
        conf["spark.driver.extraJavaOptions"] = java_options
    if master:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        with _filtered_stderr():
            spark = builder.getOrCreate()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SparkSetupError(f"Spark did not start (master {master}): {first}") from None
    handle = SparkHandle(spark, owned=True)
    if ship_code if ship_code is not None else not is_local(handle.master):
        directory = Path(tempfile.mkdtemp(prefix="creditflow-spark-"))
        handle.sc.addPyFile(str(package_zip(directory)))
    return handle
