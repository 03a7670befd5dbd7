"""Writing a sweep's report folder (SW-REPORT): the tables and plots of
:mod:`.report`, drawn by :mod:`.plots` and laid out as one page by :mod:`.page`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from creditflow.conformance.sweep.page import render_html
from creditflow.conformance.sweep.plots import draw_plots
from creditflow.conformance.sweep.report import ReportData, json_default, sweep_report


@dataclass
class WrittenReport:
    data: ReportData
    html: Path
    json: Path
    plots: list[Path]


def write_report(sweep_dir: str | Path, out: str | Path | None = None, top: int = 20
                 ) -> WrittenReport:
    """SW-REPORT: the tables, the plots (PNG and SVG), ``index.html`` and ``report.json``
    under ``out`` (default ``sweep_dir/report``)."""
    data = sweep_report(sweep_dir, top)
    out = Path(out) if out is not None else Path(sweep_dir) / "report"
    out.mkdir(parents=True, exist_ok=True)
    plots = draw_plots(data, out / "plots")
    html_path = out / "index.html"
    html_path.write_text(render_html(data, plots, out), encoding="utf-8")
    json_path = out / "report.json"
    body = asdict(data)
    body.pop("case_times")
    json_path.write_text(json.dumps(body, indent=1, default=json_default) + "\n",
                         encoding="utf-8")
    return WrittenReport(data, html_path, json_path, plots)
