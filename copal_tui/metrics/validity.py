"""Judge validity against the human reference labels, per judge setting and per pattern.

Error is the positive class. The reference label is the adjudication when there is one, else the
annotators' majority (ties excluded and counted; see `frame.reference`). Intervals are a seeded
percentile bootstrap that resamples whole items: all responses of an item move together, since
they share the query and contract and so are not independent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from copal_tui.metrics.classify import METRICS, confusion_arrays, confusion_stats
from copal_tui.metrics.intervals import percentile_interval, resample_groups
from copal_tui.metrics.rates import PATTERN_ORDER, UNMAPPED, ordered

ValidityCell = tuple[str, str, str, str | None, int, int, int, int]


def _undefined_ci(reason: str) -> dict[str, dict[str, Any]]:
    return {m: {"low": math.nan, "high": math.nan, "low_reason": reason, "high_reason": reason,
                "resamples_defined": 0} for m in METRICS}


def bootstrap_ci(totals: np.ndarray | None, n_items: int) -> dict[str, dict[str, Any]]:
    """Percentile intervals of every statistic from resampled (tp, fp, tn, fn) totals."""
    if totals is None:
        return _undefined_ci("bootstrap disabled (--bootstrap 0)")
    if n_items == 0:
        return _undefined_ci("no labelled items")
    arrays = confusion_arrays(totals)
    out: dict[str, dict[str, Any]] = {}
    for metric in METRICS:
        low, high, defined = percentile_interval(arrays[metric])
        entry: dict[str, Any] = {"low": low, "high": high, "resamples_defined": defined}
        if defined == 0:
            entry["low_reason"] = entry["high_reason"] = (
                f"{metric} is undefined in every resample")
        out[metric] = entry
    return out


def _block(counts: np.ndarray, totals: np.ndarray | None) -> dict[str, Any]:
    tp, fp, tn, fn = (int(v) for v in counts.sum(axis=0)) if len(counts) else (0, 0, 0, 0)
    stats = confusion_stats(tp, fp, tn, fn)
    n_items = int(np.count_nonzero(counts.sum(axis=1))) if len(counts) else 0
    return {"n_items": n_items, **stats, "ci": bootstrap_ci(totals, n_items)}


def judge_validity(cells: Sequence[ValidityCell], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """One entry per judge setting with the pooled statistics and a `by_pattern` breakdown.

    The per-pattern intervals come from the same item resamples as the pooled one (seeded per
    setting with `seed`), restricted to the pattern's items.
    """
    settings: dict[tuple[str, str], list[ValidityCell]] = defaultdict(list)
    for cell in cells:
        settings[(cell[0], cell[1])].append(cell)
    out = []
    for (judge, mode) in sorted(settings):
        rows = settings[(judge, mode)]  # already in item order
        counts = np.array([r[4:8] for r in rows], dtype=np.int64).reshape(-1, 4)
        patterns = [r[3] or UNMAPPED for r in rows]
        names = ordered(patterns, PATTERN_ORDER)
        masks = [np.array([p == name for p in patterns], dtype=bool) for name in names]
        totals = resample_groups(counts, masks, n_boot, seed) if n_boot > 0 else None
        entry: dict[str, Any] = {"judge": judge, "mode": mode,
                                 **_block(counts, None if totals is None else totals[0])}
        entry["by_pattern"] = {
            name: _block(counts[mask], None if totals is None else totals[k + 1])
            for k, (name, mask) in enumerate(zip(names, masks, strict=True))}
        out.append(entry)
    return out
