"""Confidence intervals: the Wilson score interval and the seeded item-level bootstrap, both
hand-written and both checked in the tests against an independent computation.

Wilson: scipy's `binomtest(k, n).proportion_ci(method="wilson")` is the same interval (the tests
compare them), but a call takes milliseconds (it also computes the p-value): half a second over
the 250 rates of the 100,000-response benchmark store. And `rates`, which uses it, is imported by
the TUI's widgets and the exporters, which must not load scipy. The normal quantile is the
standard library's (`statistics.NormalDist`, equal to `scipy.stats.norm.ppf`: checked in tests).

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


def wilson(errors: int, n: int) -> tuple[float, float]:
    """Wilson 95% score interval for `errors` out of `n`; (nan, nan) when n is 0."""
    if n <= 0:
        return math.nan, math.nan
    p = errors / n
    z2 = Z95 * Z95
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = Z95 / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def half_width(n: int, rate: float) -> float:
    """Half the width of the Wilson 95% interval of a rate measured on `n` subjects (what a
    sample of that size can tell apart); NaN when n is 0."""
    low, high = wilson(round(rate * n), n)
    return (high - low) / 2


def resample_tables(tables: Sequence[tuple[np.ndarray, Sequence[np.ndarray]]], n_boot: int,
                    seed: int) -> list[list[np.ndarray]]:
    """Bootstrap totals that resample whole items, for several (counts, masks) tables.

    `counts` has one row per item (for example tp, fp, tn, fn of its responses). Each resample
    draws as many items as there are, with replacement, and sums their rows, so responses of
    one item travel together. Per table: the (n_boot, columns) totals over all items, then, from
    the same draws, those of each subset of items given as a boolean mask (a subgroup's share of
    each resample varies as it would in a new sample; one draw serves every subgroup).

    Each table is resampled exactly as if alone with `seed`: the draws, most of the cost, depend
    only on the seed and the number of items, so tables of one size (the judge settings of a
    report usually share their labelled items) are drawn once and summed in one product."""
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
            whole = totals[:, start:start + part.shape[1]]  # all items, then each mask's
            out[k] = np.split(whole, 1 + len(tables[k][1]), axis=1)
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


def percentile_intervals(values: np.ndarray) -> list[tuple[float, float, int]]:
    """Per row of a 2-D array of resampled values: the central 95% of those that are defined,
    (low, high, defined count). Undefined (NaN) resamples are left out and counted, so a caller
    can say how many there were; with none defined the interval is (nan, nan). The rows without
    an undefined value (nearly all) take one vectorised call: a call per row cost a tenth of
    the report."""
    tail = (1 - CONFIDENCE) / 2 * 100
    out: list[tuple[float, float, int]] = [(math.nan, math.nan, 0)] * len(values)
    finite = np.isfinite(values)
    whole = finite.all(axis=1)
    if whole.any() and values.shape[1]:
        lows, highs = np.percentile(values[whole], [tail, 100 - tail], axis=1)
        for i, low, high in zip(np.flatnonzero(whole).tolist(), lows.tolist(), highs.tolist(),
                                strict=True):
            out[i] = (low, high, values.shape[1])
    for i in np.flatnonzero(~whole & finite.any(axis=1)).tolist():
        low, high = np.percentile(values[i][finite[i]], [tail, 100 - tail])
        out[i] = (float(low), float(high), int(finite[i].sum()))
    return out
