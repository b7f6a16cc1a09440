"""Rank statistics for judge-family sensitivity: Kendall's tau-b, Spearman's rho, rank shifts.

The vectors are tiny (one value per target model), so plain numpy is exact and fast; the values
equal scipy.stats.kendalltau (tau-b) and scipy.stats.spearmanr, which the tests check with ties.
scipy.stats is not imported here because importing it costs seconds per report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties sharing the mean of their positions (scipy's 'average')."""
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x), dtype=np.float64)
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def competition_ranks(values: Sequence[float]) -> list[int]:
    """1-based ranks where ties share the best position ('1224'), lowest value first."""
    return [1 + sum(1 for other in values if other < v) for v in values]


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> tuple[float, str | None]:
    n = len(x)
    if n < 2:
        return math.nan, "fewer than two target models to rank"
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    iu = np.triu_indices(n, k=1)
    dx = np.sign(a[:, None] - a[None, :])[iu]
    dy = np.sign(b[:, None] - b[None, :])[iu]
    n0 = len(dx)
    tied_x = int(np.sum(dx == 0))
    tied_y = int(np.sum(dy == 0))
    denom = math.sqrt((n0 - tied_x) * (n0 - tied_y))
    if denom == 0:
        return math.nan, "one of the judges gives every model the same error rate"
    return float(np.sum(dx * dy)) / denom, None


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> tuple[float, str | None]:
    if len(x) < 2:
        return math.nan, "fewer than two target models to rank"
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float(np.sum(rx * rx)) * float(np.sum(ry * ry)))
    if denom == 0:
        return math.nan, "one of the judges gives every model the same error rate"
    return float(np.sum(rx * ry)) / denom, None
