"""Spark set-up helpers that need no JVM: Java detection, masters, the shipped package
and the quiet logging configuration (the running session: test_sweep_spark.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from creditflow.conformance.sweep import spark
from creditflow.conformance.sweep.spark import (
    LOG4J2_FILE,
    SparkSetupError,
    is_local,
    java_version,
    package_zip,
)


def test_local_masters():
    """SW-ENGINE: which masters get the loopback set-up."""
    assert all(is_local(m) for m in ("local", "local[*]", "local[2]", "local[2,3]"))
    assert not any(is_local(m) for m in ("spark://h:7077", "yarn", "k8s://x", "localhost"))


def test_java_is_found_and_recent():
    """SW-ENGINE: the Java Spark will use is detected and is >= 17 here."""
    assert java_version() >= 17


def test_missing_java_is_one_clear_line(tmp_path, monkeypatch):
    """SW-ENGINE: a JAVA_HOME without a java says what to install, in one line."""
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkSetupError) as err:
        java_version()
    assert "Java not found" in str(err.value) and "\n" not in str(err.value)


def test_old_java_is_refused(tmp_path, monkeypatch):
    """SW-ENGINE: Java 11 is refused with the version Spark needs."""
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkSetupError, match="is Java 11; Spark 4 needs Java >= 17"):
        java_version()


def test_shipped_package_imports_from_the_zip(tmp_path):
    """SW-ENGINE: the zip sent to cluster executors holds the whole creditflow package
    and imports on its own (a namespace package inside a zip)."""
    path = package_zip(tmp_path)
    names = zipfile.ZipFile(path).namelist()
    assert "creditflow/conformance/sweep/worker.py" in names
    assert "creditflow/model/network/rules.py" in names
    assert not any("__pycache__" in n for n in names)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import creditflow.conformance.sweep.worker as w\n"
        "import creditflow.conformance.explore.encoding as n\n"
        "assert w.__file__.startswith(sys.argv[1]) and n.__file__.startswith(sys.argv[1])\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -S: no site-packages (and no editable finder), so creditflow can only come from
    # the zip; the dependencies' folder is put back at the end of the path
    import networkx

    site = os.path.dirname(os.path.dirname(networkx.__file__))
    proc = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path.append({site!r})\n" + probe, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdout.strip() == "ok", proc.stderr


def test_log4j2_configuration_is_shipped_and_quiet():
    """SW-ENGINE: the log4j2 file is in the package, errors only, per-task failure
    reports off; local drivers get the light JVM options."""
    text = LOG4J2_FILE.read_text()
    assert "rootLogger.level = error" in text
    assert "logger.executor.level = off" in text and "logger.tasks.level = off" in text
    assert "TieredStopAtLevel=1" in spark.LOCAL_JVM_OPTIONS
