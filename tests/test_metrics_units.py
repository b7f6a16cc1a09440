"""Metric functions against scikit-learn, scipy and krippendorff on random data, and against
hand-computed values on edge cases (no errors, all errors, one class only, empty input)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from copal_tui.metrics.agreement import human_agreement
from copal_tui.metrics.classify import confusion_arrays, confusion_stats, kappa
from copal_tui.metrics.intervals import Z95, percentile_interval, resample_items, wilson
from copal_tui.metrics.ranks import (
    average_ranks,
    competition_ranks,
    kendall_tau_b,
    spearman_rho,
)
from copal_tui.metrics.rates import ablation, corrected_error_rates, facet_atlas, one_sided
from copal_tui.metrics.validity import judge_validity


def _counts(judge: np.ndarray, ref: np.ndarray) -> tuple[int, int, int, int]:
    return (int(np.sum((judge == 1) & (ref == 1))), int(np.sum((judge == 1) & (ref == 0))),
            int(np.sum((judge == 0) & (ref == 0))), int(np.sum((judge == 0) & (ref == 1))))


# ------------------------------------------------------------------ intervals


def test_normal_quantile_matches_scipy():
    from scipy.stats import norm

    assert pytest.approx(norm.ppf(0.975), abs=1e-12) == Z95


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Published Wilson 95% intervals (Newcombe 1998, table I; Brown, Cai & DasGupta 2001).
    (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (5, 10, 0.2366, 0.7634),
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605),
])
def test_wilson_against_published_values(k, n, low, high):
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_wilson_is_nan_without_data():
    assert all(math.isnan(v) for v in wilson(0, 0))


def test_bootstrap_resamples_whole_items_and_is_seeded():
    # Item 0 has three responses (all tp), item 1 one fn: every resample's totals are a
    # combination of whole items, never a single response of item 0.
    counts = np.array([[3, 0, 0, 0], [0, 0, 0, 1]])
    totals = resample_items(counts, 500, seed=1)
    assert set(map(tuple, totals.tolist())) <= {(6, 0, 0, 0), (3, 0, 0, 1), (0, 0, 0, 2)}
    assert np.array_equal(totals, resample_items(counts, 500, seed=1))
    assert not np.array_equal(totals, resample_items(counts, 500, seed=2))
    assert totals.sum(axis=1).min() >= 2  # always two items drawn


def test_bootstrap_blocks_do_not_change_the_draw(monkeypatch):
    from copal_tui.metrics import intervals

    counts = np.random.default_rng(0).integers(0, 3, size=(50, 4))
    whole = resample_items(counts, 300, seed=5)
    monkeypatch.setattr(intervals, "_BLOCK_CELLS", 50 * 7)  # seven resamples per block
    assert np.array_equal(whole, intervals.resample_items(counts, 300, seed=5))


def test_percentile_interval_skips_undefined_resamples():
    low, high, defined = percentile_interval(np.array([np.nan, 0.0, 1.0, np.nan, 0.5]))
    assert defined == 3 and low == pytest.approx(0.025) and high == pytest.approx(0.975)
    assert math.isnan(percentile_interval(np.array([np.nan]))[0])


# ------------------------------------------------------------------ confusion statistics


@pytest.mark.parametrize("seed", range(20))
def test_confusion_stats_match_sklearn_on_random_data(seed):
    from sklearn.metrics import (
        cohen_kappa_score,
        confusion_matrix,
        f1_score,
        precision_score,
        recall_score,
    )

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 200))
    ref = rng.integers(0, 2, n)
    judge = np.where(rng.random(n) < 0.8, ref, 1 - ref)
    tp, fp, tn, fn = _counts(judge, ref)
    (sk_tn, sk_fp), (sk_fn, sk_tp) = confusion_matrix(ref, judge, labels=[0, 1])
    assert (tp, fp, tn, fn) == (sk_tp, sk_fp, sk_tn, sk_fn)
    s = confusion_stats(tp, fp, tn, fn)
    nan = float("nan")
    for ours, theirs in [
        (s["precision"], precision_score(ref, judge, zero_division=nan)),
        (s["recall"], recall_score(ref, judge, zero_division=nan)),
        (s["f1"], f1_score(ref, judge, zero_division=nan)),
        (s["fn_rate"], 1 - recall_score(ref, judge, zero_division=nan)),
        (s["fp_rate"], 1 - recall_score(1 - ref, 1 - judge, zero_division=nan)),
    ]:
        assert ours == pytest.approx(theirs, abs=1e-12, nan_ok=True)
    if 0 < ref.sum() < n and 0 < judge.sum() < n:
        assert s["kappa"] == pytest.approx(cohen_kappa_score(ref, judge), abs=1e-12)
    vec = confusion_arrays(np.array([[tp, fp, tn, fn]]))
    for metric in ("agreement", "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa"):
        assert vec[metric][0] == pytest.approx(s[metric], abs=1e-12, nan_ok=True)


def test_no_errors_anywhere():
    s = confusion_stats(tp=0, fp=0, tn=10, fn=0)
    assert s["agreement"] == 1.0
    for key in ("precision", "recall", "f1", "fn_rate", "kappa"):
        assert math.isnan(s[key]) and s[f"{key}_reason"]
    assert s["fp_rate"] == 0.0
    assert "one class" in s["kappa_reason"]


def test_all_errors_everywhere():
    s = confusion_stats(tp=7, fp=0, tn=0, fn=0)
    assert (s["precision"], s["recall"], s["f1"], s["fn_rate"]) == (1.0, 1.0, 1.0, 0.0)
    assert math.isnan(s["fp_rate"]) and "fp + tn = 0" in s["fp_rate_reason"]
    assert math.isnan(s["kappa"])


def test_one_class_reference_gives_nan_kappa_never_zero():
    # The reference is all "no error"; the judge varies. The formula gives 0 whatever the
    # agreement (sklearn returns 0.0 here), which would read as "chance-level": report NaN.
    from sklearn.metrics import cohen_kappa_score

    ref = np.zeros(10, dtype=int)
    judge = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    assert cohen_kappa_score(ref, judge) == 0.0
    value, reason = kappa(*_counts(judge, ref))
    assert math.isnan(value) and "reference labels are all 'no error'" in reason
    value, reason = kappa(*_counts(np.ones(10, dtype=int), np.array([1] * 5 + [0] * 5)))
    assert math.isnan(value) and "judge gave 'error' every time" in reason
    value, reason = kappa(0, 0, 0, 0)
    assert math.isnan(value) and "no responses" in reason


def test_confusion_arrays_nan_exactly_where_scalars_are():
    rows = np.array([[0, 0, 5, 0], [3, 0, 0, 0], [0, 2, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    vec = confusion_arrays(rows)
    for i, row in enumerate(rows.tolist()):
        s = confusion_stats(*row)
        for metric, values in vec.items():
            assert math.isnan(values[i]) == math.isnan(s[metric]), (row, metric)


def test_judge_validity_intervals_cover_point_and_respect_seed():
    rng = np.random.default_rng(3)
    cells = []
    for item in range(40):
        ref = rng.integers(0, 2, 3)
        judge = np.where(rng.random(3) < 0.75, ref, 1 - ref)
        cells.append(("J", "contract", f"I{item:02d}", "scope_restriction",
                      *_counts(judge, ref)))
    a = judge_validity(cells, 300, seed=11)[0]
    b = judge_validity(cells, 300, seed=11)[0]
    assert a == b
    for metric in ("agreement", "kappa", "f1"):
        assert a["ci"][metric]["low"] <= a[metric] <= a["ci"][metric]["high"]
        assert a["ci"][metric]["resamples_defined"] == 300
    assert a["by_pattern"]["scope_restriction"]["n"] == a["n"] == 120
    off = judge_validity(cells, 0, seed=11)[0]
    assert math.isnan(off["ci"]["kappa"]["low"]) and "disabled" in off["ci"]["kappa"]["low_reason"]


# ------------------------------------------------------------------ ranks


@pytest.mark.parametrize("seed", range(15))
def test_rank_correlations_match_scipy_with_ties(seed):
    from scipy.stats import kendalltau, rankdata, spearmanr

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    x = rng.integers(0, 5, n) / 4  # coarse values: plenty of ties
    y = np.where(rng.random(n) < 0.6, x, rng.integers(0, 5, n) / 4)
    assert np.allclose(average_ranks(x), rankdata(x))
    assert competition_ranks(list(x)) == [int(r) for r in rankdata(x, method="min")]
    tau, reason = kendall_tau_b(list(x), list(y))
    rho, _ = spearman_rho(list(x), list(y))
    if len(set(x)) > 1 and len(set(y)) > 1:
        assert tau == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
        assert rho == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    else:
        assert math.isnan(tau) and reason


def test_rank_correlations_undefined_cases():
    assert math.isnan(kendall_tau_b([0.5], [0.5])[0])
    assert "same error rate" in spearman_rho([0.2, 0.2], [0.1, 0.3])[1]


# ------------------------------------------------------------------ human agreement


@pytest.mark.parametrize("seed", range(8))
def test_human_agreement_matches_sklearn_and_krippendorff(seed):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, 60)
    annotators = ["a", "b", "c"]
    matrix = np.full((3, 60), np.nan)
    labels = []
    for i, name in enumerate(annotators):
        for r in range(60):
            if rng.random() < 0.8:
                value = int(truth[r] if rng.random() < 0.85 else 1 - truth[r])
                matrix[i, r] = value
                labels.append((f"r{r:03d}", name, value))
    out = human_agreement(labels)
    for pair in out["pairwise"]:
        i, j = annotators.index(pair["annotator_a"]), annotators.index(pair["annotator_b"])
        both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
        assert pair["n"] == int(both.sum())
        assert pair["kappa"] == pytest.approx(
            cohen_kappa_score(matrix[i][both], matrix[j][both]), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert out["krippendorff_alpha"] == pytest.approx(expected, abs=1e-12)
    assert out["n_multiply_labelled"] == int((np.sum(~np.isnan(matrix), axis=0) >= 2).sum())


def test_human_agreement_edge_cases():
    empty = human_agreement([])
    assert math.isnan(empty["krippendorff_alpha"]) and empty["krippendorff_alpha_reason"]
    assert math.isnan(empty["mean_pairwise_kappa"])
    single = human_agreement([("r1", "a", 1), ("r2", "b", 0)])  # nobody shares a response
    assert single["n_multiply_labelled"] == 0 and single["pairwise"] == []
    same = human_agreement([("r1", "a", 1), ("r1", "b", 1), ("r2", "a", 1), ("r2", "b", 1)])
    assert math.isnan(same["krippendorff_alpha"]) and "same class" in \
        same["krippendorff_alpha_reason"]
    assert math.isnan(same["pairwise"][0]["kappa"])


# ------------------------------------------------------------------ rates


def test_unknown_direction_is_counted_not_guessed():
    # (model, world, pattern, facet, error, direction, count): errors imported as bare flags.
    cells = [("m", "w", "scope_restriction", "over_refusal", 1, None, 2),
             ("m", "w", "scope_restriction", "over_refusal", 1, "over_enforcement", 2),
             ("m", "w", "scope_restriction", "over_refusal", 0, None, 1)]
    atlas = facet_atlas(cells)["over_refusal"]
    assert (atlas["n"], atlas["errors"], atlas["unknown_direction"]) == (5, 4, 2)
    assert atlas["over_enforcement_share"] == pytest.approx(2 / 3)  # of 3 known
    sided = one_sided(cells)
    assert sided["unknown_direction"] == 2 and sided["over_enforcement_share"] == 1.0
    only_unknown = one_sided([("m", "w", None, None, 1, None, 3)])
    assert math.isnan(only_unknown["one_sided_share"]) and only_unknown["one_sided_share_reason"]


def test_ablation_pools_only_models_judged_on_every_method():
    rows, left_out = ablation(
        [("copal", "A", 10, 5), ("copal", "S", 4, 4), ("clause_only", "A", 10, 2)],
        [("copal", 10), ("clause_only", 10), ("raw_policy", 0)])
    by = {r["method"]: r for r in rows}
    assert left_out == ["S"]
    assert by["copal"]["n"] == 10 and by["copal"]["error_rate"] == 0.5
    assert by["copal"]["by_model"]["S"]["error_rate"] == 1.0
    assert math.isnan(by["raw_policy"]["error_rate"])
    assert by["raw_policy"]["error_rate_reason"] == "no items selected for this method"


def test_rogan_gladen_hand_values_and_undefined_cases():
    rows = [{"model": "m", "n": 100, "error_rate": 0.4}]
    # sens 0.9, spec 0.8: (0.4 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.2 / 0.7.
    out = corrected_error_rates(rows, {"n": 50, "fn_rate": 0.1, "fp_rate": 0.2}, "J", "contract")
    assert out["models"][0]["corrected_error_rate"] == pytest.approx(0.2 / 0.7)
    chance = corrected_error_rates(rows, {"n": 50, "fn_rate": 0.5, "fp_rate": 0.5}, "J",
                                   "contract")
    assert math.isnan(chance["models"][0]["corrected_error_rate"])
    assert "no better than chance" in chance["models"][0]["corrected_error_rate_reason"]
    none = corrected_error_rates(rows, None, "J", "contract")
    assert "no human reference labels" in none["models"][0]["corrected_error_rate_reason"]
    low = corrected_error_rates([{"model": "m", "n": 5, "error_rate": 0.05}],
                                {"n": 50, "fn_rate": 0.1, "fp_rate": 0.2}, "J", "contract")
    assert low["models"][0]["corrected_error_rate"] == 0.0 and low["models"][0]["clipped"]
