"""A shipped sweep on a real standalone Spark cluster (master + two workers on loopback,
from the installed pyspark), against a ``local[*]`` run; and the cluster helper's
clean-up (SW-CLUSTER). Missing Java or pyspark fails these tests, never skips them.

Cost on the 2-core development machine: about 48 s for the sweep comparison (cluster
4 s, each `creditflow sweep` process 15-18 s, mostly Spark's start-up), 3-5 s for each
clean-up test (twice that under a load average of 10).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from creditflow.conformance.sweep.spark import is_loopback
from creditflow.conformance.sweep.standalone import (
    ClusterError,
    StandaloneSparkCluster,
    group_members,
)

pytestmark = pytest.mark.xdist_group("spark")

CREDITFLOW = str(Path(sys.executable).with_name("creditflow"))
#: Columns that differ between two runs of the same cases by design (SW-ROW: the run).
RUN_COLUMNS = {"seconds", "run_id", "attempt", "host", "finished_at", "trace_path"}


def fresh_env() -> dict[str, str]:
    """This environment without Spark variables: the CLI must set up Spark itself."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains ``text`` (the cluster's private folder
    is on every daemon's and executor's command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def sweep_rows(out: Path) -> list[dict[str, Any]]:
    """The rows of a sweep's output, run columns dropped, the trace path made relative
    to the output folder, sorted by case id."""
    table = pq.read_table(out / "results")
    rows = []
    for row in table.to_pylist():
        trace = row["trace_path"]
        if trace:
            path = Path(trace)
            row["trace"] = str(path.relative_to(out) if path.is_absolute() else path)
        rows.append({k: v for k, v in row.items() if k not in RUN_COLUMNS})
    return sorted(rows, key=lambda r: r["case_id"])


def run_sweep(master: str, out: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [
            CREDITFLOW,
            "sweep",
            "smoke",
            "--master",
            master,
            "--out",
            str(out),
            "--no-progress",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_shipped_sweep_on_a_standalone_cluster_matches_local(tmp_path):
    """SW-CLUSTER, SW-ENGINE: `creditflow sweep smoke --master spark://127.0.0.1:P` on a
    real master with two one-core workers writes the same rows (every verdict column,
    every case id) as `--master local[*]`; both workers ran tasks; afterwards no daemon
    and no executor is left."""
    local = run_sweep("local[*]", tmp_path / "local", fresh_env())
    cluster = StandaloneSparkCluster(workers=2, cores_per_worker=1, root=tmp_path / "cluster")
    with cluster:
        assert cluster.master_url.startswith("spark://127.0.0.1:")
        assert len(cluster.pids) == 3 and all(group_members(pid) for pid in cluster.pids)
        # a plain environment: the CLI binds its driver to loopback for this master
        remote = run_sweep(cluster.master_url, tmp_path / "remote", fresh_env())
        tasks = cluster.finished_tasks()
    assert remote["master"] == cluster.master_url and remote["parallelism"] == 2
    assert remote["written"] == local["written"] == local["cases"] > 0
    assert set(tasks) == {"worker-1", "worker-2"} and all(n > 0 for n in tasks.values()), tasks
    remote_rows, local_rows = sweep_rows(tmp_path / "remote"), sweep_rows(tmp_path / "local")
    assert [r["case_id"] for r in remote_rows] == [r["case_id"] for r in local_rows]
    assert remote_rows == local_rows
    assert {r["verdict"] for r in local_rows} >= {"holds", "deadlock"}
    # both daemons (and the workers' executors) are gone, by pid and by command line
    assert cluster.running() == []
    assert processes_mentioning(str(tmp_path / "cluster")) == []


def test_cluster_stops_when_the_body_raises(tmp_path):
    """SW-CLUSTER: an exception in the `with` body stops every daemon and propagates."""
    cluster = StandaloneSparkCluster(workers=1, root=tmp_path / "cluster")
    with pytest.raises(RuntimeError, match="body failed"), cluster:
        assert all(group_members(pid) for pid in cluster.pids)
        raise RuntimeError("body failed")
    assert len(cluster.pids) == 2
    assert cluster.running() == []
    assert processes_mentioning(str(tmp_path / "cluster")) == []


def test_cluster_that_cannot_start_is_one_line_and_leaves_nothing(tmp_path):
    """SW-CLUSTER: a worker that exits at start-up (here: an invalid memory size) is one
    error line naming it and its log; the master already started is stopped."""
    cluster = StandaloneSparkCluster(workers=1, worker_memory="lots", root=tmp_path / "c")
    with pytest.raises(ClusterError) as caught, cluster:
        pytest.fail("the body must not run")
    message = str(caught.value)
    assert "\n" not in message and "Spark worker-1 exited" in message
    assert "rejected its command line" in message
    log = tmp_path / "c" / "logs" / "worker-1.log"
    assert str(log) in message and log.exists()
    assert len(cluster.pids) == 2 and cluster.running() == []
    assert processes_mentioning(str(tmp_path / "c")) == []


#: The process that starts the cluster. Its SIGINT is set as a terminal's Ctrl-C finds
#: it (and as the creditflow program sets it, SIG-POLICY): a suite started as a
#: background job of a non-interactive shell (``make test &``, a CI runner) hands its
#: children SIGINT *ignored*, and a plain Python process then ignores Ctrl-C for good —
#: the SIGINT case waited 120 s for an exit that could not come.
SIGNALLED = textwrap.dedent("""
    import json, signal, sys, time
    from pathlib import Path
    from creditflow.conformance.sweep.standalone import StandaloneSparkCluster
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with StandaloneSparkCluster(workers=1, root=Path(sys.argv[1])) as cluster:
        print(json.dumps(cluster.pids), flush=True)
        time.sleep(600)
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_cluster_stops_when_its_process_is_signalled(tmp_path, signum):
    """SW-CLUSTER: SIGTERM (the helper's handler) or SIGINT (KeyboardInterrupt through
    the `with`) to the process that started the cluster stops the daemons, then that
    process ends as the signal would have ended it; after SIGKILL, which nothing in the
    process can catch, the daemons get SIGTERM from the kernel (PR_SET_PDEATHSIG)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGNALLED, str(tmp_path / "cluster")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        pids = json.loads(line)
        assert len(pids) == 2 and all(group_members(pid) for pid in pids)
        proc.send_signal(signum)
        signalled = time.monotonic()
        assert proc.wait(timeout=120) == -signum
        print(f"{signal.Signals(signum).name}: ended {time.monotonic() - signalled:.1f} s after")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 60  # after SIGKILL, the JVMs' own shutdown takes time
    while any(group_members(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in pids if group_members(pid)] == []
    assert processes_mentioning(str(tmp_path / "cluster")) == []


@pytest.mark.parametrize(
    ("master", "loopback"),
    [
        ("local[*]", True),
        ("spark://127.0.0.1:7077", True),
        ("spark://localhost:7077", True),
        ("spark://[::1]:7077", True),
        ("spark://127.0.0.2:7077", True),
        ("spark://head:7077", False),
        ("spark://10.0.0.5:7077", False),
        ("spark://127.0.0.1:7077,10.0.0.5:7077", False),
        ("yarn", False),
    ],
)
def test_loopback_masters(master, loopback):
    """SW-CLUSTER: which masters make the driver bind to 127.0.0.1."""
    assert is_loopback(master) is loopback
