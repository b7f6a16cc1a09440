"""Rank statistics for judge-family sensitivity, all from `scipy.stats`: Kendall's tau-b
(`kendalltau`, variant "b"), Spearman's rho (`spearmanr`) and competition ranks (`rankdata`,
method "min").

Where a statistic is undefined (fewer than two models, or one side gives every model the same
error rate, so a rank correlation divides by zero) it is NaN with a reason; scipy is not asked
then, as it would only warn and return NaN without saying why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_TOO_FEW = "fewer than two target models to rank"
_CONSTANT = "one of the judges gives every model the same error rate"


def competition_ranks(values: Sequence[float]) -> list[int]:
    """1-based ranks where ties share the best position ('1224'), lowest value first."""
    # scipy is imported on use, like in the other metric modules; by the time the report ranks
    # anything `validity` has loaded it (see there), so this is a lookup.
    from scipy.stats import rankdata

    return [int(r) for r in rankdata(values, method="min")]


def _undefined(x: Sequence[float], y: Sequence[float]) -> str | None:
    if len(x) < 2:
        return _TOO_FEW
    if len(set(x)) < 2 or len(set(y)) < 2:
        return _CONSTANT
    return None


def _value(value: float, name: str) -> tuple[float, str | None]:
    value = float(value)
    if math.isnan(value):
        return math.nan, f"{name} is undefined on these error rates"
    return value, None


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> tuple[float, str | None]:
    reason = _undefined(x, y)
    if reason is not None:
        return math.nan, reason
    from scipy.stats import kendalltau

    return _value(kendalltau(x, y, variant="b").statistic, "Kendall's tau-b")


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> tuple[float, str | None]:
    reason = _undefined(x, y)
    if reason is not None:
        return math.nan, reason
    from scipy.stats import spearmanr

    return _value(spearmanr(x, y).statistic, "Spearman's rho")
