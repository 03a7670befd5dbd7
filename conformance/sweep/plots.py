"""The report's plots, each as PNG and SVG (SW-REPORT), drawn with matplotlib (Agg)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from creditflow.conformance.outputs import write_atomic
from creditflow.conformance.sweep.report import FEATURES, ReportData

VERDICT_COLOURS = {
    "holds": "#4c9a2a",
    "deadlock": "#c0392b",
    "violation": "#8e44ad",
    "incomplete": "#f39c12",
    "timeout": "#7f8c8d",
    "error": "#34495e",
    "crashed": "#000000",
}
#: at most this many families get a credit heat map
MAX_HEATMAPS = 12


def _save(fig: Any, directory: Path, stem: str) -> list[Path]:
    import matplotlib.pyplot as plt

    paths = []
    try:
        for suffix in ("png", "svg"):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=suffix, dpi=100)
            paths.append(write_atomic(directory / f"{stem}.{suffix}", buffer.getvalue()))
    finally:
        plt.close(fig)
    return paths


def _by_feature(data: ReportData, directory: Path) -> list[Path]:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    features = [f for f in FEATURES if data.by_feature.get(f)]
    cols = 4
    rows = (len(features) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, feature in zip(axes.flat, features, strict=False):
        variants = sorted({r["variant"] for r in data.by_feature[feature]})
        for variant in variants:
            pts = [
                r
                for r in data.by_feature[feature]
                if r["variant"] == variant and r["deadlock_rate"] is not None
            ]
            ax.plot(
                [r["value"] for r in pts],
                [r["deadlock_rate"] for r in pts],
                marker="o",
                label=variant,
            )
        ax.set_title(feature)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("deadlock rate")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(features) :]:
        ax.axis("off")
    if features:
        axes.flat[0].legend(fontsize="small")
    fig.suptitle("Deadlock rate (of decided cases) by topology and workload feature")
    fig.tight_layout()
    return _save(fig, directory, "deadlock-rate-by-feature")


def _verdicts_by_family(data: ReportData, directory: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    families = [f["family"] for f in data.families]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(families) + 2), 3.5))
    bottom = [0] * len(families)
    for verdict, key in (
        ("holds", "holds"),
        ("deadlock", "deadlock"),
        ("violation", "violation"),
        ("incomplete", "incomplete"),
        ("timeout", "failed"),
    ):
        heights = [f[key] for f in data.families]
        label = "timeout/error/crash" if key == "failed" else verdict
        ax.bar(families, heights, bottom=bottom, label=label, color=VERDICT_COLOURS[verdict])
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_ylabel("cases")
    ax.set_title("Verdicts by family")
    ax.legend(fontsize="small")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return _save(fig, directory, "verdicts-by-family")


def _credit_heatmaps(data: ReportData, directory: Path) -> list[Path]:
    import matplotlib.pyplot as plt
    import numpy as np

    paths: list[Path] = []
    families = sorted({r["family"] for r in data.credit_grid})[:MAX_HEATMAPS]
    for family in families:
        rows = [r for r in data.credit_grid if r["family"] == family]
        panels = sorted({(r["variant"], r["publishes"], r["checker"]) for r in rows})
        initials = sorted({r["initial"] for r in rows})
        mores = sorted({r["more_after"] for r in rows})
        fig, axes = plt.subplots(
            1,
            len(panels),
            figsize=(max(3.2, 0.5 * len(initials) + 2) * len(panels), 3.2),
            squeeze=False,
        )
        for ax, (variant, publishes, checker) in zip(axes.flat, panels, strict=True):
            grid = np.full((len(mores), len(initials)), np.nan)
            for r in rows:
                panel = (r["variant"], r["publishes"], r["checker"])
                if panel == (variant, publishes, checker) and r["deadlock_rate"] is not None:
                    grid[mores.index(r["more_after"]), initials.index(r["initial"])] = r[
                        "deadlock_rate"
                    ]
            ax.imshow(grid, origin="lower", cmap="RdYlGn_r", vmin=0, vmax=1, aspect="auto")
            ax.set_xticks(range(len(initials)), [str(i) for i in initials])
            ax.set_yticks(range(len(mores)), [str(m) for m in mores])
            ax.set_xlabel("InitialCredit")
            ax.set_ylabel("MoreCreditAfter")
            title = f"{variant}, {publishes} publishes"
            ax.set_title(title if checker == "explore" else f"{title} ({checker})", fontsize=9)
            for (y, x), value in np.ndenumerate(grid):
                if not np.isnan(value):
                    ax.text(x, y, f"{value:.0%}", ha="center", va="center", fontsize=7)
        fig.suptitle(f"{family}: deadlock rate by uniform credit spec")
        fig.tight_layout()
        paths += _save(fig, directory, f"credit-{family}")
    return paths


def _case_times(data: ReportData, directory: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for verdict in VERDICT_COLOURS:
        pts = [
            r for r in data.case_times if r["verdict"] == verdict and r["states"] and r["seconds"]
        ]
        if pts:
            ax.scatter(
                [r["states"] for r in pts],
                [r["seconds"] for r in pts],
                s=8,
                alpha=0.6,
                label=verdict,
                color=VERDICT_COLOURS[verdict],
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("states explored")
    ax.set_ylabel("seconds per case")
    ax.set_title("Cost per case")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, directory, "case-cost")


def draw_plots(data: ReportData, directory: Path) -> list[Path]:
    """SW-REPORT: every plot of the report, PNG and SVG, under ``directory``."""
    import matplotlib

    matplotlib.use("Agg")
    paths = _verdicts_by_family(data, directory)
    paths += _by_feature(data, directory)
    paths += _credit_heatmaps(data, directory)
    paths += _case_times(data, directory)
    return paths
