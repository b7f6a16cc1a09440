"""Confidence intervals: the Wilson score interval and the seeded item-level bootstrap.

The normal quantile comes from the standard library (`statistics.NormalDist`), which gives the
same value as `scipy.stats.norm.ppf` (the tests check it) without the seconds that importing
scipy.stats costs on every report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

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


def resample_items(counts: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap totals that resample whole items.

    `counts` has one row per item and one column per count (for example tp, fp, tn, fn of all
    responses of that item). Each resample draws as many items as there are, with replacement,
    and sums their rows, so responses of one item always travel together. Returns an
    (n_boot, columns) array. Seeded, so the same data always gives the same interval.
    """
    return resample_groups(counts, [], n_boot, seed)[0]


def resample_groups(counts: np.ndarray, masks: Sequence[np.ndarray], n_boot: int,
                    seed: int) -> list[np.ndarray]:
    """`resample_items` totals for all items and, from the same draws, for each subset of
    items given as a boolean mask (a subgroup's share of each resample varies as it would in
    a new sample). One draw serves every subgroup, which keeps per-pattern intervals cheap."""
    counts = np.asarray(counts, dtype=np.int64)
    n_items, width = counts.shape
    out = [np.zeros((n_boot, width), dtype=np.int64) for _ in range(len(masks) + 1)]
    if n_items == 0 or n_boot <= 0:
        return out
    # Integer counts stay exact in float64; float matrices use BLAS for the products.
    stacked = np.concatenate([counts, *(counts * m[:, None] for m in masks)], axis=1)
    stacked = stacked.astype(np.float64)
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // n_items)
    for start in range(0, n_boot, block):
        rows = min(block, n_boot - start)
        idx = rng.integers(0, n_items, size=(rows, n_items))
        offsets = (np.arange(rows, dtype=np.int64) * n_items)[:, None]
        weights = np.bincount((idx + offsets).ravel(), minlength=rows * n_items)
        totals = np.rint(weights.reshape(rows, n_items).astype(np.float64) @ stacked)
        for g in range(len(out)):
            out[g][start:start + rows] = totals[:, g * width:(g + 1) * width]
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
