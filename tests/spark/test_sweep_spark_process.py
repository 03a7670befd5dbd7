"""`creditflow sweep` in fresh processes: started by hand with no Spark variables set,
and under spark-submit. Each starts its own JVM (no shared session), so these run in
`make test`'s parallel pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]

TINY = """
name = "tiny"
[budget]
max_seconds = 20
[settings]
credits = { specs = [[1, 1], [2, 1]] }
variants = ["faithful", "all-check"]
publishes = [2]
[[family]]
kind = "broker"
mirrors = 1
[[family]]
kind = "random-cyclic"
"""


def fresh_env() -> dict[str, str]:
    """This machine's environment without anything that would make Spark work by luck."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYSPARK_PYTHON",
            "PYSPARK_DRIVER_PYTHON",
            "SPARK_LOCAL_IP",
            "PYSPARK_GATEWAY_PORT",
            "PYSPARK_GATEWAY_SECRET",
            "SPARK_HOME",
        )
    }
    return env


def test_cli_runs_spark_quietly_in_a_fresh_process(tmp_path):
    """SW-ENGINE set-up: `creditflow sweep` in a new process with no Spark variables set
    starts Spark itself and prints nothing of Spark's on stderr."""
    (tmp_path / "tiny.toml").write_text(TINY)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "creditflow.conformance.sweep",
            "sweep",
            "tiny.toml",
            "--out",
            "out",
            "--master",
            "local[1]",
            "--no-progress",
            "--json",
        ],
        cwd=tmp_path,
        env=fresh_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    summary = json.loads(proc.stdout)
    assert summary["master"] == "local[1]" and summary["written"] == 8
    assert len(pq.read_table(tmp_path / "out" / "results")) == 8


def test_spark_submit_runs_a_sweep(tmp_path):
    """SW-ENGINE: the same command line runs under spark-submit (which launches the JVM
    and fixes the master)."""
    import pyspark

    (tmp_path / "tiny.toml").write_text(TINY)
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    entry = ROOT / "conformance" / "sweep" / "__main__.py"
    env = {
        **fresh_env(),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    proc = subprocess.run(
        [
            str(submit),
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            str(entry),
            "sweep",
            "tiny.toml",
            "--out",
            "out",
            "--json",
            "--no-progress",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["master"] == "local[2]" and summary["written"] == 8
    assert len(pq.read_table(tmp_path / "out" / "results")) == 8
