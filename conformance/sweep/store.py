"""The output folder of a sweep (SW-COMMIT, SW-TRACE, SW-RESUME).

Layout::

    OUT/sweep.toml                    the sweep file of the latest run
    OUT/runs.jsonl                    one line per run (when, where, how many)
    OUT/results/part-RUN-SEQ.parquet  the rows, one file per committed wave (SW-ROW)
    OUT/traces/FAMILY/CASE.itf.json   every counterexample (ITF JSON)

Part files appear atomically (written under a dot-name, then renamed), and a trace is
on disk before the part file that references it. Readers (pyarrow, DuckDB, Spark)
ignore dot-files, so a killed run leaves nothing half-written behind.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.conformance.outputs import safe_stem, write_atomic
from creditflow.conformance.sweep.schema import check_part_file, rows_to_table


class StoreError(ValueError):
    """A sweep folder that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class Written:
    """The latest row of a case already in the folder (SW-RESUME)."""

    verdict: str
    attempt: int


class SweepStore:
    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.results = self.out / "results"
        self.traces = self.out / "traces"

    def part_files(self) -> list[Path]:
        if not self.results.is_dir():
            return []
        return sorted(p for p in self.results.glob("*.parquet") if not p.name.startswith("."))

    def prepare(self, sweep_text: str | None = None) -> None:
        """Create the folder; drop leftovers of an interrupted run (SW-COMMIT)."""
        try:
            self.results.mkdir(parents=True, exist_ok=True)
            self.traces.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{self.out}: cannot create the output folder ({exc.strerror})"
            ) from None
        for leftover in self.results.glob(".part-*.tmp"):
            leftover.unlink(missing_ok=True)
        if sweep_text is not None:
            (self.out / "sweep.toml").write_text(sweep_text, encoding="utf-8")

    def written(self) -> dict[str, Written]:
        """SW-RESUME: the latest attempt of every case with a row."""
        import pyarrow.parquet as pq

        latest: dict[str, Written] = {}
        for path in self.part_files():
            problem = check_part_file(path)
            if problem is not None:
                raise StoreError(f"{problem}; move it away to rerun its cases")
            try:
                table = pq.read_table(path, columns=["case_id", "verdict", "attempt"])
            except Exception as exc:
                raise StoreError(
                    f"{path}: not a readable sweep part file ({str(exc).splitlines()[0]}); "
                    "move it away to rerun its cases"
                ) from None
            for case_id, verdict, attempt in zip(
                table.column("case_id").to_pylist(),
                table.column("verdict").to_pylist(),
                table.column("attempt").to_pylist(),
                strict=True,
            ):
                known = latest.get(case_id)
                if known is None or attempt >= known.attempt:
                    latest[case_id] = Written(verdict, attempt)
        return latest

    def trace_path(self, family: str, case_id: str) -> Path:
        # OUT-NAME: a family named ".." stays inside traces/
        return self.traces / safe_stem(family) / f"{safe_stem(case_id)}.itf.json"

    def write_trace(self, family: str, case_id: str, trace_z: bytes) -> str:
        """SW-TRACE: write a counterexample; returns its path relative to the folder."""
        path = self.trace_path(family, case_id)
        write_atomic(path, zlib.decompress(trace_z) + b"\n")  # OUT-ATOMIC, OUT-SYMLINK
        return str(path.relative_to(self.out))

    def commit(self, rows: list[dict[str, Any]], run_id: str, seq: int) -> Path:
        """SW-COMMIT: write rows as one part file, atomically."""
        import pyarrow.parquet as pq

        path = self.results / f"part-{run_id}-{seq:05d}.parquet"
        tmp = self.results / f".{path.name}.tmp"
        pq.write_table(rows_to_table(rows), tmp, compression="zstd")
        os.replace(tmp, path)
        return path

    def log_run(self, record: dict[str, Any]) -> None:
        with (self.out / "runs.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps({"logged_at": time.time(), **record}, sort_keys=True) + "\n")
