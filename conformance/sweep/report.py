"""Summarising a sweep folder with DuckDB over its Parquet rows (SW-REPORT).

:func:`sweep_report` returns a :class:`ReportData` (plain rows, nothing printed);
:func:`write_report` adds the plots (:mod:`.plots`), the HTML page (:mod:`.page`) and a
JSON copy of the data under ``OUT/report/``.

Definitions (SW-REPORT):

* only the latest attempt of each case counts (SW-RESUME);
* the *deadlock rate* of a group is ``deadlocks / decided``, where *decided* cases are
  those whose deadlock question was answered (``deadlock`` not null); undecided ones
  (budget, timeout, error, crash) are counted beside it, never as safe;
* the *minimal safe credit* of a family, per variant, workload, checker and
  ``MoreCreditAfter`` M, is the least ``InitialCredit`` I such that every case with the
  uniform spec ``{I, M}`` *holds* (complete, nothing violated); ``safe_above`` says
  whether every larger I tried holds as well (safety need not be monotone in I).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creditflow.conformance.sweep.schema import check_part_file


class ReportError(ValueError):
    """A folder without sweep rows; the message is one line naming it."""


#: SW-REPORT: the topology and workload features the deadlock rate is broken down by.
FEATURES = (
    "nodes",
    "edges",
    "cycles",
    "max_fan_out",
    "max_fan_in",
    "depth",
    "mirror_edges",
    "sources",
    "crashable",
    "credit_initial",
    "publishes",
)

_LATEST = """
CREATE OR REPLACE TEMP VIEW latest AS
SELECT * FROM read_parquet({files}, union_by_name = true)
QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY attempt DESC, finished_at DESC) = 1
"""

#: SW-REPORT, SW-FAULTS: a case where something may crash is reported under its variant
#: extended with its fault setting, so that no table or plot mixes fault settings.
_CASES = """
CREATE OR REPLACE TEMP VIEW cases AS
SELECT * REPLACE (
    CASE WHEN crashable > 0 AND coalesce(max_crashes, 1) > 0
         THEN variant || ', may_crash=' || may_crash || ', on_peer_down=' || on_peer_down
              || coalesce(', max_crashes=' || max_crashes, '')
         ELSE variant END AS variant)
FROM latest
"""


@dataclass
class ReportData:
    sweep_dir: str
    cases: int
    verdicts: dict[str, int]
    sweeps: list[str]
    total_seconds: float
    total_states: int
    families: list[dict[str, Any]]
    by_feature: dict[str, list[dict[str, Any]]]
    min_safe: list[dict[str, Any]]
    credit_grid: list[dict[str, Any]]
    slowest: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    shortest: list[dict[str, Any]]
    case_times: list[dict[str, Any]] = field(default_factory=list)
    #: SW-AMQP-CLAIM: cases per family, claim scope and verdict
    claims: list[dict[str, Any]] = field(default_factory=list)


def _rows(con: Any, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def sweep_report(sweep_dir: str | Path, top: int = 20) -> ReportData:
    """SW-REPORT: the report's tables for the rows under ``sweep_dir/results``."""
    import duckdb

    sweep_dir = Path(sweep_dir)
    files = sorted(str(p) for p in (sweep_dir / "results").glob("*.parquet"))
    if not files:
        raise ReportError(f"{sweep_dir}: no sweep results (expected {sweep_dir}/results/*.parquet)")
    for path in files:  # IN-READ: a foreign Parquet file is one line, not a SQL error
        problem = check_part_file(path)
        if problem is not None:
            raise ReportError(f"{problem}; move it out of {sweep_dir}/results")
    con = duckdb.connect()
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con.execute(_LATEST.format(files=f"[{quoted}]"))
    con.execute(_CASES)
    total = _rows(
        con,
        """
        SELECT count(*) AS n, coalesce(sum(seconds), 0) AS seconds,
               coalesce(sum(states), 0) AS states, list(DISTINCT sweep) AS sweeps
        FROM cases""",
    )[0]
    verdicts = {
        r["verdict"]: r["n"]
        for r in _rows(
            con, "SELECT verdict, count(*) AS n FROM cases GROUP BY verdict ORDER BY n DESC"
        )
    }
    families = _rows(
        con,
        """
        SELECT family, any_value(kind) AS kind, count(DISTINCT graph_id) AS graphs,
               count(*) AS cases,
               count(*) FILTER (verdict = 'holds') AS holds,
               count(*) FILTER (verdict = 'deadlock') AS deadlock,
               count(*) FILTER (verdict = 'violation') AS violation,
               count(*) FILTER (verdict = 'incomplete') AS incomplete,
               count(*) FILTER (verdict IN ('timeout', 'error', 'crashed')) AS failed,
               count(deadlock) AS decided,
               count(*) FILTER (deadlock) AS deadlocks,
               round(count(*) FILTER (deadlock) / nullif(count(deadlock), 0), 4)
                   AS deadlock_rate,
               round(sum(seconds), 2) AS seconds
        FROM cases GROUP BY family ORDER BY family""",
    )
    by_feature = {}
    for feature in FEATURES:
        by_feature[feature] = _rows(
            con,
            f"""
            SELECT {feature} AS value, variant, count(*) AS cases,
                   count(deadlock) AS decided,
                   count(*) FILTER (deadlock) AS deadlocks,
                   round(count(*) FILTER (deadlock) / nullif(count(deadlock), 0), 4)
                       AS deadlock_rate
            FROM cases WHERE {feature} IS NOT NULL
            GROUP BY {feature}, variant ORDER BY {feature}, variant""",
        )
    credit_grid = _rows(
        con,
        """
        SELECT family, checker, variant, publishes, credit_more_after AS more_after,
               credit_initial AS initial, count(*) AS cases,
               bool_and(verdict = 'holds') AS safe,
               count(deadlock) AS decided,
               count(*) FILTER (deadlock) AS deadlocks,
               round(count(*) FILTER (deadlock) / nullif(count(deadlock), 0), 4)
                   AS deadlock_rate
        FROM cases WHERE edge_credits IS NULL AND credit_initial IS NOT NULL
        GROUP BY ALL ORDER BY family, checker, variant, publishes, more_after, initial""",
    )
    slowest = _rows(
        con,
        """
        SELECT graph_id, credit_label, variant, publishes, checker, verdict, states,
               round(seconds, 3) AS seconds, trace_path, case_id
        FROM cases WHERE seconds IS NOT NULL
        ORDER BY seconds DESC LIMIT ?""",
        [top],
    )
    failures = _rows(
        con,
        """
        SELECT verdict, graph_id, credit_label, variant, publishes, checker,
               round(seconds, 3) AS seconds, error, case_id
        FROM cases WHERE verdict IN ('timeout', 'error', 'crashed')
        ORDER BY verdict, seconds DESC NULLS LAST LIMIT ?""",
        [max(top, 50)],
    )
    shortest = _rows(
        con,
        """
        SELECT family, variant, arg_min(graph_id, shortest_counterexample) AS graph_id,
               arg_min(credit_label, shortest_counterexample) AS credit_label,
               arg_min(publishes, shortest_counterexample) AS publishes,
               min(shortest_counterexample) AS length,
               arg_min(trace_path, shortest_counterexample) AS trace_path,
               arg_min(verdict, shortest_counterexample) AS verdict
        FROM cases WHERE trace_path IS NOT NULL AND shortest_counterexample IS NOT NULL
        GROUP BY family, variant ORDER BY family, variant""",
    )
    case_times = _rows(
        con,
        """
        SELECT verdict, seconds, states FROM cases WHERE seconds IS NOT NULL""",
    )
    columns = {r["column_name"] for r in _rows(con, "DESCRIBE cases")}
    claims = (  # SW-AMQP-CLAIM; a folder of part files older than the column has none
        _rows(
            con,
            """
            SELECT family, claim_scope, verdict, count(*) AS cases
            FROM cases WHERE claim_scope IS NOT NULL
            GROUP BY ALL ORDER BY family, claim_scope, verdict""",
        )
        if "claim_scope" in columns
        else []
    )
    return ReportData(
        sweep_dir=str(sweep_dir),
        cases=int(total["n"]),
        verdicts=verdicts,
        sweeps=sorted(s for s in total["sweeps"] if s),
        total_seconds=float(total["seconds"]),
        total_states=int(total["states"]),
        families=families,
        by_feature=by_feature,
        min_safe=minimal_safe_credit(credit_grid),
        credit_grid=credit_grid,
        slowest=slowest,
        failures=failures,
        shortest=shortest,
        case_times=case_times,
        claims=claims,
    )


def minimal_safe_credit(credit_grid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SW-REPORT: per (family, checker, variant, publishes, M), the least I whose cases
    all hold, and whether every larger I tried holds too."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in credit_grid:
        key = (row["family"], row["checker"], row["variant"], row["publishes"], row["more_after"])
        groups.setdefault(key, []).append(row)
    out = []
    for (family, checker, variant, publishes, more_after), rows in groups.items():
        rows = sorted(rows, key=lambda r: r["initial"])
        safe = [r["initial"] for r in rows if r["safe"]]
        least = min(safe) if safe else None
        out.append(
            {
                "family": family,
                "checker": checker,
                "variant": variant,
                "publishes": publishes,
                "more_after": more_after,
                "min_safe_initial": least,
                "safe_above": least is not None
                and all(r["safe"] for r in rows if r["initial"] >= least),
                "tried": [r["initial"] for r in rows],
                "cases": sum(r["cases"] for r in rows),
            }
        )
    return out


def json_default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
