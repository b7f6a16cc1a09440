"""Binary agreement statistics from confusion counts, with error as the positive class.

The point estimates (of judge validity, and the pairwise kappas of `agreement` and `pas`) are
scikit-learn's: the 2x2 table from `confusion_matrix` with labels=[0, 1] (rows the reference,
human label or second rater; columns the predicting side, judge or first rater: [[tn, fp],
[fn, tp]]), precision, recall and F1 from `precision_recall_fscore_support` (binary,
zero_division=NaN, so an undefined value stays undefined), kappa from `cohen_kappa_score`;
agreement, FN rate and FP rate are ratios of cells of that table.

The callers hold counts, not label vectors, so scikit-learn gets the four (reference, predicted)
outcomes, each weighted by its count: sample weights are summed as repeated rows are counted, so
this equals passing the n per-response labels. scikit-learn is imported inside the functions for
start-up speed: `rates` imports this module, and the TUI's dashboard widgets and the exporters
import `rates` for its taxonomy orders alone; they must not pay the second or more that
sklearn.metrics (with scipy) takes to import. The report loads it early, in `validity`.

`confusion_arrays` gives the same statistics as numpy formulas over many tables at once, for the
item bootstrap, where three scikit-learn calls per resample (milliseconds each, mostly input
checking) would take a minute; the tests check it against scikit-learn, NaN cases included.

Cohen's kappa is NaN with a reason, never 0, when either rater used only one class: chance
agreement then equals observed agreement by construction, so kappa says nothing about agreement
and scikit-learn is not asked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

METRICS = ("agreement", "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa")


def ratio(num: float, den: float, reason: str) -> tuple[float, str | None]:
    """num / den, or (nan, reason) when the denominator is 0."""
    return (math.nan, reason) if den == 0 else (num / den, None)


@dataclass(frozen=True)
class Confusion:
    """The 2x2 counts and every statistic of `METRICS` as (value, reason): NaN with the reason
    where the statistic is undefined, None as the reason where it is defined."""

    tp: int
    fp: int
    tn: int
    fn: int
    stats: dict[str, tuple[float, str | None]]

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn


_CLASS_NAME = {True: "error", False: "no error"}  # by "is the positive class"
# The four outcomes as (reference, predicted) label pairs, in the order tp, fp, tn, fn.
_REFERENCE = np.array([1, 0, 0, 1])
_PREDICTED = np.array([1, 1, 0, 0])
LABELS = [0, 1]


def _defined(value: float, reason: str) -> tuple[float, str | None]:
    """A library's value, or (nan, reason) when the library left it undefined (NaN)."""
    value = float(value)
    return (math.nan, reason) if math.isnan(value) else (value, None)


def kappa(tp: int, fp: int, tn: int, fn: int, first: str = "judge",
          second: str = "reference") -> tuple[float, str | None]:
    """Cohen's kappa of two raters from their 2x2 table; `first` gives the predicting side."""
    n = tp + fp + tn + fn
    if n == 0:
        return math.nan, f"no responses rated by both the {first} and the {second}"
    first_pos, second_pos = tp + fp, tp + fn
    if first_pos in (0, n) and second_pos in (0, n):
        return math.nan, (f"the {first} and the {second} each used one class only "
                          f"({_CLASS_NAME[first_pos == n]} / {_CLASS_NAME[second_pos == n]}); "
                          "kappa is undefined")
    if second_pos in (0, n):
        return math.nan, (f"the {second} labels are all '{_CLASS_NAME[second_pos == n]}' "
                          "(one class only); kappa is undefined")
    if first_pos in (0, n):
        return math.nan, (f"the {first} gave '{_CLASS_NAME[first_pos == n]}' every time "
                          "(one class only); kappa is undefined")
    from sklearn.metrics import cohen_kappa_score

    value = cohen_kappa_score(_REFERENCE, _PREDICTED, labels=LABELS,
                              sample_weight=np.array([tp, fp, tn, fn], dtype=np.int64))
    return _defined(value, "Cohen's kappa is undefined on these labels")


def confusion_stats(tp: int, fp: int, tn: int, fn: int) -> Confusion:
    """Counts and every agreement statistic, each with its reason when undefined."""
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    weights = np.array([tp, fp, tn, fn], dtype=np.int64)
    if weights.any():
        # Rows are the reference, columns the judge; labels=[0, 1] fixes the layout.
        (tn, fp), (fn, tp) = confusion_matrix(_REFERENCE, _PREDICTED, labels=LABELS,
                                              sample_weight=weights).tolist()
        precision, recall, f1, _support = precision_recall_fscore_support(
            _REFERENCE, _PREDICTED, average="binary", pos_label=1, sample_weight=weights,
            zero_division=np.nan)
    else:  # no responses: every figure is undefined (scikit-learn refuses all-zero weights)
        precision = recall = f1 = math.nan
    n = tp + fp + tn + fn
    return Confusion(tp, fp, tn, fn, {
        "agreement": ratio(tp + tn, n, "no responses with a reference label"),
        "precision": _defined(precision, "the judge flagged no errors (tp + fp = 0)"),
        "recall": _defined(recall, "the reference has no errors (tp + fn = 0)"),
        "f1": _defined(f1, "neither the judge nor the reference found an error"),
        "fn_rate": ratio(fn, tp + fn, "the reference has no errors (tp + fn = 0)"),
        "fp_rate": ratio(fp, fp + tn, "the reference has no correct responses (fp + tn = 0)"),
        "kappa": kappa(tp, fp, tn, fn),
    })


def confusion_arrays(totals: np.ndarray) -> dict[str, np.ndarray]:
    """The statistics of `confusion_stats` for many tables at once (rows of tp, fp, tn, fn),
    as numpy formulas (see the module docstring for why), NaN wherever those are NaN."""
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
