"""Binary agreement statistics from confusion counts, with error as the positive class.

Everything is computed from the four counts (tp, fp, tn, fn) so that one code path serves the
point estimate and, vectorised over numpy arrays, the 1000 bootstrap resamples. The values are
the ones scikit-learn gives (confusion_matrix, precision/recall/F1 with zero_division=nan,
cohen_kappa_score); the tests check that on random data. scikit-learn itself is not imported
here: importing sklearn.metrics costs seconds, and the report has a one-second budget.

Cohen's kappa is reported as NaN with a reason, never 0, when either rater used only one class:
then chance agreement equals observed agreement by construction and kappa is 0 (or 0/0)
whatever the raters did, which says nothing about agreement.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

METRICS = ("agreement", "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa")


def ratio(num: float, den: float, reason: str) -> tuple[float, str | None]:
    """num / den, or (nan, reason) when the denominator is 0."""
    if den == 0:
        return math.nan, reason
    return num / den, None


def put(out: dict[str, Any], key: str, value: tuple[float, str | None]) -> None:
    """Store a value and, when it is undefined, its reason as the sibling `<key>_reason`."""
    out[key] = value[0]
    if value[1] is not None:
        out[f"{key}_reason"] = value[1]


def _class_name(positive: bool) -> str:
    return "error" if positive else "no error"


def kappa(tp: int, fp: int, tn: int, fn: int, first: str = "judge",
          second: str = "reference") -> tuple[float, str | None]:
    """Cohen's kappa of two raters from their 2x2 table; `first` gives the predicted side."""
    n = tp + fp + tn + fn
    if n == 0:
        return math.nan, f"no responses rated by both the {first} and the {second}"
    first_pos, second_pos = tp + fp, tp + fn
    if first_pos in (0, n) and second_pos in (0, n):
        return math.nan, (f"the {first} and the {second} each used one class only "
                          f"({_class_name(first_pos == n)} / {_class_name(second_pos == n)}); "
                          "kappa is undefined")
    if second_pos in (0, n):
        return math.nan, (f"the {second} labels are all '{_class_name(second_pos == n)}' "
                          "(one class only); kappa is undefined")
    if first_pos in (0, n):
        return math.nan, (f"the {first} gave '{_class_name(first_pos == n)}' every time "
                          "(one class only); kappa is undefined")
    po = (tp + tn) / n
    pe = (first_pos * second_pos + (n - first_pos) * (n - second_pos)) / (n * n)
    return (po - pe) / (1 - pe), None


def confusion_stats(tp: int, fp: int, tn: int, fn: int) -> dict[str, Any]:
    """Counts and every agreement statistic, with `<metric>_reason` next to each NaN."""
    n = tp + fp + tn + fn
    out: dict[str, Any] = {"n": n, "tp": tp, "fp": fp, "tn": tn, "fn": fn}
    put(out, "agreement", ratio(tp + tn, n, "no responses with a reference label"))
    put(out, "precision", ratio(tp, tp + fp, "the judge flagged no errors (tp + fp = 0)"))
    put(out, "recall", ratio(tp, tp + fn, "the reference has no errors (tp + fn = 0)"))
    put(out, "f1", ratio(2 * tp, 2 * tp + fp + fn,
                         "neither the judge nor the reference found an error"))
    put(out, "fn_rate", ratio(fn, tp + fn, "the reference has no errors (tp + fn = 0)"))
    put(out, "fp_rate", ratio(fp, fp + tn, "the reference has no correct responses "
                                            "(fp + tn = 0)"))
    put(out, "kappa", kappa(tp, fp, tn, fn))
    return out


def confusion_arrays(totals: np.ndarray) -> dict[str, np.ndarray]:
    """The statistics of `confusion_stats` for many tables at once (rows of tp, fp, tn, fn).

    NaN wherever the scalar version is NaN; used on bootstrap resamples.
    """
    t = np.asarray(totals, dtype=np.float64)
    tp, fp, tn, fn = t[:, 0], t[:, 1], t[:, 2], t[:, 3]
    n = tp + fp + tn + fn

    def div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)

    first_pos, second_pos = tp + fp, tp + fn
    one_class = (first_pos == 0) | (first_pos == n) | (second_pos == 0) | (second_pos == n)
    po = div(tp + tn, n)
    pe = div(first_pos * second_pos + (n - first_pos) * (n - second_pos), n * n)
    kap = np.where(one_class, np.nan, div(po - pe, 1 - pe))
    return {
        "agreement": po,
        "precision": div(tp, tp + fp),
        "recall": div(tp, tp + fn),
        "f1": div(2 * tp, 2 * tp + fp + fn),
        "fn_rate": div(fn, tp + fn),
        "fp_rate": div(fp, fp + tn),
        "kappa": kap,
    }
