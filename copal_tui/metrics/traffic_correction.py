"""The automatic labeller of the real-traffic audit against the human labels, and the whole log's
figures corrected for its measured mistakes. Pure: typed rows in, typed figures out.

Inputs: each labelled pair's human reference label (category, erroneous), the judge's
predictions on those pairs (others given are ignored), and the judge's counts over every pair of
the log it labelled, by (category, erroneous): the whole log need not be read pair by pair. The
labelled pairs the judge also labelled are the sample on which its mistakes are measured:

- agreement on the category: Cohen's kappa over the three categories (scikit-learn's
  `cohen_kappa_score`), the share of exact agreement, and the 3x3 confusion matrix (rows the
  human reference, columns the judge, in CATEGORIES order);
- agreement on the error, erroneous the positive class: precision, recall, F1, kappa, the FN and
  FP rates (`classify.confusion_stats`, as judge validity has them).

Every agreement figure has the percentile interval of the seeded pair bootstrap the judge
validity uses (`intervals.resample_tables`: each pair an item, the sample in pair-id order;
`validity.bootstrap_cis` for the error's statistics).

Corrections of the log's figures (the judge's counts over every pair it labelled):

- the category mix: with M[i][j] = P(judge says i | reference j) estimated on the sample, the
  log's predicted mix p_pred is M p_true, so p_true = M^-1 p_pred, clipped to [0, 1] and
  renormalised. Undefined, with the reason, when a category has no labelled pair (its column of
  M is unknown) or M is singular (the judge's answers cannot tell the categories apart);
- the error rate, overall and per category as the judge assigns them: the Rogan-Gladen
  correction with the judge's sensitivity and specificity on the error (`rates.rogan_gladen`,
  as copal corrects the composed error rates), clipped to [0, 1]. It assumes one sensitivity and
  specificity hold in every category.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from copal_tui.domain.traffic import CATEGORIES
from copal_tui.metrics.classify import METRICS, confusion_stats, ratio
from copal_tui.metrics.document_base import Interval, Metric
from copal_tui.metrics.intervals import percentile_intervals, resample_tables
from copal_tui.metrics.rates import correction_problem, rogan_gladen
from copal_tui.metrics.validity import bootstrap_cis

TOTAL = "total"
CAVEAT = (
    "Corrected for the automatic labeller's mistakes measured on the human-labelled sample: the "
    "category mix by inverting its confusion matrix (p_true = M^-1 p_pred, M[i][j] = P(judge "
    "says i | reference j)), the error rates by the Rogan-Gladen correction with its "
    "sensitivity and specificity on the error. Both assume the sample's mistake rates hold over "
    "the whole log (and, for the error, in every category); both are clipped to [0, 1] and are "
    "unstable when few pairs are labelled.")


@dataclass(frozen=True)
class Label:
    """One pair's label: the human reference or the judge's prediction."""

    pair: str
    category: str
    erroneous: bool


@dataclass(frozen=True)
class CategoryAgreement:
    """The judge against the reference on the category; `confusion[r][j]` counts pairs of
    reference category r the judge put in j (CATEGORIES order)."""

    n: int
    agreement: Metric
    kappa: Metric
    confusion: list[list[int]]


@dataclass(frozen=True)
class ErrorAgreement:
    """The judge against the reference on the error (erroneous is the positive class)."""

    n: int
    tp: int
    fp: int
    tn: int
    fn: int
    agreement: Metric
    precision: Metric
    recall: Metric
    f1: Metric
    kappa: Metric
    fn_rate: Metric
    fp_rate: Metric


@dataclass(frozen=True)
class CorrectedShare:
    category: str
    observed: Metric  # the share of the log's pairs the judge put in the category
    corrected: Metric


@dataclass(frozen=True)
class CorrectedRate:
    category: str  # a category as the judge assigns it, or `total`
    n: int
    errors: int  # pairs the judge called erroneous
    observed: Metric
    corrected: Metric
    clipped: bool


@dataclass(frozen=True)
class TrafficCorrection:
    n_log: int  # pairs the judge labelled
    n_sample: int  # of them, pairs with a human reference label
    category: CategoryAgreement
    error: ErrorAgreement
    sensitivity: Metric
    specificity: Metric
    mix: list[CorrectedShare]
    mix_clipped: bool
    error_rates: list[CorrectedRate]
    caveat: str = CAVEAT


def _index(category: str) -> int:
    if category not in CATEGORIES:
        raise ValueError(f"unknown policy category {category!r} (one of "
                         f"{', '.join(CATEGORIES)})")
    return CATEGORIES.index(category)


def kappas(totals: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each row of flattened k x k confusion counts, for the bootstrap: the
    formula scikit-learn computes, NaN where either rater used one category only (kappa is
    then 0 by construction, and copal leaves it undefined: `classify.kappa`)."""
    t = np.asarray(totals, dtype=np.float64)
    k = math.isqrt(t.shape[1])
    m = t.reshape(-1, k, k)
    n = m.sum(axis=(1, 2))
    rows, cols = m.sum(axis=2), m.sum(axis=1)
    varied = ((rows > 0).sum(axis=1) > 1) & ((cols > 0).sum(axis=1) > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        po = np.trace(m, axis1=1, axis2=2) / n
        pe = (rows * cols).sum(axis=1) / (n * n)
        return np.where(varied, (po - pe) / (1 - pe), np.nan)


def _category_kappa(ref: list[int], pred: list[int]) -> tuple[float, str | None]:
    if not ref:
        return math.nan, "no labelled pair was labelled by the judge"
    for who, labels in (("reference", ref), ("judge", pred)):
        if len(set(labels)) == 1:
            return math.nan, (f"the {who} used one category only ({CATEGORIES[labels[0]]}); "
                              "kappa is undefined")
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score(ref, pred, labels=list(range(len(CATEGORIES)))))
    return (math.nan, "Cohen's kappa is undefined on these labels") if math.isnan(value) \
        else (value, None)


def _interval(row: tuple[float, float, int], what: str) -> Interval:
    low, high, defined = row
    return Interval.of(low, high, f"{what} is undefined in every resample" if defined == 0
                       else None, resamples_defined=defined)


def _undrawn(n_boot: int) -> Interval:
    return Interval(low=None, high=None, reason="bootstrap disabled (--bootstrap 0)"
                    if n_boot <= 0 else "no labelled pairs")


def category_agreement(ref: list[int], pred: list[int], n_boot: int,
                       seed: int) -> CategoryAgreement:
    k = len(CATEGORIES)
    confusion = np.zeros((k, k), dtype=np.int64)
    np.add.at(confusion, (np.array(ref, dtype=np.int64), np.array(pred, dtype=np.int64)), 1)
    n = len(ref)
    agree = int(np.trace(confusion))
    agreement_ci = kappa_ci = _undrawn(n_boot)
    if n and n_boot > 0:
        cells = np.zeros((n, k * k), dtype=np.int64)
        cells[np.arange(n), np.array(ref) * k + np.array(pred)] = 1
        [[totals]] = resample_tables([(cells, [])], n_boot, seed)
        diag = totals[:, [i * k + i for i in range(k)]].sum(axis=1) / n
        rows = percentile_intervals(np.vstack([diag, kappas(totals)]))
        agreement_ci = _interval(rows[0], "agreement")
        kappa_ci = _interval(rows[1], "kappa")
    return CategoryAgreement(
        n=n, agreement=Metric.of(*ratio(agree, n, "no labelled pair was labelled by the "
                                                  "judge"), interval=agreement_ci),
        kappa=Metric.of(*_category_kappa(ref, pred), interval=kappa_ci),
        confusion=confusion.tolist())


def error_agreement(ref: list[bool], pred: list[bool], n_boot: int,
                    seed: int) -> ErrorAgreement:
    # One row per pair: which of (tp, fp, tn, fn) it is.
    cell = [0 if r and p else 1 if p else 2 if not r else 3 for r, p in zip(ref, pred,
                                                                          strict=True)]
    counts = np.zeros((len(cell), 4), dtype=np.int64)
    counts[np.arange(len(cell)), cell] = 1
    tp, fp, tn, fn = (int(v) for v in counts.sum(axis=0))
    c = confusion_stats(tp, fp, tn, fn)
    totals = resample_tables([(counts, [])], n_boot, seed)[0][0] if n_boot > 0 else None
    [ci] = bootstrap_cis([(totals, len(cell))])
    figures = {name: Metric.of(*c.stats[name], interval=ci[name]) for name in METRICS}
    return ErrorAgreement(n=len(cell), tp=tp, fp=fp, tn=tn, fn=fn, **figures)


def corrected_mix(sample: CategoryAgreement, counted: Sequence[int]
                  ) -> tuple[list[CorrectedShare], bool]:
    """The log's category mix (`counted`: the judge's pairs per category, CATEGORIES order)
    corrected by the inverted confusion matrix, and whether a share was clipped."""
    k, n_log = len(CATEGORIES), int(sum(counted))
    p_pred = np.asarray(counted, dtype=np.float64) / max(n_log, 1)
    observed = [Metric.of(*ratio(int(counted[i]), n_log, "the judge labelled no pair"))
                for i in range(k)]
    counts = np.array(sample.confusion, dtype=np.float64)  # rows: reference, columns: judge
    per_reference = counts.sum(axis=1)
    reason: str | None = None
    if not n_log:
        reason = "the judge labelled no pair"
    elif (per_reference == 0).any():
        missing = [CATEGORIES[i] for i in range(k) if per_reference[i] == 0]
        reason = (f"no labelled pair is in category {', '.join(missing)}: the judge's "
                  "confusion matrix cannot be estimated")
    else:
        m = (counts / per_reference[:, None]).T  # M[i][j] = P(judge i | reference j)
        if np.linalg.matrix_rank(m) < k:
            reason = ("the judge's confusion matrix is singular (its answers cannot tell the "
                      "categories apart), so it cannot be inverted")
    if reason is not None:
        return [CorrectedShare(cat, observed[i], Metric.of(None, reason))
                for i, cat in enumerate(CATEGORIES)], False
    raw = np.linalg.solve(m, p_pred)
    clipped = bool((raw < 0).any() or (raw > 1).any())
    kept = np.clip(raw, 0.0, 1.0)
    if kept.sum() <= 0:
        why = "every corrected share is 0 or less"
        return [CorrectedShare(cat, observed[i], Metric.of(None, why))
                for i, cat in enumerate(CATEGORIES)], True
    kept = kept / kept.sum()
    return [CorrectedShare(cat, observed[i], Metric.of(float(kept[i])))
            for i, cat in enumerate(CATEGORIES)], clipped


def corrected_rates(log: Mapping[tuple[str, bool], int], sens: float, spec: float,
                    problem: str | None) -> list[CorrectedRate]:
    out = []
    for category in [*CATEGORIES, TOTAL]:
        chosen = {key: n for key, n in log.items() if category in (TOTAL, key[0])}
        n = sum(chosen.values())
        errors = sum(k for (_c, erroneous), k in chosen.items() if erroneous)
        observed = Metric.of(*ratio(errors, n, f"the judge put no pair in {category}"
                                    if category != TOTAL else "the judge labelled no pair"))
        if observed.value is None:
            corrected, clipped = Metric.of(None, observed.reason), False
        elif problem is not None:
            corrected, clipped = Metric.of(None, problem), False
        else:
            corrected, clipped = rogan_gladen(float(observed.value), sens, spec)
        out.append(CorrectedRate(category=category, n=n, errors=errors, observed=observed,
                                 corrected=corrected, clipped=clipped))
    return out


def traffic_correction(reference: Sequence[Label], predictions: Sequence[Label],
                       log: Mapping[tuple[str, bool], int], *, n_boot: int = 1000,
                       seed: int = 0) -> TrafficCorrection:
    """The judge's agreement with the reference on the sample and the log's corrected figures
    (see the module docstring). A pair given twice keeps its last label."""
    for counted, _erroneous in log:
        _index(counted)  # an unknown category is refused, not left out
    ref = {r.pair: r for r in reference}
    pred = {p.pair: p for p in predictions}
    sample = sorted(set(ref) & set(pred))
    category = category_agreement([_index(ref[p].category) for p in sample],
                                  [_index(pred[p].category) for p in sample], n_boot, seed)
    error = error_agreement([ref[p].erroneous for p in sample],
                            [pred[p].erroneous for p in sample], n_boot, seed)
    sens = 1 - (math.nan if error.fn_rate.value is None else float(error.fn_rate.value))
    spec = 1 - (math.nan if error.fp_rate.value is None else float(error.fp_rate.value))
    problem = ("no labelled pair was labelled by the judge" if not sample
               else correction_problem(sens, spec, "pairs"))
    per_category = [sum(n for (c, _e), n in log.items() if c == cat) for cat in CATEGORIES]
    mix, clipped = corrected_mix(category, per_category)
    return TrafficCorrection(
        n_log=sum(log.values()), n_sample=len(sample), category=category, error=error,
        sensitivity=Metric(value=None if math.isnan(sens) else sens, reason=problem),
        specificity=Metric(value=None if math.isnan(spec) else spec, reason=problem),
        mix=mix, mix_clipped=clipped,
        error_rates=corrected_rates(log, sens, spec, problem))
