"""Judge validity against the human reference labels, per judge setting and per pattern.

Error is the positive class; the reference label is `frame.reference`'s (ties excluded and
counted). The point estimates are scikit-learn's (`classify.confusion_stats`). The intervals are
a seeded percentile bootstrap over whole items (`intervals.resample_tables`): all responses of an
item move together, since they share the query and contract and so are not independent. Each
resample's statistics come from `classify.confusion_arrays` (numpy; see there why).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from copal_tui.metrics.classify import METRICS, Confusion, confusion_arrays, confusion_stats
from copal_tui.metrics.document_base import Interval, Metric
from copal_tui.metrics.document_copal import ConfusionMatrix, JudgeValidity, ValidityBlock
from copal_tui.metrics.intervals import percentile_intervals, resample_tables
from copal_tui.metrics.rates import PATTERN_ORDER, UNMAPPED, ordered
from copal_tui.metrics.reference import CELLS, CLASSES, CONVENTION

# The metric libraries load at import, not at first use: the report imports this module while
# its reads run in threads (copal_tui.services.report), so most of the second sklearn.metrics
# and scipy.stats take to load overlaps them (the TUI's start never imports it:
# tests/test_hygiene.py). Their 100,000+ objects live as long as the process, so the collector
# pauses while they load (it would walk them again and again: a quarter of a second), then they
# are frozen (gc.freeze), so no later collection, nor the last one at exit (0.3 s), walks them.
# Whatever else is alive now is frozen too: in the TUI an unreachable cycle among those objects
# would not be collected later, a one-off bounded cost.
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
# The human kappa ceiling of a validity entry when the caller measured none.
UNMEASURED = Metric.of(None, "no human agreement measured")


def bootstrap_cis(blocks: Sequence[tuple[np.ndarray | None, int]]) -> list[dict[str, Interval]]:
    """Percentile intervals of every statistic from resampled (tp, fp, tn, fn) totals, for
    each (totals, number of items) block; all blocks' percentiles in one vectorised call."""
    arrays = {k: confusion_arrays(totals) for k, (totals, n_items) in enumerate(blocks)
              if totals is not None and n_items}
    rows = [arrays[k][metric] for k in arrays for metric in METRICS]
    intervals = iter(percentile_intervals(np.array(rows)) if rows else [])
    out = []
    for k, (totals, _n_items) in enumerate(blocks):
        if k not in arrays:  # no resample was drawn
            why = "bootstrap disabled (--bootstrap 0)" if totals is None else "no labelled items"
            out.append(dict.fromkeys(METRICS, Interval(low=None, high=None, reason=why)))
            continue
        ci: dict[str, Interval] = {}
        for metric in METRICS:
            low, high, defined = next(intervals)
            ci[metric] = Interval.of(
                low, high, f"{metric} is undefined in every resample" if defined == 0 else None,
                resamples_defined=defined)
        out.append(ci)
    return out


def confusion_matrix(c: Confusion) -> ConfusionMatrix:
    """The counts as scikit-learn's matrix, with its orientation stated (rows: reference)."""
    return ConfusionMatrix(
        convention=CONVENTION, rows="human reference", columns="judge", positive="error",
        labels=list(CLASSES), cells=[list(r) for r in CELLS],
        matrix=[[int(getattr(c, name)) for name in row] for row in CELLS])


def _stats(counts: np.ndarray) -> tuple[int, Confusion]:
    """Items with a labelled response, and the statistics of their summed counts."""
    tp, fp, tn, fn = (int(v) for v in counts.sum(axis=0))
    return int(np.count_nonzero(counts.sum(axis=1))), confusion_stats(tp, fp, tn, fn)


def _block(n_items: int, c: Confusion, ci: dict[str, Interval]) -> ValidityBlock:
    return ValidityBlock(
        n_items=n_items, n=c.n, tp=c.tp, fp=c.fp, tn=c.tn, fn=c.fn,
        confusion_matrix=confusion_matrix(c),
        **{name: Metric.of(*c.stats[name], interval=ci[name]) for name in METRICS})


def judge_validity(cells: Sequence[ValidityCell], n_boot: int, seed: int,
                   ceiling: Metric = UNMEASURED) -> list[JudgeValidity]:
    """One entry per judge setting with the pooled statistics and a `by_pattern` breakdown;
    `ceiling` is the human agreement (mean pairwise kappa) each entry is set beside.

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
    stats = [[_stats(counts), *(_stats(counts[mask]) for mask in masks)]
             for counts, _names, masks in tables]
    cis = iter(bootstrap_cis([(t, part[0]) for tot, parts in zip(totals, stats, strict=True)
                              for t, part in zip(tot, parts, strict=True)]))
    out = []
    for (judge, mode), (_counts, names, _masks), parts in zip(keys, tables, stats, strict=True):
        pooled = _block(*parts[0], next(cis))
        by_pattern = {name: _block(*part, next(cis))
                      for name, part in zip(names, parts[1:], strict=True)}
        out.append(JudgeValidity(judge=judge, mode=mode, **dict(pooled), by_pattern=by_pattern,
                                 human_kappa_ceiling=ceiling))
    return out
