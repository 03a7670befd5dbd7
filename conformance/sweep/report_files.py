"""Writing a sweep's report folder (SW-REPORT): the tables and plots of
:mod:`.report`, drawn by :mod:`.plots` and laid out as one page by :mod:`.page`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from creditflow.conformance.outputs import OutputError, write_atomic
from creditflow.conformance.sweep.page import render_html
from creditflow.conformance.sweep.plots import draw_plots
from creditflow.conformance.sweep.report import ReportData, json_default, sweep_report


@dataclass
class WrittenReport:
    data: ReportData
    html: Path | None
    json: Path | None
    plots: list[Path]
    body: str = ""  #: the JSON report's text (also when it could not be written)
    errors: list[OutputError] = field(default_factory=list)  #: OUT-FAILURE


def write_report(
    sweep_dir: str | Path, out: str | Path | None = None, top: int = 20
) -> WrittenReport:
    """SW-REPORT: the tables, the plots (PNG and SVG), ``index.html`` and ``report.json``
    under ``out`` (default ``sweep_dir/report``), each through the one output writer
    (OUT-ATOMIC); a file that cannot be written is listed in ``errors`` (OUT-FAILURE)
    and the others are still written."""
    data = sweep_report(sweep_dir, top)
    out = Path(out) if out is not None else Path(sweep_dir) / "report"
    errors: list[OutputError] = []
    try:
        plots = draw_plots(data, out / "plots")
    except OutputError as exc:
        errors.append(exc)
        plots = []
    body = asdict(data)
    body.pop("case_times")
    text = json.dumps(body, indent=1, default=json_default) + "\n"
    written: list[Path | None] = []
    for path, content in (
        (out / "index.html", lambda: render_html(data, plots, out)),
        (out / "report.json", lambda: text),
    ):
        try:
            written.append(write_atomic(path, content()))
        except OutputError as exc:
            errors.append(exc)
            written.append(None)
    return WrittenReport(data, written[0], written[1], plots, text, errors)
