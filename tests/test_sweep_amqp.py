"""AMQP families in sweeps (SW-AMQP, SW-AMQP-CLAIM, issue 28 point 4): policies x sizes x
topologies, each case the AMQP check of `creditflow check`, each row saying what its
verdict claims. The local path (run_batch, the executor's work, and the Parquet rows);
the Spark run is tests/spark/test_sweep_amqp_spark.py."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.checking import check_amqp
from creditflow.conformance.inputs.amqp_topologies import read_amqp_preset
from creditflow.conformance.sweep.cases import expand
from creditflow.conformance.sweep.report import sweep_report
from creditflow.conformance.sweep.schema import check_part_file, rows_to_table
from creditflow.conformance.sweep.sweepfile import SweepFileError, parse_sweep
from tests.sweep_rows import sweep_rows

AMQP_SWEEP = textwrap.dedent("""
    name = "amqp"
    [budget]
    max_states = 20000
    max_seconds = 60
    [settings]
    publishes = [3]
    [[family]]
    kind = "amqp"
    name = "ring"
    topology = "ring-one-held"
    credit_policy = "window"
    credit_window = [1, 3]
    session_policy = ["ring", "fixed"]
    session_window = [2, 3]
    holds = [0, 1]
""")


def _rows(text: str, where: str = "amqp.toml") -> list[dict]:
    """The rows of the sweep file ``text``, computed in-process."""
    return sweep_rows(text, where)


def test_an_amqp_family_is_policies_times_sizes_with_the_checks_own_verdicts():
    """SW-AMQP, SW-AMQP-CLAIM: every row is check_amqp's verdict on the point's topology
    with the case's supply, its credit window in credit_initial, its session policy in
    variant, and a claim for the supply checked (never for every supply)."""
    rows = _rows(AMQP_SWEEP)
    assert len(rows) == 2 * 2 * 2 * 2
    base = read_amqp_preset("ring-one-held").topology
    for row in rows:
        assert row["kind"] == "amqp" and row["checker"] == "amqp"
        assert row["credit_initial"] in (1, 3)
        assert row["variant"].startswith("session ring") or row["variant"].startswith(
            "session fixed"
        )
        assert row["claim_scope"] == "supply", row
        assert "supply 3" in row["claim"]
        assert "every supply" not in row["claim"] or "not established" in row["claim"]
    # the one stall shape: a ring of 2 slots with one delivery held (AMQ-POL-WINDOW-RING)
    stalls = {(r["credit_initial"], r["variant"]) for r in rows if r["deadlock"]}
    assert stalls == {(1, "session ring 2"), (3, "session ring 2")}
    for row in rows:
        if row["deadlock"]:
            assert row["verdict"] == "deadlock" and row["deadlock_kind"] == "stall"
            assert "PROP-AMQ-NO-STALL" in row["violated"]
            assert row["exit_code"] == 10 and row["shortest_counterexample"] > 0
        else:
            assert row["verdict"] == "holds" and row["complete"] and row["exit_code"] == 0
    # the verdict is the check's own: recompute one stall directly
    held = next(r for r in rows if r["deadlock"] and r["credit_initial"] == 3)
    assert '"holds":1' in held["graph_params"] or held["graph_params"].count("holds") == 1
    direct = check_amqp(replace(base, supply=3), None, every_supply=False)
    assert direct.search.violation is not None
    assert held["shortest_counterexample"] == len(direct.search.violation.steps)
    rows_to_table(rows)  # SW-ROW: every value fits its column


def test_a_directed_witness_is_not_stored_as_shortest():
    """SW-AMQP-CLAIM, AMQ-DIRECTED-RUN: when the breadth-first budget is spent and a
    directed run meets the stall, the row says so and stores no shortest length."""
    text = AMQP_SWEEP.replace("max_states = 20000", "max_states = 5").replace(
        "publishes = [3]", "publishes = [40]"
    )
    text = text.replace("credit_window = [1, 3]", "credit_window = 3").replace(
        'session_policy = ["ring", "fixed"]', 'session_policy = "ring"'
    )
    text = text.replace("session_window = [2, 3]", "session_window = 2").replace(
        "holds = [0, 1]", "holds = 1"
    )
    (row,) = _rows(text)
    assert row["verdict"] == "deadlock" and row["claim_scope"] == "directed-witness"
    assert row["shortest_counterexample"] is None
    assert "shortest not established" in row["claim"]


def test_a_budget_without_a_finding_claims_nothing():
    """SW-AMQP-CLAIM: nothing found within the budget is `incomplete`, scope `budget`,
    deadlock undecided (null, never false)."""
    text = textwrap.dedent("""
        [budget]
        max_states = 5
        [settings]
        publishes = [3]
        [[family]]
        kind = "amqp"
        topology = "rabbitmq4-consume"
    """)
    (row,) = _rows(text)
    assert row["verdict"] == "incomplete" and row["claim_scope"] == "budget"
    assert row["deadlock"] is None and row["exit_code"] == 4
    assert "not established" in row["claim"]


@pytest.mark.parametrize(
    ("family", "message"),
    [
        ('topology = "no-such"', "family[0] (amqp).topology"),
        ('credit_policy = "window"\ncredit_window = 2\ncredit_threshold = 2', "threshold"),
        ('topology = "rabbitmq4-publish"\ncredit_policy = "window"', "publish topology"),
        ('topology = "rabbitmq4-publish"\nholds = 1', "no receiving application"),
        ('session_policy = "sometimes"', "family[0] (amqp).session_policy"),
        ("credits = { specs = [[1, 1]] }", "family[0] (amqp).credits: not used by kind amqp"),
        ('checkers = ["explore"]', "kind amqp is checked by 'amqp' only"),
    ],
)
def test_bad_amqp_families_are_one_line_errors(family, message):
    """SW-AMQP, SW-FILE: a point the model cannot run is refused before anything runs,
    in one line naming the file and the place."""
    text = f'[[family]]\nkind = "amqp"\n{family}\n'
    with pytest.raises(SweepFileError) as err:
        parse_sweep(text, "bad.toml")
    assert str(err.value).startswith("bad.toml: ") and "\n" not in str(err.value)
    assert message in str(err.value)


def test_a_net_family_refuses_the_amqp_checker():
    """SW-AMQP: ``amqp`` checks AMQP families only."""
    with pytest.raises(SweepFileError, match="checks AMQP families only"):
        parse_sweep('[[family]]\nkind = "random-dag"\ncheckers = ["amqp"]\n', "bad.toml")


def test_bad_amqp_sweep_on_the_command_line_is_exit_2(tmp_path):
    """SW-FILE: `sweep --dry-run` on a bad AMQP family: one line, exit 2, no Spark."""
    path = tmp_path / "bad.toml"
    path.write_text('[[family]]\nkind = "amqp"\nsession_policy = "ring"\nsession_window = 0\n')
    result = CliRunner().invoke(main, ["sweep", str(path), "--dry-run"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "session_window" in lines[0] and str(path) in lines[0]


def test_unread_parameters_give_one_case_and_ids_are_stable():
    """SW-AMQP, SW-CASE-ID: a parameter the point's policy does not read (the session
    window of `keep`) yields the same document, dropped; ids repeat across expansions."""
    text = '[[family]]\nkind = "amqp"\ntopology = "ring-one-held"\nsession_window = [2, 3, 4]\n'
    cases = expand(parse_sweep(text, "a.toml"))[0]
    assert len(cases) == 1
    again = expand(parse_sweep(text, "a.toml"))[0]
    assert [c.case_id for c in cases] == [c.case_id for c in again]


def test_the_report_reads_amqp_rows_and_old_part_files(tmp_path):
    """SW-REPORT over AMQP rows: the minimal safe credit per session policy; a part file
    written before the claim columns existed is still a sweep part file (SW-ROW)."""
    import pyarrow.parquet as pq

    rows = _rows(AMQP_SWEEP)
    (tmp_path / "results").mkdir()
    table = rows_to_table(rows)
    pq.write_table(table, tmp_path / "results" / "part-new.parquet")
    # the old file's attempts finished earlier (SW-RESUME takes the latest; a tie would be
    # broken at random)
    earlier = [{**r, "finished_at": r["finished_at"] - 60} for r in rows]
    old = rows_to_table(earlier).drop_columns(["claim_scope", "claim"])
    pq.write_table(old, tmp_path / "results" / "part-old.parquet")
    assert check_part_file(tmp_path / "results" / "part-old.parquet") is None
    report = sweep_report(tmp_path)
    assert report.verdicts["deadlock"] == 2  # each case once (its latest row)
    safe = {(r["variant"], r["min_safe_initial"]) for r in report.min_safe}
    assert ("session ring 3", 1) in safe and ("session ring 2", None) in safe
    assert {(r["claim_scope"], r["verdict"]): r["cases"] for r in report.claims} == {
        ("supply", "deadlock"): 2,
        ("supply", "holds"): 14,
    }
    # a folder whose part files all predate the claim columns: no claims, no error
    (tmp_path / "results" / "part-new.parquet").unlink()
    assert sweep_report(tmp_path).claims == []


def test_an_amqp_family_sweeps_leader_changes():
    """SW-AMQP-FAULTS, AMQ-FAULT-LEADER-CHANGE: leader_changes lands on the consume
    queue; the row carries the fault (crashable, may_crash, max_crashes) and the check's
    verdict with it; on a link topology it is refused in one line."""
    text = textwrap.dedent("""
        [budget]
        max_states = 100000
        [settings]
        publishes = [2]
        [[family]]
        kind = "amqp"
        topology = "rabbitmq4-consume"
        credit_policy = "window"
        credit_window = 2
        leader_changes = [0, 1]
    """)
    rows = {r["max_crashes"]: r for r in _rows(text)}
    assert set(rows) == {None, 1}
    assert (rows[1]["crashable"], rows[1]["may_crash"]) == (1, "queue")
    assert (rows[None]["crashable"], rows[None]["may_crash"]) == (0, "none")
    assert rows[None]["verdict"] == "holds"
    # the preset's client drains once: a re-sent credit request's second reply is taken
    # for the answer to a later request, and the client's drain is never answered (a
    # finding of the model under AMQ-FAULT-LEADER-CHANGE, shortest for supply 2)
    assert (rows[1]["verdict"], rows[1]["violated"]) == ("violation", ["PROP-AMQ-DRAIN"])
    assert rows[1]["shortest_counterexample"] == 15 and rows[1]["claim_scope"] == "supply"
    bad = '[[family]]\nkind = "amqp"\ntopology = "ring-one-held"\nleader_changes = 1\n'
    with pytest.raises(SweepFileError, match="only a consume shape's queue"):
        parse_sweep(bad, "bad.toml")
