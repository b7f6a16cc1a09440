"""Confidence intervals: the Wilson score interval and the seeded item-level bootstrap, both
hand-written and both checked in the tests against an independent computation.

Wilson: scipy has the same interval (`scipy.stats.binomtest(k, n).proportion_ci(method=
"wilson")`, which the tests compare with this one on random counts), but a call takes
milliseconds (it also computes the test's p-value) and the report of the 100,000-response
benchmark store has about 250 rates: half a second. And `rates`, which uses it, is imported by
the TUI's dashboard widgets and the exporters, which must not pay for importing scipy. The
normal quantile comes from the standard library (`statistics.NormalDist`), equal to
`scipy.stats.norm.ppf` (checked in the tests).

Bootstrap: no library resamples clusters (whole items, all their responses together), nor
shares one draw among the judge settings of a report; the tests check the totals against a
plain loop over the same draws. The percentiles are numpy's (`np.percentile`, linear).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

# At import, not at first use: numpy.random loads in 50 ms and numpy.ma, which np.percentile
# (through np.unique) imports at its first call, in 20 ms; the report imports this module while
# its reads run in threads (copal_tui.services.report), where the loading costs nothing.
import numpy.ma  # noqa: F401
from numpy.random import default_rng

CONFIDENCE = 0.95
Z95 = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)

# Resamples are drawn in blocks so memory stays near a few MB however many items there are.
_BLOCK_CELLS = 2_000_000


def wilson(errors: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for `errors` out of `n`; (nan, nan) when n is 0."""
    if n <= 0:
        return math.nan, math.nan
    p = errors / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def resample_tables(tables: Sequence[tuple[np.ndarray, Sequence[np.ndarray]]], n_boot: int,
                    seed: int) -> list[list[np.ndarray]]:
    """Bootstrap totals that resample whole items, for several (counts, masks) tables.

    `counts` has one row per item and one column per count (for example tp, fp, tn, fn of all
    responses of that item). Each resample draws as many items as there are, with replacement,
    and sums their rows, so responses of one item always travel together. Per table: the
    (n_boot, columns) totals over all items, then, from the same draws, those of each subset of
    items given as a boolean mask (a subgroup's share of each resample varies as it would in a
    new sample; one draw serves every subgroup, which keeps per-pattern intervals cheap).

    Seeded: each table is resampled exactly as if alone with `seed`. The draws depend only on
    the seed and the number of items, so tables of the same size (the judge settings of a
    report usually share their labelled items) are drawn once and their columns summed in one
    product: the draws were most of the bootstrap's cost."""
    out: list[list[np.ndarray]] = [[] for _ in tables]
    by_size: dict[int, list[int]] = {}
    for k, (counts, _masks) in enumerate(tables):
        by_size.setdefault(len(counts), []).append(k)
    for n_items, members in by_size.items():
        parts = []
        for k in members:
            counts, masks = np.asarray(tables[k][0], dtype=np.int64), tables[k][1]
            parts.append(np.concatenate([counts, *(counts * m[:, None] for m in masks)],
                                        axis=1))
        totals = _draw(np.concatenate(parts, axis=1), n_items, n_boot, seed)
        start = 0
        for k, part in zip(members, parts, strict=True):
            width = part.shape[1] // (1 + len(tables[k][1]))
            out[k] = [totals[:, c:c + width] for c in range(start, start + part.shape[1], width)]
            start += part.shape[1]
    return out


def _draw(stacked: np.ndarray, n_items: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, columns) totals of `stacked` (one row per item) over seeded item resamples."""
    out = np.zeros((max(n_boot, 0), stacked.shape[1]), dtype=np.int64)
    if n_items == 0 or n_boot <= 0:
        return out
    # Integer counts stay exact in float64; float matrices use BLAS for the products.
    stacked = stacked.astype(np.float64)
    rng = default_rng(seed)
    block = max(1, _BLOCK_CELLS // n_items)
    for start in range(0, n_boot, block):
        rows = min(block, n_boot - start)
        idx = rng.integers(0, n_items, size=(rows, n_items))
        offsets = (np.arange(rows, dtype=np.int64) * n_items)[:, None]
        weights = np.bincount((idx + offsets).ravel(), minlength=rows * n_items)
        out[start:start + rows] = np.rint(weights.reshape(rows, n_items).astype(np.float64)
                                          @ stacked)
    return out


def percentile_interval(values: np.ndarray) -> tuple[float, float, int]:
    """The central 95% of the resampled values that are defined: (low, high, defined count).

    Resamples where the statistic is undefined (NaN) are left out and counted, so a caller can
    say how many of them there were; with none defined the interval is (nan, nan).
    """
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return math.nan, math.nan, 0
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high), int(finite.size)


def percentile_intervals(values: np.ndarray) -> list[tuple[float, float, int]]:
    """`percentile_interval` of every row of a 2-D array. The rows without an undefined value
    (nearly all) take one vectorised call: a call per row cost a tenth of the report."""
    out: list[tuple[float, float, int]] = [(math.nan, math.nan, 0)] * len(values)
    whole = np.isfinite(values).all(axis=1)
    if whole.any() and values.shape[1]:
        tail = (1 - CONFIDENCE) / 2 * 100
        lows, highs = np.percentile(values[whole], [tail, 100 - tail], axis=1)
        for i, low, high in zip(np.flatnonzero(whole).tolist(), lows.tolist(), highs.tolist(),
                                strict=True):
            out[i] = (low, high, values.shape[1])
    for i in np.flatnonzero(~whole).tolist():
        out[i] = percentile_interval(values[i])
    return out
