"""Figures for `--plots DIR` (PNG and SVG): the model x pattern error heatmap, the facet atlas
as stacked bars, the paired contrast, and one confusion matrix per judge setting (rows: human
reference, columns: judge, error positive, as on the dashboard and in the tables).

matplotlib is an optional extra (`pip install 'copal[plots]'`), imported only here and only
when figures are asked for, with the Agg backend (no display needed over SSH). Figures are
byte-stable for the same report: no creation date in the metadata and a fixed SVG id salt.
Figures are rendered in memory (`render_plots`): `copal export --plots` stages them with the
rest of its files.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any

from copal_tui.export.safe_paths import OutputGuard, Staging
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_copal import JudgeValidity
from copal_tui.metrics.rates import PATTERN_ORDER
from copal_tui.metrics.reference import CELLS, CLASSES, CONVENTION

Figures = dict[str, bytes]  # file name -> content


class PlotsUnavailable(Exception):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    # Imported here, not at the top: matplotlib is an optional extra, and slow to load (start-up
    # speed of every command that imports this module without drawing).
    try:
        import matplotlib
    except ImportError as exc:
        raise PlotsUnavailable(
            "--plots needs matplotlib, an optional extra: pip install 'copal[plots]'") from exc
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "copal"
    matplotlib.rcParams["svg.fonttype"] = "path"
    import matplotlib.pyplot as plt

    return plt


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def _save(plt: Any, fig: Any, stem: str) -> Figures:
    files = {}
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=meta, dpi=120, bbox_inches="tight")
        files[f"{stem}.{ext}"] = buf.getvalue()
    plt.close(fig)
    return files


def _nan(v: Any) -> float:
    return math.nan if v is None else float(v)


def _zero(v: Any) -> float:
    """A bar's height: an undefined figure draws no bar."""
    return 0.0 if v is None or math.isnan(v) else float(v)


def heatmap(plt: Any, doc: ReportDocument) -> Figures:
    rows = doc.error_rates
    patterns = PATTERN_ORDER
    data = [[_nan(r.by_pattern[p].error_rate.value if p in r.by_pattern else None)
             for p in patterns] for r in rows]
    fig, ax = plt.subplots(figsize=(2 + 1.6 * len(patterns), 1 + 0.45 * max(1, len(rows))))
    if rows:
        im = ax.imshow(data, vmin=0, vmax=1, cmap="Reds", aspect="auto")
        fig.colorbar(im, ax=ax, label="error rate")
        for i, line in enumerate(data):
            for j, v in enumerate(line):
                ax.text(j, i, "n/a" if math.isnan(v) else f"{v:.2f}", ha="center",
                        va="center", fontsize=8)
    ax.set_xticks(range(len(patterns)), [p.replace("_", "\n") for p in patterns], fontsize=8)
    ax.set_yticks(range(len(rows)), [r.model for r in rows], fontsize=8)
    ax.set_title("Error rate by model and relation pattern")
    return _save(plt, fig, "error_heatmap")


def atlas(plt: Any, doc: ReportDocument) -> Figures:
    facets = list(doc.facet_atlas)
    parts = (("under_enforcement_share", "under-enforcement (F present or gate/route missed)",
              "#c0392b"),
             ("over_enforcement_share", "over-enforcement (content withheld)", "#2e86c1"),
             ("mixed_share", "mixed", "#8e44ad"))
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(facets) + 2), 4))
    bottom = [0.0] * len(facets)
    for key, label, colour in parts:
        vals = [_zero(getattr(doc.facet_atlas[f], key).value) for f in facets]
        ax.bar(range(len(facets)), vals, bottom=bottom, label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xticks(range(len(facets)), facets, rotation=45, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of judgments")
    ax.set_title("Facet atlas: error direction per target facet")
    ax.legend(fontsize=8, loc="upper left")
    return _save(plt, fig, "facet_atlas")


def contrast(plt: Any, doc: ReportDocument) -> Figures:
    # Models with no paired items have nothing to draw (they are listed as exclusions).
    rows = [r for r in doc.paired_contrast if r.n > 0]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(rows) + 2), 4))
    width = 0.27
    series = (("single_error_rate", "single-policy (projections)", "#7f8c8d"),
              ("composed_error_rate", "composed", "#c0392b"),
              ("composition_induced_rate", "composition-induced", "#f39c12"))
    for k, (key, label, colour) in enumerate(series):
        ax.bar([i + (k - 1) * width for i in range(len(rows))],
               [_zero(getattr(r, key).value) for r in rows], width, label=label, color=colour)
    ax.set_xticks(range(len(rows)), [r.model for r in rows], rotation=30, ha="right",
                  fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("rate")
    ax.set_title("Paired contrast (items with every projection judged)")
    ax.legend(fontsize=8)
    return _save(plt, fig, "paired_contrast")


def confusion(plt: Any, entry: JudgeValidity) -> Figures:
    """One judge setting's matrix in scikit-learn's layout (copal_tui.metrics.reference), as
    the dashboard and the tables show it: rows the human reference, columns the judge."""
    counts = entry.confusion_matrix.matrix
    fig, ax = plt.subplots(figsize=(3.8, 3.4))
    ax.imshow(counts, cmap="Blues")
    for i in range(2):
        for j in range(2):
            ax.text(j, i, f"{CELLS[i][j]} {counts[i][j]}", ha="center", va="center",
                    fontsize=11)
    ax.set_xticks([0, 1], list(CLASSES))
    ax.set_yticks([0, 1], list(CLASSES))
    ax.set_xlabel("judge")
    ax.set_ylabel("human reference")
    ax.set_title(f"{entry.judge} ({entry.mode})\n{CONVENTION}", fontsize=8)
    return _save(plt, fig, f"confusion_{slug(entry.judge)}_{entry.mode}")


def render_plots(doc: ReportDocument) -> Figures:
    """Every figure, PNG and SVG, by file name."""
    plt = _pyplot()
    files = {**heatmap(plt, doc), **atlas(plt, doc), **contrast(plt, doc)}
    for entry in doc.judge_validity:
        files.update(confusion(plt, entry))
    return files


def write_plots(doc: ReportDocument, out: Path) -> list[Path]:
    """Write every figure into `out` (created if needed); returns the files written. Figures
    already there are replaced (`copal report --plots DIR` refreshes its figures), but never
    anything that is not a regular file."""
    guard = OutputGuard(force=True)
    files = render_plots(doc)
    guard.check_folder(out)
    for name in files:
        guard.check_file(out / name)
    with Staging(guard) as staging:
        for name, data in files.items():
            staging.write(out / name, data)
        return staging.commit()
