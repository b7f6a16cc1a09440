"""Judge validity against the human reference labels, per judge setting and per pattern.

Error is the positive class. The reference label is the adjudication when there is one, else the
annotators' majority (ties excluded and counted; see `frame.reference`).

The point estimates come from scikit-learn (`classify.confusion_stats`): the 2x2 table from
`confusion_matrix` (rows: reference, columns: judge), precision, recall and F1 from
`precision_recall_fscore_support`, kappa from `cohen_kappa_score`. The intervals are a seeded
percentile bootstrap that resamples whole items (hand-written: no library resamples clusters):
all responses of an item move together, since they share the query and contract and so are not
independent. Each resample's statistics come from `classify.confusion_arrays`, the same formulas
vectorised in numpy, since a scikit-learn call per resample would take a minute per report; the
tests check them against scikit-learn on random data.
"""

from __future__ import annotations

import gc
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from copal_tui.metrics.classify import METRICS, confusion_arrays, confusion_stats
from copal_tui.metrics.intervals import percentile_intervals, resample_tables
from copal_tui.metrics.rates import PATTERN_ORDER, UNMAPPED, ordered

# The metric libraries load here, at import, not at first use: the report imports this module
# while its reads run in threads (copal_tui.metrics.report), so much of the second that
# sklearn.metrics and scipy.stats take to import overlaps them. Only the report imports this
# module, never the TUI's start (tests/test_hygiene.py). They create over 100,000 objects that
# live as long as the process (a few hundred are garbage): collecting while they load only
# walks them again and again (a quarter of a second), so the collector pauses; then they are
# frozen (gc.freeze), which keeps every later collection, and the interpreter's last one at exit
# (0.3 s), from walking them. Whatever else is alive now is frozen too: in the TUI an
# unreachable cycle among those objects would not be collected later, a one-off bounded cost.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    import scipy.stats  # noqa: F401
    import sklearn.metrics  # noqa: F401
finally:
    if _COLLECTING:
        gc.enable()
gc.freeze()

ValidityCell = tuple[str, str, str, str | None, int, int, int, int]


def _undefined_ci(reason: str) -> dict[str, dict[str, Any]]:
    return {m: {"low": math.nan, "high": math.nan, "low_reason": reason, "high_reason": reason,
                "resamples_defined": 0} for m in METRICS}


def bootstrap_cis(blocks: Sequence[tuple[np.ndarray | None, int]]) -> list[dict[str, Any]]:
    """Percentile intervals of every statistic from resampled (tp, fp, tn, fn) totals, for
    each (totals, number of items) block; all blocks' percentiles in one vectorised call."""
    arrays = {k: confusion_arrays(totals) for k, (totals, n_items) in enumerate(blocks)
              if totals is not None and n_items}
    rows = [arrays[k][metric] for k in arrays for metric in METRICS]
    intervals = iter(percentile_intervals(np.array(rows)) if rows else [])
    out = []
    for k, (totals, _n_items) in enumerate(blocks):
        if k not in arrays:
            out.append(_undefined_ci("bootstrap disabled (--bootstrap 0)" if totals is None
                                     else "no labelled items"))
            continue
        ci: dict[str, dict[str, Any]] = {}
        for metric in METRICS:
            low, high, defined = next(intervals)
            entry: dict[str, Any] = {"low": low, "high": high, "resamples_defined": defined}
            if defined == 0:
                entry["low_reason"] = entry["high_reason"] = (
                    f"{metric} is undefined in every resample")
            ci[metric] = entry
        out.append(ci)
    return out


def _block(counts: np.ndarray) -> dict[str, Any]:
    tp, fp, tn, fn = (int(v) for v in counts.sum(axis=0)) if len(counts) else (0, 0, 0, 0)
    n_items = int(np.count_nonzero(counts.sum(axis=1))) if len(counts) else 0
    return {"n_items": n_items, **confusion_stats(tp, fp, tn, fn)}


def judge_validity(cells: Sequence[ValidityCell], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """One entry per judge setting with the pooled statistics and a `by_pattern` breakdown.

    The per-pattern intervals come from the same item resamples as the pooled one (seeded per
    setting with `seed`), restricted to the pattern's items.
    """
    settings: dict[tuple[str, str], list[ValidityCell]] = defaultdict(list)
    for cell in cells:
        settings[(cell[0], cell[1])].append(cell)
    keys = sorted(settings)
    tables = []
    for key in keys:
        rows = settings[key]  # already in item order
        counts = np.array([r[4:8] for r in rows], dtype=np.int64).reshape(-1, 4)
        patterns = [r[3] or UNMAPPED for r in rows]
        names = ordered(patterns, PATTERN_ORDER)
        masks = [np.array([p == name for p in patterns], dtype=bool) for name in names]
        tables.append((counts, names, masks))
    totals: list[list[np.ndarray | None]] = [
        list(t) for t in resample_tables([(c, m) for c, _n, m in tables], n_boot, seed)
    ] if n_boot > 0 else [[None] * (1 + len(m)) for _c, _n, m in tables]
    stats = [[_block(counts), *(_block(counts[mask]) for mask in masks)]
             for counts, _names, masks in tables]
    cis = iter(bootstrap_cis([(t, part["n_items"]) for tot, parts in zip(totals, stats, strict=True)
                              for t, part in zip(tot, parts, strict=True)]))
    out = []
    for (judge, mode), (_counts, names, _masks), parts in zip(keys, tables, stats, strict=True):
        entry: dict[str, Any] = {"judge": judge, "mode": mode, **parts[0], "ci": next(cis)}
        entry["by_pattern"] = {name: {**part, "ci": next(cis)}
                               for name, part in zip(names, parts[1:], strict=True)}
        out.append(entry)
    return out
