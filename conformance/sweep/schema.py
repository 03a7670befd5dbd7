"""The Parquet row of a sweep: one per case (SW-ROW).

The schema is fixed here, column by column, so every part file of a sweep folder has
the same columns and types whichever engine or run wrote it. pyarrow is imported
lazily (only the sweep commands need it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

#: SW-ROW: verdicts of a case. The first four come from a checker; the others are
#: failures (SW-FAILURE).
VERDICTS = ("holds", "deadlock", "violation", "incomplete", "timeout", "error", "crashed")
FAILED = ("timeout", "error", "crashed")

_COLUMNS: list[tuple[str, str]] = [
    # identity and graph (SW-CASE-ID)
    ("case_id", "string"),
    ("sweep", "string"),
    ("family", "string"),
    ("kind", "string"),
    ("graph_id", "string"),
    ("graph_digest", "string"),
    ("graph_params", "string"),
    ("instance", "int32"),
    ("graph_seed", "int64"),
    # features (SW-FEATURES)
    ("nodes", "int32"),
    ("edges", "int32"),
    ("sources", "int32"),
    ("sinks", "int32"),
    ("cycles", "int32"),
    ("has_cycle", "bool"),
    ("largest_scc", "int32"),
    ("max_fan_out", "int32"),
    ("max_fan_in", "int32"),
    ("depth", "int32"),
    ("mirror_edges", "int32"),
    ("stalled", "int32"),
    ("crashable", "int32"),
    # settings (SW-CREDITS, SW-CASE)
    ("credit_initial", "int32"),
    ("credit_more_after", "int32"),
    ("credit_label", "string"),
    ("edge_credits", "string"),
    ("variant", "string"),
    # fault settings (SW-FAULTS)
    ("may_crash", "string"),
    ("on_peer_down", "string"),
    ("max_crashes", "int32"),
    ("publishes", "int32"),
    ("checker", "string"),
    ("max_states", "int64"),
    ("max_seconds", "float64"),
    # verdicts (SW-ROW)
    ("verdict", "string"),
    ("complete", "bool"),
    ("deadlock", "bool"),
    ("deadlock_kind", "string"),
    ("blocked_forever", "list<string>"),
    ("conservation", "bool"),
    ("violated", "list<string>"),
    ("states", "int64"),
    ("transitions", "int64"),
    ("seconds", "float64"),
    ("shortest_counterexample", "int32"),
    ("exit_code", "int32"),
    ("error", "string"),
    ("trace_path", "string"),
    # what the verdict claims (SW-AMQP-CLAIM; null for checkers that state none)
    ("claim_scope", "string"),
    ("claim", "string"),
    # the run that wrote the row (SW-RESUME)
    ("run_id", "string"),
    ("attempt", "int32"),
    ("host", "string"),
    ("finished_at", "timestamp"),
]

COLUMN_NAMES = tuple(name for name, _ in _COLUMNS)
#: SW-ROW: columns added after sweep folders existed; a part file written before them
#: lacks them and is still a sweep part file (read as null, SW-RESUME)
ADDED_COLUMNS = frozenset({"claim_scope", "claim"})


def _type(pa: Any, name: str) -> Any:
    if name == "list<string>":
        return pa.list_(pa.string())
    if name == "bool":
        return pa.bool_()
    if name == "timestamp":
        return pa.timestamp("ms", tz="UTC")
    return getattr(pa, name)()


def schema() -> pa.Schema:
    """SW-ROW: the Arrow schema of every part file."""
    import pyarrow as pa

    return pa.schema([pa.field(name, _type(pa, kind)) for name, kind in _COLUMNS])


#: SW-ROW-TYPES: the range of each integer column type.
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def column_kind(name: str) -> str:
    """The declared type of column ``name`` (``int32``, ``string``, …)."""
    return dict(_COLUMNS)[name]


def unstorable(row: dict[str, Any]) -> list[str]:
    """SW-ROW-TYPES: the columns of ``row`` whose value its column type cannot hold."""
    plain: dict[str, type | tuple[type, ...]] = {
        "float64": (int, float),
        "string": str,
        "bool": bool,
    }
    bad = []
    for name, kind in _COLUMNS:
        value = row.get(name)
        if value is None:
            continue
        if kind in INT_RANGES:
            lo, hi = INT_RANGES[kind]
            ok = not isinstance(value, bool) and isinstance(value, int) and lo <= value <= hi
        else:
            ok = kind not in plain or isinstance(value, plain[kind])
        if not ok:
            bad.append(name)
    return bad


def storable(row: dict[str, Any]) -> dict[str, Any]:
    """SW-ROW-TYPES: ``row``, or, when a column cannot hold its value, the same case as an
    ``error`` row with those columns emptied, so that one bad value never costs the other
    rows of its part (SW-COMMIT)."""
    bad = unstorable(row)
    if not bad:
        return row
    fixed = {**row, **{name: None for name in bad}}
    fixed["verdict"] = "error"
    fixed["error"] = "not storable: " + ", ".join(
        f"{name}={str(row.get(name))[:40]} does not fit {column_kind(name)}" for name in bad
    )
    return fixed


def rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows (dicts with every column) as an Arrow table with :func:`schema`; a row a
    column cannot hold is stored as an ``error`` row (:func:`storable`, SW-ROW-TYPES)."""
    import datetime

    import pyarrow as pa

    out = []
    for row in rows:
        missing = [c for c in COLUMN_NAMES if c not in row]
        if missing:
            raise ValueError(f"row {row.get('case_id')!r} lacks {missing}")
        row = dict(row)
        if isinstance(row["finished_at"], (int, float)):
            row["finished_at"] = datetime.datetime.fromtimestamp(
                row["finished_at"], tz=datetime.UTC
            )
        out.append(storable({c: row[c] for c in COLUMN_NAMES}))
    return pa.Table.from_pylist(out, schema=schema())


def check_part_file(path: Any) -> str | None:
    """IN-READ for a sweep folder: why the Parquet file at ``path`` is not a sweep part
    file (unreadable, or lacking a column of :func:`schema` or holding it with another
    type), in one line; ``None`` if it is one."""
    import pyarrow.parquet as pq

    try:
        found = pq.read_schema(path)
    except Exception as exc:  # pyarrow raises assorted errors for foreign files
        return f"{path}: not a readable Parquet file ({(str(exc).splitlines() or ['?'])[0]})"
    expected = schema()
    for field in expected:
        index = found.get_field_index(field.name)
        if index < 0:
            if field.name in ADDED_COLUMNS:
                continue
            return f"{path}: not a sweep part file (no column {field.name!r})"
        if not found.field(index).type.equals(field.type):
            return (
                f"{path}: not a sweep part file (column {field.name!r} is "
                f"{found.field(index).type}, expected {field.type})"
            )
    return None
