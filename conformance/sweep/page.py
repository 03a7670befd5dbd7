"""The report as one HTML page a person can open (SW-REPORT): tables, the plots (SVG)
and links to every counterexample trace. Self-contained apart from the plot files
beside it; every value is escaped."""

from __future__ import annotations

import html
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from creditflow.conformance.sweep.report import ReportData

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
.deadlock { color: #c0392b; font-weight: bold; } .holds { color: #4c9a2a; }
.incomplete { color: #b9770e; } .timeout, .error, .crashed { color: #555; font-weight: bold; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.note { color: #555; font-size: 0.9em; }
code { background: #f4f4f4; padding: 0 3px; }
"""


def _e(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return html.escape(str(value))


def _cells(row: dict[str, Any], *columns: str) -> list[str]:
    """The escaped values of ``row``'s ``columns``, in order: cells of a table row."""
    return [_e(row[column]) for column in columns]


def _link(path: str | None, base: Path, report_dir: Path, text: str = "trace") -> str:
    if not path:
        return ""
    href = os.path.relpath(base / path, report_dir)
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], left: int = 1) -> str:
    head = "".join(
        f'<th class="l">{html.escape(h)}</th>' if i < left else f"<th>{html.escape(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="l">{c}</td>' if i < left else f"<td>{c}</td>" for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _verdict(v: str) -> str:
    return f'<span class="{html.escape(v)}">{html.escape(v)}</span>'


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def render_html(data: ReportData, plots: list[Path], report_dir: Path) -> str:
    """SW-REPORT: the page; ``plots`` are shown by their SVG, linked relative to
    ``report_dir`` (where the page is written)."""
    base = Path(data.sweep_dir)
    svgs = {p.stem: p for p in plots if p.suffix == ".svg"}

    def img(stem: str, alt: str) -> str:
        path = svgs.get(stem)
        if path is None:
            return ""
        return f'<img src="{html.escape(os.path.relpath(path, report_dir))}" alt="{alt}">'

    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>creditflow sweep report: {_e(', '.join(data.sweeps))}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>creditflow sweep report: {_e(', '.join(data.sweeps) or base.name)}</h1>",
        f"<p class='note'>{_e(data.cases)} cases from <code>{_e(base)}</code>; "
        f"{_e(data.total_states)} states explored in {data.total_seconds:,.1f} s of case time. "
        f"Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} by "
        "<code>creditflow report</code>. Only the latest attempt of each case counts.</p>",
        "<h2>Verdicts</h2>",
        _table(["verdict", "cases"], ([_verdict(v), _e(n)] for v, n in data.verdicts.items())),
        img("verdicts-by-family", "verdicts by family"),
        "<h2>Families</h2>",
        "<p class='note'>Deadlock rate = deadlocks / cases whose deadlock question was "
        "decided. Undecided cases (state budget, timeout, error, crash) are never counted "
        "as safe.</p>",
        _table(
            [
                "family",
                "kind",
                "graphs",
                "cases",
                "holds",
                "deadlock",
                "violation",
                "incomplete",
                "failed",
                "deadlock rate",
                "case seconds",
            ],
            (
                [
                    *_cells(f, "family", "kind", "graphs", "cases", "holds", "deadlock"),
                    *_cells(f, "violation", "incomplete", "failed"),
                    _rate(f["deadlock_rate"]),
                    _e(f["seconds"]),
                ]
                for f in data.families
            ),
            left=2,
        ),
        "<h2>Deadlock rate by topology feature</h2>",
        img("deadlock-rate-by-feature", "deadlock rate by feature"),
    ]
    for feature, rows in data.by_feature.items():
        parts.append(f"<details><summary>{_e(feature)}</summary>")
        parts.append(
            _table(
                [feature, "variant", "cases", "decided", "deadlocks", "rate"],
                (
                    [
                        *_cells(r, "value", "variant", "cases", "decided", "deadlocks"),
                        _rate(r["deadlock_rate"]),
                    ]
                    for r in rows
                ),
                left=2,
            )
        )
        parts.append("</details>")
    parts += [
        "<h2>Minimal safe credit per family</h2>",
        "<p class='note'>The least InitialCredit I for which every case with the uniform "
        "spec {I, M} holds (complete, nothing violated), per variant, workload and M. "
        "“safe above” tells whether every larger I that was tried holds too.</p>",
        _table(
            [
                "family",
                "checker",
                "variant",
                "publishes",
                "M",
                "min safe I",
                "safe above",
                "I tried",
                "cases",
            ],
            (
                [
                    *_cells(r, "family", "checker", "variant", "publishes", "more_after"),
                    _e(r["min_safe_initial"])
                    if r["min_safe_initial"] is not None
                    else "<span class='deadlock'>none</span>",
                    "yes" if r["safe_above"] else ("" if r["min_safe_initial"] is None else "no"),
                    _e(", ".join(str(i) for i in r["tried"])),
                    _e(r["cases"]),
                ]
                for r in data.min_safe
            ),
            left=3,
        ),
    ]
    parts += [
        img(p.stem, p.stem) for p in plots if p.suffix == ".svg" and p.stem.startswith("credit-")
    ]
    parts += [
        "<h2>Shortest counterexamples</h2>",
        _table(
            ["family", "variant", "graph", "credit", "publishes", "verdict", "length", "trace"],
            (
                [
                    *_cells(r, "family", "variant", "graph_id", "credit_label", "publishes"),
                    _verdict(r["verdict"]),
                    _e(r["length"]),
                    _link(r["trace_path"], base, report_dir),
                ]
                for r in data.shortest
            ),
            left=3,
        )
        if data.shortest
        else "<p>No counterexample.</p>",
        "<h2>What the verdicts claim</h2>" if data.claims else "",
        _table(  # SW-AMQP-CLAIM
            ["family", "claim", "verdict", "cases"],
            (
                [_e(r["family"]), _e(r["claim_scope"]), _verdict(r["verdict"]), _e(r["cases"])]
                for r in data.claims
            ),
            left=3,
        )
        if data.claims
        else "",
        "<h2>Slowest cases</h2>",
        _table(
            [
                "graph",
                "credit",
                "variant",
                "publishes",
                "checker",
                "verdict",
                "states",
                "seconds",
                "trace",
            ],
            (
                [
                    *_cells(r, "graph_id", "credit_label", "variant", "publishes", "checker"),
                    _verdict(r["verdict"]),
                    *_cells(r, "states", "seconds"),
                    _link(r["trace_path"], base, report_dir),
                ]
                for r in data.slowest
            ),
            left=3,
        ),
        img("case-cost", "cost per case"),
        "<h2>Failures</h2>",
        _table(
            ["verdict", "graph", "credit", "variant", "publishes", "seconds", "error"],
            (
                [
                    _verdict(r["verdict"]),
                    *_cells(r, "graph_id", "credit_label", "variant", "publishes", "seconds"),
                    _e(r["error"]),
                ]
                for r in data.failures
            ),
            left=5,
        )
        if data.failures
        else "<p>No timeouts, errors or crashes.</p>",
        "<p class='note'>Rules: spec/sweeps.md (SW-REPORT, SW-ROW, SW-FEATURES). "
        "Replay any trace with <code>creditflow replay-corpus</code>.</p>",
        "</body></html>\n",
    ]
    return "\n".join(p for p in parts if p)
