"""Sweeps and corpus replays through a real local Spark session, end to end.

One session for the whole module (starting Spark costs 10-15 s). The tests carry
``xdist_group("spark")``: pytest 9.2 + xdist 3.8 ignore groups (xdist sets
``item._nodeid``, which pytest 9 no longer reads), so conftest.py marks them ``spark`` and
`make test` runs them in its single-process pass, where one JVM serves them all.
Missing Java or pyspark makes these tests fail, never skip.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph, summary
from creditflow.conformance.inputs.itf import read_document, write_document
from creditflow.conformance.sweep.cases import expand
from creditflow.conformance.sweep.schema import schema
from creditflow.conformance.sweep.sweepfile import load_sweep
from creditflow.conformance.sweep.worker import case_graph
from creditflow.conformance.traces.network import replay_network_trace
from tests.test_sweep_faults import FAULT_SWEEP

pytestmark = pytest.mark.xdist_group("spark")

ROOT = Path(__file__).resolve().parents[2]

SMALL = """
name = "{name}"
seed = 5
[budget]
max_states = 20000
max_seconds = {max_seconds}
[settings]
credits = {{ grid = {{ initial = [1, 2], more_after = [1] }} }}
variants = ["faithful", "all-check"]
publishes = [2]
[[family]]
kind = "broker"
name = "broker"
mirrors = [0, 1]
[[family]]
kind = "random-dag"
name = "dag"
nodes = 4
instances = 2
[[family]]
kind = "random-cyclic"
name = "cyc"
nodes = 3
edges = 3
{extra}
"""


def sweep_file(
    tmp_path: Path, name: str = "small", max_seconds: float = 20, extra: str = ""
) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(SMALL.format(name=name, max_seconds=max_seconds, extra=extra))
    return path


@pytest.fixture(scope="session")
def spark():
    """A real local Spark session (local[2]); Spark's Python workers can import
    tests.sweep_plugins (the repository root is on their PYTHONPATH)."""
    assert shutil.which("java") or os.environ.get("JAVA_HOME"), (
        "Java is missing: the Spark tests need a JDK >= 17 (scripts/setup.sh installs it)"
    )
    from creditflow.conformance.sweep.spark import start_spark

    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    handle = start_spark("local[2]", app_name="creditflow tests")
    assert handle.owned and handle.sc.defaultParallelism == 2
    yield handle
    handle.spark.stop()


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def rows_of(out: Path) -> list[dict]:
    return pq.read_table(out / "results").to_pylist()


def test_sweep_end_to_end_resumes_and_reads_in_spark_sql(spark, tmp_path):
    """SW-ENGINE, SW-ROW, SW-TRACE, SW-COMMIT, SW-RESUME: a sweep through Spark writes one
    row per case with the explorer's verdicts (and Z3's, SW-CHECKER) and a replayable
    trace per counterexample; Spark SQL reads the rows; a rerun runs nothing; a lost part
    file's cases (and only those) run again."""
    path = sweep_file(
        tmp_path,
        extra=textwrap.dedent("""
        [[family]]
        kind = "layered"
        name = "proved"
        widths = [1, 2]
        credits = { specs = [[1, 1]] }
        variants = ["all-check"]
        checkers = ["prove"]
    """),
    )
    out = tmp_path / "out"
    result = cli("sweep", str(path), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    cases, _ = expand(load_sweep(path))
    assert report["written"] == report["cases"] == len(cases)
    assert report["master"] == "local[2]"
    assert pq.read_schema(next((out / "results").glob("*.parquet"))).remove_metadata() == (schema())
    rows = {r["case_id"]: r for r in rows_of(out)}
    assert set(rows) == {c.case_id for c in cases}
    verdicts = set()
    for case in cases:
        row = rows[case.case_id]
        system, explored = check_graph(
            case_graph(case.graph.graph, case.task), CheckOptions(max_states=case.task.max_states)
        )
        expected = summary(system, explored)
        if case.task.checker == "prove":
            assert (row["verdict"], row["states"], row["deadlock"]) == ("holds", None, False)
            assert expected.deadlock is False and expected.complete
            continue
        assert (row["states"], row["deadlock"], row["complete"]) == (
            expected.states,
            expected.deadlock,
            expected.complete,
        )
        assert (row["nodes"], row["cycles"], row["variant"]) == (
            case.graph.features["nodes"],
            case.graph.features["cycles"],
            case.task.variant,
        )
        assert row["attempt"] == 1 and row["run_id"] == report["run_id"]
        verdicts.add(row["verdict"])
        if row["shortest_counterexample"] is not None:
            trace = out / row["trace_path"]
            replayed = replay_network_trace(trace)
            assert (
                read_document(trace)["#meta"]["creditflow"]["length"]
                == (row["shortest_counterexample"])
            )
            assert len(replayed.states) - 1 >= row["shortest_counterexample"]
        else:
            assert row["trace_path"] is None
    assert {"holds", "deadlock"} <= verdicts

    frame = spark.spark.read.parquet(str(out / "results"))
    assert frame.count() == len(cases)
    by_verdict = {r["verdict"]: r["count"] for r in frame.groupBy("verdict").count().collect()}
    assert by_verdict == {v: sum(1 for r in rows.values() if r["verdict"] == v) for v in verdicts}

    parts = sorted((out / "results").glob("*.parquet"))
    again = cli("sweep", str(path), "--out", str(out), "--json")
    assert again.exit_code == 0
    assert json.loads(again.stdout.strip().splitlines()[-1])["pending"] == 0
    assert sorted((out / "results").glob("*.parquet")) == parts

    lost = pq.read_table(parts[0]).column("case_id").to_pylist()
    parts[0].unlink()
    resumed = cli("sweep", str(path), "--out", str(out), "--json")
    assert resumed.exit_code == 0
    assert json.loads(resumed.stdout.strip().splitlines()[-1])["written"] == len(lost)
    after = rows_of(out)
    assert sorted(r["case_id"] for r in after) == sorted(rows)
    assert all(r["attempt"] == 1 for r in after)


def test_crashes_errors_and_timeouts_are_rows(spark, tmp_path):
    """SW-FAILURE, SW-BUDGET: a worker killed by a case, a case that raises and a case past
    its wall-clock budget each become that case's row (crashed, error, timeout); every
    other case gets its verdict; exit code 3; --retry-failed reruns exactly the failed
    ones as attempt 2."""
    extra = textwrap.dedent("""
        [[family]]
        kind = "random-cyclic"
        name = "crashy"
        credits = { specs = [[1, 1]] }
        variants = ["faithful"]
        nodes = 4
        edges = 4
        checkers = ["tests.sweep_plugins:crash_on_cycles"]
        [[family]]
        kind = "random-cyclic"
        name = "raisy"
        credits = { specs = [[1, 1]] }
        variants = ["faithful"]
        nodes = 4
        edges = 5
        checkers = ["tests.sweep_plugins:raise_on_cycles"]
        [[family]]
        kind = "random-cyclic"
        name = "spinny"
        credits = { specs = [[1, 1]] }
        variants = ["faithful"]
        nodes = 4
        edges = 6
        checkers = ["tests.sweep_plugins:spin_on_cycles"]
    """)
    path = sweep_file(tmp_path, "faulty", max_seconds=1, extra=extra)
    out = tmp_path / "out"
    result = cli("sweep", str(path), "--out", str(out), "--json", "--plugin", "tests.sweep_plugins")
    assert result.exit_code == 3, result.output
    rows = rows_of(out)
    cases, _ = expand(load_sweep(path, plugins=["tests.sweep_plugins"]))
    assert sorted(r["case_id"] for r in rows) == sorted(c.case_id for c in cases)
    by_family: dict[str, set[str]] = {}
    for r in rows:
        by_family.setdefault(r["family"], set()).add(r["verdict"])
    assert by_family["crashy"] == {"crashed"}
    assert by_family["raisy"] == {"error"}
    assert by_family["spinny"] == {"timeout"}
    assert not {"crashed", "error", "timeout"} & (
        by_family["broker"] | by_family["dag"] | by_family["cyc"]
    )
    crashed = next(r for r in rows if r["verdict"] == "crashed")
    assert crashed["error"].startswith("task failed: ") and "crashed" in crashed["error"]
    assert "\n" not in crashed["error"]
    timeout = next(r for r in rows if r["verdict"] == "timeout")
    assert 1.0 <= timeout["seconds"] < 5 and timeout["states"] > 0

    retried = cli(
        "sweep",
        str(path),
        "--out",
        str(out),
        "--retry-failed",
        "--json",
        "--plugin",
        "tests.sweep_plugins",
    )
    assert retried.exit_code == 3
    failed = sum(1 for r in rows if r["verdict"] in ("crashed", "error", "timeout"))
    assert json.loads(retried.stdout.strip().splitlines()[-1])["written"] == failed
    attempts = [r["attempt"] for r in rows_of(out)]
    assert attempts.count(2) == failed and len(attempts) == len(rows) + failed


def test_a_case_that_ignores_its_alarm_is_killed_and_recorded(spark, tmp_path):
    """SW-BUDGET, SW-FAILURE: a case no signal stops is killed at its hard limit; the
    engine isolates it and records a timeout; its batch-mate still gets a verdict."""
    path = tmp_path / "deaf.toml"
    path.write_text(
        textwrap.dedent("""
        name = "deaf"
        [budget]
        max_seconds = 0.2
        [settings]
        credits = { specs = [[1, 1]] }
        publishes = [1]
        checkers = ["tests.sweep_plugins:deaf_on_cycles"]
        [[family]]
        kind = "random-cyclic"
        nodes = 2
        edges = 2
        [[family]]
        kind = "layered"
    """)
    )
    out = tmp_path / "out"
    result = cli(
        "sweep",
        str(path),
        "--out",
        str(out),
        "--batch-size",
        "1",
        "--json",
        "--plugin",
        "tests.sweep_plugins:deaf_on_cycles",
    )
    assert result.exit_code == 0, result.output
    rows = {r["kind"]: r for r in rows_of(out)}
    assert rows["random-cyclic"]["verdict"] == "timeout"
    assert rows["random-cyclic"]["error"].startswith("worker killed after the hard limit")
    assert rows["random-cyclic"]["seconds"] >= 5.4
    assert rows["layered"]["verdict"] == "holds"


def test_replay_corpus(spark, tmp_path):
    """SW-REPLAY: traces replayed across executors: good traces ok, a tampered one
    diverged, a broken file bad-trace (exit 1); a plug-in replay function that crashes
    its worker or raises gives crashed and error rows (exit 3); one row per file."""
    corpus = tmp_path / "corpus"
    for preset in ("cycle2", "cycle3", "stalled-queue"):
        assert (
            cli(
                "check",
                preset,
                "--credit",
                "1,1",
                "--all-check-blocked",
                "--trace-out",
                str(corpus / f"{preset}.itf.json"),
                "--dot-out",
                str(tmp_path / f"{preset}.dot"),
            ).exit_code
            == 10
        )
    doc = read_document(corpus / "cycle3.itf.json")
    doc["states"][-1]["#meta"] = {"index": len(doc["states"]) - 1}
    first_var = next(v for v in doc["vars"] if not v.startswith("mbt::"))
    doc["states"][-1][first_var] = {"#bigint": "99"}
    write_document(doc, corpus / "sub" / "tampered.itf.json")
    (corpus / "broken.itf.json").write_text("{not json")
    out = tmp_path / "replayed"
    result = cli("replay-corpus", str(corpus), "--out", str(out), "--json")
    assert result.exit_code == 1, result.output
    rows = {Path(r["path"]).name: r for r in pq.read_table(out).to_pylist()}
    assert {n: r["status"] for n, r in rows.items()} == {
        "cycle2.itf.json": "ok",
        "cycle3.itf.json": "ok",
        "stalled-queue.itf.json": "ok",
        "tampered.itf.json": "diverged",
        "broken.itf.json": "bad-trace",
    }
    assert "states[" in rows["tampered.itf.json"]["message"]
    assert (
        rows["cycle2.itf.json"]["steps"]
        == read_document(corpus / "cycle2.itf.json")["#meta"]["creditflow"]["length"]
    )

    shutil.copy(corpus / "cycle2.itf.json", corpus / "crash-me.itf.json")
    shutil.copy(corpus / "cycle2.itf.json", corpus / "boom.itf.json")
    out2 = tmp_path / "replayed2"
    result = cli(
        "replay-corpus",
        str(corpus),
        "--out",
        str(out2),
        "--json",
        "--replay",
        "tests.sweep_plugins:replay_or_crash",
        "--batch-size",
        "3",
    )
    assert result.exit_code == 3, result.output
    rows = {Path(r["path"]).name: r for r in pq.read_table(out2).to_pylist()}
    assert len(rows) == 7
    assert rows["crash-me.itf.json"]["status"] == "crashed"
    assert rows["boom.itf.json"]["status"] == "error"
    assert rows["boom.itf.json"]["message"].startswith("KeyError: 'adapter lost")
    assert rows["cycle3.itf.json"]["status"] == "ok"
    assert rows["tampered.itf.json"]["status"] == "diverged"


def test_replay_corpus_against_adapters(spark, tmp_path):
    """SW-REPLAY: the shipped per-process corpus replayed across executors against the
    REAL credit_flow module (adapter:rabbitmq, an Erlang VM per worker) passes; against a
    mutant it diverges on exactly the traces its expectations file lists."""
    corpus = ROOT / "conformance" / "corpus" / "credit_flow"  # the AMQP runs live beside it
    traces = sorted(corpus.glob("**/*.itf.json"))
    result = cli(
        "replay-corpus",
        str(corpus),
        "--replay",
        "adapter:rabbitmq",
        "--out",
        str(tmp_path / "real"),
        "--json",
    )
    assert result.exit_code == 0, result.output
    rows = pq.read_table(tmp_path / "real").to_pylist()
    assert sorted(r["path"] for r in rows) == [str(t) for t in traces]
    assert {r["status"] for r in rows} == {"ok"} and all(r["steps"] > 0 for r in rows)

    mutant = "peer-down-no-unblock"
    expected = json.loads(
        (ROOT / "conformance" / "expectations" / f"mutant-{mutant}.json").read_text()
    )["known_divergences"]
    result = cli(
        "replay-corpus",
        str(corpus),
        "--replay",
        f"adapter:mutant:{mutant}",
        "--out",
        str(tmp_path / "mutant"),
        "--json",
    )
    assert result.exit_code == 1, result.output
    rows = pq.read_table(tmp_path / "mutant").to_pylist()
    diverged = {
        Path(r["path"]).name.removesuffix(".itf.json"): r for r in rows if r["status"] == "diverged"
    }
    assert set(diverged) == set(expected)
    assert all("peer_down" in r["message"] for r in diverged.values())


def test_bad_input_is_exit_2_without_starting_spark(tmp_path):
    """SW-FILE: a bad sweep file or a bad replay function is one line and exit 2."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[[family]]\nkind = 'ring'\n")
    result = CliRunner().invoke(main, ["sweep", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"creditflow: error: {bad}: family[0]: kind must be one of broker, random-dag, "
        "random-cyclic, layered, amqp, got 'ring'"
    ]
    result = CliRunner().invoke(main, ["replay-corpus", str(tmp_path), "--replay", "nope"])
    assert result.exit_code == 2 and "unknown replay function 'nope'" in result.stderr


def test_a_fault_sweep_through_spark(spark, tmp_path):
    """SW-FAULTS, SW-ROW, SW-REPORT: a broker family swept over may_crash x on_peer_down
    through Spark: every row carries its fault setting and the explorer's fault verdict
    (a crashable queue holds when its channel calls peer_down and deadlocks when it
    ignores the DOWN); the report keeps the settings apart."""
    path = tmp_path / "faults.toml"
    path.write_text(FAULT_SWEEP)
    out = tmp_path / "out"
    result = cli("sweep", str(path), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    rows = {(r["may_crash"], r["on_peer_down"]): r for r in rows_of(out)}
    assert {k: (r["verdict"], r["crashable"]) for k, r in rows.items()} == {
        ("none", "peer_down"): ("holds", 0),
        ("queue", "peer_down"): ("holds", 1),
        ("queue", "ignore"): ("deadlock", 1),
    }
    assert "PROP-RECOVERY" in rows[("queue", "ignore")]["violated"]
    replay_network_trace(out / rows[("queue", "ignore")]["trace_path"])
    report = cli("report", str(out), "--json")
    assert report.exit_code == 0, report.output
    safe = {r["variant"]: r["min_safe_initial"] for r in json.loads(report.stdout)["min_safe"]}
    assert safe["faithful, may_crash=queue, on_peer_down=ignore"] is None
    assert safe["faithful, may_crash=queue, on_peer_down=peer_down"] == 1


AMQP_SPARK_SWEEP = """
name = "amqp-spark"
[budget]
max_states = 20000
max_seconds = 60
[settings]
publishes = [3]
[[family]]
kind = "amqp"
name = "ring"
topology = "ring-one-held"
session_policy = "ring"
session_window = [2, 3]
"""


def test_an_amqp_sweep_on_spark_says_what_each_row_claims(spark, tmp_path):
    """SW-AMQP, SW-AMQP-CLAIM, SW-TRACE on Spark: an AMQP family (a ring of 2 or 3 slots,
    one delivery held) runs on the executors like a NET family; each row is the AMQP
    check's verdict for the supply with its claim, and the stall's trace replays."""
    from creditflow.conformance.families.amqp.codec import replay_amqp_document

    path = tmp_path / "amqp.toml"
    path.write_text(AMQP_SPARK_SWEEP)
    out = tmp_path / "out"
    result = cli("sweep", str(path), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    rows = {r["variant"]: r for r in rows_of(out)}
    assert set(rows) == {"session ring 2", "session ring 3"}
    stall, holds = rows["session ring 2"], rows["session ring 3"]
    assert (stall["verdict"], stall["claim_scope"], stall["deadlock_kind"]) == (
        "deadlock",
        "supply",
        "stall",
    )
    assert "PROP-AMQ-NO-STALL violated after" in stall["claim"] and "supply 3" in stall["claim"]
    replayed = replay_amqp_document(read_document(out / stall["trace_path"]))
    assert len(replayed.steps) == stall["shortest_counterexample"]
    assert (holds["verdict"], holds["claim_scope"], holds["trace_path"]) == (
        "holds",
        "supply",
        None,
    )
    assert holds["claim"].startswith("holds for supply 3")
