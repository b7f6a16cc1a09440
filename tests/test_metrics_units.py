"""Metric functions against values worked by hand: general cases and edge cases (no errors, all
errors, one class only, empty input). The comparison with the libraries that compute the
figures, on random data, is in test_metrics_libraries.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copal_tui.metrics.agreement import human_agreement
from copal_tui.metrics.classify import Confusion, confusion_arrays, confusion_stats, kappa
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_copal import JudgeValidity, ModelErrorRate
from copal_tui.metrics.intervals import Z95, percentile_intervals, resample_tables, wilson
from copal_tui.metrics.rates import ablation, corrected_error_rates, facet_atlas, one_sided
from copal_tui.metrics.sensitivity import competition_ranks, kendall_tau_b, spearman_rho
from copal_tui.metrics.validity import judge_validity


def _values(c: Confusion) -> dict[str, float]:
    return {name: value for name, (value, _reason) in c.stats.items()}


def _reasons(c: Confusion) -> dict[str, str | None]:
    return {name: reason for name, (_value, reason) in c.stats.items()}


def observed_rate(n: int, rate: float) -> ModelErrorRate:
    """The only fields of a model's error-rate row the correction reads."""
    return ModelErrorRate.model_construct(model="m", n=n, error_rate=Metric.of(rate))


def measured(n: int, fn_rate: float, fp_rate: float) -> JudgeValidity:
    """The only fields of a judge-validity entry the correction reads."""
    return JudgeValidity.model_construct(n=n, fn_rate=Metric.of(fn_rate),
                                         fp_rate=Metric.of(fp_rate))


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


def resample_items(counts: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The item-resampled totals of one table without subgroups."""
    return resample_tables([(counts, [])], n_boot, seed)[0][0]


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
    assert np.array_equal(whole, resample_items(counts, 300, seed=5))


def test_percentile_interval_skips_undefined_resamples():
    (low, high, defined), none = percentile_intervals(
        np.array([[np.nan, 0.0, 1.0, np.nan, 0.5], [np.nan] * 5]))
    assert defined == 3 and low == pytest.approx(0.025) and high == pytest.approx(0.975)
    assert math.isnan(none[0]) and math.isnan(none[1]) and none[2] == 0


# ------------------------------------------------------------------ confusion statistics


def test_confusion_stats_hand_worked():
    # tp 3, fp 1, tn 4, fn 2 (n 10): precision 3/4, recall 3/5, F1 6/9, agreement 7/10;
    # po = 0.7, pe = (4 * 5 + 6 * 5) / 100 = 0.5, kappa = (0.7 - 0.5) / 0.5 = 0.4.
    c = confusion_stats(tp=3, fp=1, tn=4, fn=2)
    s = _values(c)
    assert (c.n, c.tp, c.fp, c.tn, c.fn) == (10, 3, 1, 4, 2)
    assert s["precision"] == pytest.approx(3 / 4) and s["recall"] == pytest.approx(3 / 5)
    assert s["f1"] == pytest.approx(2 / 3) and s["agreement"] == pytest.approx(0.7)
    assert s["fn_rate"] == pytest.approx(2 / 5) and s["fp_rate"] == pytest.approx(1 / 5)
    assert s["kappa"] == pytest.approx(0.4)
    assert all(reason is None for _value, reason in c.stats.values())


def test_the_judge_flagging_nothing_leaves_precision_undefined():
    c = confusion_stats(tp=0, fp=0, tn=6, fn=2)
    s, why = _values(c), _reasons(c)
    assert math.isnan(s["precision"]) and "tp + fp = 0" in why["precision"]
    assert s["recall"] == 0.0 and s["f1"] == 0.0 and s["fn_rate"] == 1.0


def test_no_errors_anywhere():
    c = confusion_stats(tp=0, fp=0, tn=10, fn=0)
    s, why = _values(c), _reasons(c)
    assert s["agreement"] == 1.0
    for key in ("precision", "recall", "f1", "fn_rate", "kappa"):
        assert math.isnan(s[key]) and why[key]
    assert s["fp_rate"] == 0.0
    assert "one class" in why["kappa"]


def test_all_errors_everywhere():
    c = confusion_stats(tp=7, fp=0, tn=0, fn=0)
    s, why = _values(c), _reasons(c)
    assert (s["precision"], s["recall"], s["f1"], s["fn_rate"]) == (1.0, 1.0, 1.0, 0.0)
    assert math.isnan(s["fp_rate"]) and "fp + tn = 0" in why["fp_rate"]
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
        s = _values(confusion_stats(*row))
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
        m = a.metrics[metric]
        assert m.interval is not None and m.value is not None
        assert m.interval.low is not None and m.interval.high is not None
        assert m.interval.low <= m.value <= m.interval.high
        assert m.interval.resamples_defined == 300
    assert a.by_pattern["scope_restriction"].n == a.n == 120
    off = judge_validity(cells, 0, seed=11)[0].kappa.interval
    assert off is not None and off.low is None and off.reason and "disabled" in off.reason


# ------------------------------------------------------------------ ranks


def test_rank_correlations_hand_worked():
    # One discordant pair of six: tau = (5 - 1) / 6; rank differences 0, 1, -1, 0:
    # rho = 1 - 6 * 2 / (4 * 15) = 0.8.
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == (pytest.approx(2 / 3), None)
    assert spearman_rho([1, 2, 3, 4], [1, 3, 2, 4]) == (pytest.approx(0.8), None)
    # A tie in x: 2 concordant of 3 pairs, one tied in x: tau-b = 2 / sqrt(2 * 3); average
    # ranks (1.5, 1.5, 3) against (1, 2, 3): rho = 1.5 / sqrt(1.5 * 2).
    assert kendall_tau_b([1, 1, 2], [1, 2, 3])[0] == pytest.approx(2 / math.sqrt(6))
    assert spearman_rho([1, 1, 2], [1, 2, 3])[0] == pytest.approx(1.5 / math.sqrt(3))
    assert kendall_tau_b([1, 2, 3], [3, 2, 1])[0] == pytest.approx(-1.0)
    assert competition_ranks([0.2, 0.1, 0.2, 0.3]) == [2, 1, 2, 4]


def test_rank_correlations_undefined_cases():
    assert math.isnan(kendall_tau_b([0.5], [0.5])[0])
    assert "same error rate" in spearman_rho([0.2, 0.2], [0.1, 0.3])[1]


# ------------------------------------------------------------------ human agreement


def test_human_agreement_hand_worked():
    # a: 1 1 0 0, b: 1 0 0 0 on four responses. Kappa: po = 3/4, pe = (2 * 1 + 2 * 3) / 16 =
    # 1/2, so 0.5. Alpha (nominal): coincidences o11 = 2, o10 = o01 = 1, o00 = 4 (n = 8,
    # n0 = 5, n1 = 3): Do = 2/8, De = 2 * 5 * 3 / (8 * 7), alpha = 1 - Do / De = 16/30.
    labels = [(f"r{r}", name, v) for name, values in (("a", [1, 1, 0, 0]), ("b", [1, 0, 0, 0]))
              for r, v in enumerate(values)]
    out = human_agreement(labels)
    assert out.n_multiply_labelled == 4
    assert out.pairwise[0].kappa.value == pytest.approx(0.5)
    assert out.pairwise[0].agreement.value == pytest.approx(0.75)
    assert out.krippendorff_alpha.value == pytest.approx(16 / 30)
    assert out.krippendorff_alpha.reason is None


def test_human_agreement_edge_cases():
    empty = human_agreement([])
    assert empty.krippendorff_alpha.value is None and empty.krippendorff_alpha.reason
    assert empty.mean_pairwise_kappa.value is None
    single = human_agreement([("r1", "a", 1), ("r2", "b", 0)])  # nobody shares a response
    assert single.n_multiply_labelled == 0 and single.pairwise == []
    same = human_agreement([("r1", "a", 1), ("r1", "b", 1), ("r2", "a", 1), ("r2", "b", 1)])
    assert same.krippendorff_alpha.value is None
    assert "same class" in str(same.krippendorff_alpha.reason)
    assert same.pairwise[0].kappa.value is None


# ------------------------------------------------------------------ rates


def test_unknown_direction_is_counted_not_guessed():
    # (model, world, pattern, facet, error, direction, count): errors imported as bare flags.
    cells = [("m", "w", "scope_restriction", "over_refusal", 1, None, 2),
             ("m", "w", "scope_restriction", "over_refusal", 1, "over_enforcement", 2),
             ("m", "w", "scope_restriction", "over_refusal", 0, None, 1)]
    atlas = facet_atlas(cells)["over_refusal"]
    assert (atlas.n, atlas.errors, atlas.unknown_direction) == (5, 4, 2)
    assert atlas.over_enforcement_share.value == pytest.approx(2 / 3)  # of 3 known
    sided = one_sided(cells)
    assert sided.unknown_direction == 2 and sided.over_enforcement_share.value == 1.0
    only_unknown = one_sided([("m", "w", None, None, 1, None, 3)])
    assert only_unknown.one_sided_share.value is None and only_unknown.one_sided_share.reason


def test_ablation_pools_only_models_judged_on_every_method():
    rows, left_out = ablation(
        [("copal", "A", 10, 5), ("copal", "S", 4, 4), ("clause_only", "A", 10, 2)],
        [("copal", 10), ("clause_only", 10), ("raw_policy", 0)])
    by = {r.method: r for r in rows}
    assert left_out == ["S"]
    assert by["copal"].n == 10 and by["copal"].error_rate.value == 0.5
    assert by["copal"].by_model["S"].error_rate.value == 1.0
    assert by["raw_policy"].error_rate.value is None
    assert by["raw_policy"].error_rate.reason == "no items selected for this method"


def test_rogan_gladen_hand_values_and_undefined_cases():
    rows = [observed_rate(100, 0.4)]
    # sens 0.9, spec 0.8: (0.4 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.2 / 0.7.
    out = corrected_error_rates(rows, measured(50, 0.1, 0.2), "J", "contract")
    assert out.models[0].corrected_error_rate.value == pytest.approx(0.2 / 0.7)
    chance = corrected_error_rates(rows, measured(50, 0.5, 0.5), "J", "contract")
    assert chance.models[0].corrected_error_rate.value is None
    assert "no better than chance" in str(chance.models[0].corrected_error_rate.reason)
    none = corrected_error_rates(rows, None, "J", "contract")
    assert "no human reference labels" in str(none.models[0].corrected_error_rate.reason)
    low = corrected_error_rates([observed_rate(5, 0.05)], measured(50, 0.1, 0.2), "J",
                                "contract")
    assert low.models[0].corrected_error_rate.value == 0.0 and low.models[0].clipped
