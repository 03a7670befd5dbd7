"""The version matrix as data (MATRIX-ROWS, MATRIX-CHANGES): rows are distinct findings
keyed by their stable signature (FIND-SIGNATURE), columns are releases in version order
(MATRIX-ORDER); each row says in which releases the finding stands, the release that
introduced it and the one that fixed it. No I/O, no rendering (OUT-TYPED-RESULT)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.differential.findings import Finding, FindingClass

#: MATRIX-EXIT: conform's exit codes of a release that ran (conformant, a finding, a
#: property the model agrees with); any other is a release that did not run.
RAN_CODES = frozenset({0, 1, 12})


@dataclass(frozen=True)
class ReleaseResult:
    """One release's conform run (MATRIX-COMMAND): its findings, conform's exit code,
    wall seconds, the release's version, and why it did not run (``failure``)."""

    version: str
    findings: tuple[Finding, ...]
    exit_code: int
    seconds: float
    failure: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ran(self) -> bool:
        """MATRIX-EXIT: the run reached a verdict (findings are data, not failure)."""
        return self.failure is None and self.exit_code in RAN_CODES


#: MATRIX-COMMAND: the family-neutral hook: ``adapter@version`` → its conform run.
ConformRelease = Callable[[str], ReleaseResult]


@dataclass(frozen=True)
class MatrixRow:
    """One distinct finding across the releases (MATRIX-ROWS, MATRIX-CHANGES)."""

    signature: str
    rule: str
    klass: FindingClass
    description: str
    present: dict[str, bool]  #: release → stands there (releases that ran only)
    introduced: str | None  #: the first release it stands in
    fixed: str | None  #: the first release after the last one it stands in, if any

    def differs(self, a: str, b: str) -> bool:
        """Whether it stands in exactly one of releases ``a`` and ``b``."""
        return self.present.get(a, False) != self.present.get(b, False)


@dataclass(frozen=True)
class VersionMatrix:
    """MATRIX-ROWS: the adapter, its releases in version order, one row per distinct
    finding, the run of each release, and the conform settings every run shared."""

    adapter: str
    releases: tuple[str, ...]
    rows: tuple[MatrixRow, ...]
    runs: dict[str, ReleaseResult]
    settings: dict[str, Any]

    @property
    def not_run(self) -> tuple[str, ...]:
        """MATRIX-EXIT: the releases whose conform did not reach a verdict."""
        return tuple(r for r in self.releases if not self.runs[r].ran)

    @property
    def exit_code(self) -> int:
        """MATRIX-EXIT: 0 when every release ran, 4 when some did not."""
        return 4 if self.not_run else 0

    def differing(self, a: str, b: str) -> tuple[MatrixRow, ...]:
        """The rows standing in exactly one of two releases."""
        return tuple(r for r in self.rows if r.differs(a, b))

    def shared(self, a: str, b: str) -> tuple[MatrixRow, ...]:
        """The rows standing in both releases."""
        return tuple(r for r in self.rows if r.present.get(a) and r.present.get(b))

    def to_json(self) -> dict[str, Any]:
        """MATRIX-FORMATS: the JSON document (``--format json``)."""
        return {
            "adapter": self.adapter,
            "releases": list(self.releases),
            "settings": dict(self.settings),
            "exit_code": self.exit_code,
            "runs": {
                v: {
                    "version": r.version,
                    "exit_code": r.exit_code,
                    "seconds": round(r.seconds, 3),
                    "ran": r.ran,
                    "failure": r.failure,
                    "findings": [f.signature for f in r.findings],
                    "settings": dict(r.settings),
                }
                for v, r in self.runs.items()
            },
            "rows": [
                {
                    "signature": row.signature,
                    "rule": row.rule,
                    "class": row.klass,
                    "description": row.description,
                    "present": dict(row.present),
                    "introduced": row.introduced,
                    "fixed": row.fixed,
                }
                for row in self.rows
            ],
        }


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """MATRIX-ORDER: release order: numeric parts as numbers, others as text
    (``2.0.8`` < ``3.0.4`` < ``3.0.10``)."""
    parts = re.findall(r"\d+|[A-Za-z]+", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def description(finding: Finding) -> str:
    """MATRIX-ROWS: a row's short description: its witness, the ops comma-separated (the
    sizes and the rest of the run are in its trace and the ``--json`` document)."""
    return ", ".join(finding.witness) or "(no ops)"


def build_matrix(
    adapter: str,
    results: Sequence[ReleaseResult],
    settings: Mapping[str, Any],
) -> VersionMatrix:
    """MATRIX-ROWS, MATRIX-CHANGES: the table of ``results`` (one per release, any
    order). A finding stands in a release whose run lists its signature; a release that
    did not run has no entry in any row, and "introduced"/"fixed" skip it."""
    ordered = sorted(results, key=lambda r: version_key(r.version))
    releases = tuple(r.version for r in ordered)
    if len(set(releases)) != len(releases):
        raise ValueError(f"a release is given twice: {', '.join(releases)}")
    first: dict[str, Finding] = {}
    for r in ordered:
        for f in r.findings:
            first.setdefault(f.signature, f)
    rows = []
    ran = [r for r in ordered if r.ran]
    for sig, f in first.items():
        present = {r.version: any(g.signature == sig for g in r.findings) for r in ran}
        stands = [v for v, p in present.items() if p]
        introduced = stands[0] if stands else None
        fixed = None
        if stands:
            later = [v for v in present if version_key(v) > version_key(stands[-1])]
            fixed = later[0] if later else None
        rows.append(MatrixRow(sig, f.rule.id, f.klass, description(f), present, introduced, fixed))
    rows.sort(key=lambda row: (version_key(row.introduced or ""), row.signature))
    return VersionMatrix(
        adapter, releases, tuple(rows), {r.version: r for r in ordered}, dict(settings)
    )
