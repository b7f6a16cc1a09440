"""The report's figures against the libraries that compute them, on random data: judge validity
(scikit-learn, given the raw label vectors where the report gives it weighted outcomes), rank
statistics (scipy.stats), Krippendorff's alpha (krippendorff), degenerate inputs included (one
class only, constant, empty), which must stay NaN with a reason, never 0.

And the pieces that stay hand-written, each against an independent computation: the vectorised
bootstrap formulas (scikit-learn, row by row), the Wilson interval (scipy's binomtest), the item
resampling (a plain loop over the same draws) and the Rogan-Gladen correction (the forward model
it inverts)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copal_tui.metrics.agreement import human_agreement
from copal_tui.metrics.classify import METRICS, Confusion, confusion_arrays, confusion_stats
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_copal import JudgeValidity, ModelErrorRate
from copal_tui.metrics.intervals import resample_tables, wilson
from copal_tui.metrics.rates import corrected_error_rates
from copal_tui.metrics.sensitivity import competition_ranks, kendall_tau_b, spearman_rho
from copal_tui.metrics.validity import judge_validity

# scikit-learn's input checks make each call take milliseconds: fewer examples than the default.
LIBRARY = settings(max_examples=60, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow])

bits = st.integers(0, 1)
pairs = st.lists(st.tuples(bits, bits), max_size=40)  # (reference, judge) per response


def _counts(ref: np.ndarray, judge: np.ndarray) -> tuple[int, int, int, int]:
    return (int(np.sum((judge == 1) & (ref == 1))), int(np.sum((judge == 1) & (ref == 0))),
            int(np.sum((judge == 0) & (ref == 0))), int(np.sum((judge == 0) & (ref == 1))))


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


def _reasons_exactly_for_nan(c: Confusion) -> None:
    for key in METRICS:
        value, reason = c.stats[key]
        assert math.isnan(value) == (reason is not None), key


def _values(c: Confusion) -> dict[str, float]:
    return {name: value for name, (value, _reason) in c.stats.items()}


# ------------------------------------------------------------------ judge validity


@LIBRARY
@given(pairs)
def test_confusion_stats_equal_sklearn_on_the_label_vectors(rows):
    from sklearn.metrics import (
        cohen_kappa_score,
        confusion_matrix,
        precision_recall_fscore_support,
    )

    ref = np.array([r for r, _j in rows], dtype=int)
    judge = np.array([j for _r, j in rows], dtype=int)
    c = confusion_stats(*_counts(ref, judge))
    _reasons_exactly_for_nan(c)
    out = _values(c)
    if not len(rows):
        assert c.n == 0 and all(math.isnan(out[m]) for m in METRICS)
        return
    # Rows: reference, columns: judge, error (1) the positive class.
    (tn, fp), (fn, tp) = confusion_matrix(ref, judge, labels=[0, 1]).tolist()
    assert (c.tp, c.fp, c.tn, c.fn, c.n) == (tp, fp, tn, fn, len(rows))
    p, r, f1, _ = precision_recall_fscore_support(ref, judge, labels=[0, 1], average="binary",
                                                  pos_label=1, zero_division=np.nan)
    assert _same(out["precision"], p) and _same(out["recall"], r) and _same(out["f1"], f1)
    assert _same(out["fn_rate"], 1 - r)
    assert out["agreement"] == pytest.approx(np.mean(ref == judge), abs=1e-12)
    if len(set(ref.tolist())) == 2 and len(set(judge.tolist())) == 2:
        assert out["kappa"] == pytest.approx(cohen_kappa_score(ref, judge), abs=1e-12)
    else:  # one rater used one class: sklearn says 0 or NaN, the report says why it is NaN
        assert math.isnan(out["kappa"]) and "one class" in str(c.stats["kappa"][1])


@LIBRARY
@given(st.lists(st.tuples(*[st.integers(0, 30)] * 4), min_size=1, max_size=8))
def test_bootstrap_formulas_equal_the_library_figures(rows):
    vec = confusion_arrays(np.array(rows))
    for i, row in enumerate(rows):
        scalar = _values(confusion_stats(*row))
        for metric in METRICS:
            assert _same(float(vec[metric][i]), scalar[metric]), (row, metric)


@pytest.mark.parametrize(("counts", "reason"), [
    ((0, 0, 0, 0), "no responses rated by both"),
    ((0, 0, 9, 0), "each used one class only (no error / no error)"),
    ((4, 0, 0, 0), "each used one class only (error / error)"),
    ((2, 3, 0, 0), "judge gave 'error' every time"),
    ((0, 0, 5, 1), "judge gave 'no error' every time"),
    ((0, 3, 5, 0), "reference labels are all 'no error'"),
    ((2, 0, 0, 3), "reference labels are all 'error'"),
])
def test_undefined_figures_are_nan_with_a_reason_never_zero(counts, reason):
    out = confusion_stats(*counts)
    value, why = out.stats["kappa"]
    assert math.isnan(value) and reason in str(why)
    _reasons_exactly_for_nan(out)


def test_judge_validity_point_figures_equal_sklearn_on_the_responses():
    from sklearn.metrics import cohen_kappa_score, f1_score

    rng = np.random.default_rng(12)
    cells, refs, judges = [], [], []
    for item in range(30):
        ref = rng.integers(0, 2, 4)
        judge = np.where(rng.random(4) < 0.7, ref, 1 - ref)
        refs.append(ref)
        judges.append(judge)
        cells.append(("J", "contract", f"I{item:02d}", "scope_restriction",
                      *_counts(judge=judge, ref=ref)))
    entry = judge_validity(cells, 0, seed=0)[0]
    ref, judge = np.concatenate(refs), np.concatenate(judges)
    assert entry.f1.value == pytest.approx(f1_score(ref, judge), abs=1e-12)
    assert entry.kappa.value == pytest.approx(cohen_kappa_score(ref, judge), abs=1e-12)
    assert entry.by_pattern["scope_restriction"].kappa.value == entry.kappa.value


# ------------------------------------------------------------------ ranks

grid = st.integers(0, 4).map(lambda k: k / 4)  # coarse values: plenty of ties


@LIBRARY
@given(st.lists(st.tuples(grid, grid), max_size=9))
def test_rank_statistics_equal_scipy(rows):
    from scipy.stats import kendalltau, spearmanr

    x, y = [a for a, _b in rows], [b for _a, b in rows]
    tau, tau_reason = kendall_tau_b(x, y)
    rho, rho_reason = spearman_rho(x, y)
    if len(rows) < 2:
        assert math.isnan(tau) and "fewer than two" in tau_reason
        assert math.isnan(rho) and "fewer than two" in rho_reason
    elif len(set(x)) < 2 or len(set(y)) < 2:
        assert math.isnan(tau) and "same error rate" in tau_reason
        assert math.isnan(rho) and "same error rate" in rho_reason
    else:
        assert tau_reason is None and rho_reason is None
        assert tau == pytest.approx(kendalltau(x, y, variant="b").statistic, abs=1e-12)
        assert rho == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)


@given(st.lists(grid, max_size=12))
def test_competition_ranks_count_the_smaller_values(values):
    assert competition_ranks(values) == [1 + sum(o < v for o in values) for v in values]


# ------------------------------------------------------------------ Krippendorff's alpha


@LIBRARY
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(0, 25),
       st.floats(0.0, 1.0))
def test_alpha_and_pairwise_kappa_equal_the_libraries(seed, n_annotators, n_responses, noise):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_responses)
    matrix = np.full((n_annotators, n_responses), np.nan)
    labels = []
    for a in range(n_annotators):
        for r in range(n_responses):
            if rng.random() < 0.7:
                value = int(truth[r] if rng.random() >= noise else 1 - truth[r])
                matrix[a, r] = value
                labels.append((r, f"a{a}", value))
    out = human_agreement(labels)
    multi = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    assert out.n_multiply_labelled == multi.shape[1]
    values = set(multi[~np.isnan(multi)].tolist())
    if len(values) < 2:
        assert out.krippendorff_alpha.value is None and out.krippendorff_alpha.reason
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = krippendorff.alpha(reliability_data=multi,
                                          level_of_measurement="nominal")
        assert out.krippendorff_alpha.value == pytest.approx(expected, abs=1e-12)
    for pair in out.pairwise:
        i, j = int(pair.annotator_a[1:]), int(pair.annotator_b[1:])
        both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j]) & \
            ((~np.isnan(matrix)).sum(axis=0) >= 2)
        x, y = matrix[i][both], matrix[j][both]
        assert pair.n == len(x)
        if len(set(x.tolist())) == 2 and len(set(y.tolist())) == 2:
            assert pair.kappa.value == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)
        else:
            assert pair.kappa.value is None and "one class" in str(pair.kappa.reason)


# ------------------------------------------------------------------ hand-written pieces


@LIBRARY
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_equals_scipy_binomtest(kn):
    from scipy.stats import binomtest

    k, n = kn
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson(k, n)
    assert low == pytest.approx(ci.low, abs=1e-12) and high == pytest.approx(ci.high, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 60))
def test_item_resampling_equals_a_plain_loop_over_the_same_draws(seed, n_items, n_boot):
    counts = np.random.default_rng(seed).integers(0, 5, size=(n_items, 4))
    rng = np.random.default_rng(seed)  # resample_tables draws one (n_boot, n_items) block
    draws = rng.integers(0, n_items, size=(n_boot, n_items))
    expected = np.array([[sum(int(counts[i, c]) for i in row) for c in range(4)]
                         for row in draws.tolist()])
    assert np.array_equal(resample_tables([(counts, [])], n_boot, seed)[0][0], expected)


@given(st.floats(0.0, 1.0), st.floats(0.55, 1.0), st.floats(0.55, 1.0))
def test_rogan_gladen_recovers_the_true_rate_from_the_forward_model(true, sens, spec):
    observed = true * sens + (1 - true) * (1 - spec)  # what a judge with these rates reports
    # Only the fields the correction reads.
    validity = JudgeValidity.model_construct(n=100, fn_rate=Metric.of(1 - sens),
                                             fp_rate=Metric.of(1 - spec))
    row = ModelErrorRate.model_construct(model="m", n=100, error_rate=Metric.of(observed))
    out = corrected_error_rates([row], validity, "J", "contract")
    assert out.models[0].corrected_error_rate.value == pytest.approx(true, abs=1e-9)
