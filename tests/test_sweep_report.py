"""`creditflow report`: DuckDB over a sweep folder's Parquet rows, plots and the HTML page.

The folder is produced by the real driver with an in-process engine (the report only
reads Parquet; the Spark path is test_sweep_spark.py). Expected figures are recomputed
here from the rows with plain Python, independently of the report's SQL.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.sweep.driver import plan_sweep, run_sweep
from creditflow.conformance.sweep.report import sweep_report
from creditflow.conformance.sweep.store import SweepStore
from creditflow.conformance.sweep.sweepfile import parse_sweep

SWEEP = """
name = "rep"
seed = 1
[budget]
max_states = 20000
max_seconds = 20
[settings]
credits = { grid = { initial = [1, 2, 3], more_after = [1, 2] } }
variants = ["faithful", "all-check"]
publishes = [2]
[[family]]
kind = "broker"
name = "broker"
stalled_queues = [0, 1]
queues = 2
[[family]]
kind = "random-cyclic"
name = "cyc"
nodes = 3
edges = 3
[[family]]
kind = "layered"
name = "layered"
publishes = [1]
"""


class SerialRunner:
    parallelism = 1

    def run(self, fn, batches, group):
        return [fn(b) for b in batches]

    def cancel_all(self):
        pass


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    """A swept folder, plus a later attempt of one case that timed out (SW-RESUME)."""
    out = tmp_path_factory.mktemp("swept")
    spec = parse_sweep(SWEEP, "rep.toml")
    store = SweepStore(out)
    store.prepare(spec.text)
    run_sweep(plan_sweep(spec, store), store, SerialRunner())
    victim = dict(next(r for r in latest_rows(out) if r["verdict"] == "holds"))
    victim.update(
        attempt=2,
        verdict="timeout",
        deadlock=None,
        complete=False,
        error="no verdict within max_seconds = 20",
        run_id="later",
    )
    store.commit([victim], "later", 0)
    return out


@pytest.fixture(scope="module")
def reported(swept, tmp_path_factory):
    """`creditflow report` run once on the folder: (result, report folder)."""
    report_dir = tmp_path_factory.mktemp("report")
    result = CliRunner().invoke(main, ["report", str(swept), "--out", str(report_dir)])
    return result, report_dir


def latest_rows(out: Path) -> list[dict]:
    rows: dict[str, dict] = {}
    for row in pq.read_table(out / "results").to_pylist():
        if row["case_id"] not in rows or row["attempt"] > rows[row["case_id"]]["attempt"]:
            rows[row["case_id"]] = row
    return list(rows.values())


def test_report_figures_match_the_rows(swept):
    """SW-REPORT: verdict counts, the deadlock rate per family (of decided cases), the
    minimal safe credit and the slowest cases agree with the rows; only the latest
    attempt of a case counts (SW-RESUME)."""
    rows = latest_rows(swept)
    data = sweep_report(swept)
    assert data.cases == len(rows)
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["verdict"]] += 1
    assert data.verdicts == dict(counts)
    assert data.verdicts["timeout"] == 1

    for fam in data.families:
        mine = [r for r in rows if r["family"] == fam["family"]]
        decided = [r for r in mine if r["deadlock"] is not None]
        assert fam["cases"] == len(mine) and fam["decided"] == len(decided)
        expected = sum(r["deadlock"] for r in decided) / len(decided) if decided else None
        assert fam["deadlock_rate"] == pytest.approx(expected, abs=1e-4)

    groups: dict[tuple, dict[int, bool]] = defaultdict(dict)
    for r in rows:
        key = (r["family"], r["checker"], r["variant"], r["publishes"], r["credit_more_after"])
        safe = groups[key].get(r["credit_initial"], True)
        groups[key][r["credit_initial"]] = safe and r["verdict"] == "holds"
    assert len(data.min_safe) == len(groups)
    for entry in data.min_safe:
        key = (
            entry["family"],
            entry["checker"],
            entry["variant"],
            entry["publishes"],
            entry["more_after"],
        )
        by_initial = groups[key]
        safe = sorted(i for i, ok in by_initial.items() if ok)
        assert entry["min_safe_initial"] == (safe[0] if safe else None)
        if safe:
            assert entry["safe_above"] == all(ok for i, ok in by_initial.items() if i >= safe[0])
    assert any(e["min_safe_initial"] is None for e in data.min_safe) or any(
        e["min_safe_initial"] and e["min_safe_initial"] > 1 for e in data.min_safe
    )

    seconds = sorted((r["seconds"] for r in rows if r["seconds"] is not None), reverse=True)
    assert [s["seconds"] for s in data.slowest] == [round(s, 3) for s in seconds[:20]]
    assert [f["verdict"] for f in data.failures] == ["timeout"]


def test_report_files_and_page(reported):
    """SW-REPORT: PNG and SVG plots, report.json, and an HTML page whose images and
    trace links all point at files that exist."""
    result, report_dir = reported
    assert result.exit_code == 0, result.output
    plots = list((report_dir / "plots").iterdir())
    stems = {p.stem for p in plots}
    assert {
        "verdicts-by-family",
        "deadlock-rate-by-feature",
        "case-cost",
        "credit-broker",
        "credit-cyc",
        "credit-layered",
    } <= stems
    assert {p.suffix for p in plots} == {".png", ".svg"}
    for p in plots:
        data = p.read_bytes()
        assert data.startswith(b"\x89PNG") if p.suffix == ".png" else b"<svg" in data[:2000]
    page = (report_dir / "index.html").read_text()
    for heading in (
        "Deadlock rate by topology feature",
        "Minimal safe credit per family",
        "Slowest cases",
        "Shortest counterexamples",
        "Failures",
    ):
        assert heading in page
    targets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any(t.endswith(".svg") for t in targets)
    assert any(t.endswith(".itf.json") for t in targets)
    for target in targets:
        assert (report_dir / target).is_file(), target
    assert '"min_safe"' in (report_dir / "report.json").read_text()


def test_report_command(reported, tmp_path):
    """SW-REPORT: the command prints the tables and the page's path; a folder without
    rows is one line and exit 2."""
    result, report_dir = reported
    assert "minimal safe credit" in result.stdout
    assert f"report: {report_dir / 'index.html'}" in result.stdout
    empty = CliRunner().invoke(main, ["report", str(tmp_path / "nothing")])
    assert empty.exit_code == 2
    assert empty.stderr.strip() == (
        f"creditflow: error: {tmp_path / 'nothing'}: no sweep results "
        f"(expected {tmp_path / 'nothing'}/results/*.parquet)"
    )


def test_report_into_an_unwritable_folder_prints_the_tables_then_one_line(swept, tmp_path):
    """OUT-FAILURE, OUT-EXIT: `report --out` under a regular file: the tables are still
    printed, then one line naming the file; exit 5 (the report itself succeeded)."""
    (tmp_path / "plain").write_text("")
    result = CliRunner().invoke(
        main, ["report", str(swept), "--out", str(tmp_path / "plain" / "r")]
    )
    assert result.exit_code == 5
    assert "minimal safe credit" in result.stdout and "report: NOT WRITTEN" in result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("creditflow: error: could not write ") and "is not a folder" in line
