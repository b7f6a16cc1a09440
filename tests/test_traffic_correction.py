"""The automatic labeller's agreement with the human labels and the log's corrected figures
(`copal_tui.metrics.traffic_correction`), on a constructed example whose figures were worked out
by hand (written out below), and the undefined cases with their reasons.

The sample: ten labelled pairs, (reference) -> (judge), category and erroneous:

    s01, s02 none F -> none F      s03 none F -> single T
    s04      single T -> single T  s05, s06 single F -> single F   s07 single T -> multi F
    s08, s09 multi T -> multi T    s10 multi F -> single F

Category confusion (rows reference none/single/multi, columns judge): [[2,1,0],[0,3,1],[0,1,2]];
agreement 7/10; chance pe = .3*.2 + .4*.5 + .3*.3 = .35; kappa = (.7-.35)/(.65) = 7/13.
Error: tp 3 (s04 s08 s09), fp 1 (s03), tn 5, fn 1 (s07): precision 3/4, recall 3/4, F1 3/4,
FN rate 1/4, FP rate 1/6; kappa = (.8 - .52) / .48 = 7/12. Sensitivity 3/4, specificity 5/6.

The log: the ten and thirty more the judge labelled, 10 none (1 erroneous), 20 single (6), 10
multi (5). Mix (.25, .5, .25); M = [[2/3,0,0],[1/3,3/4,1/3],[0,1/4,2/3]] (column j: how the
judge labels reference j); M x = p gives x = (.375, .4, .225). Rogan-Gladen with sens + spec -
1 = 7/12: none (.1 - 1/6) / (7/12) < 0 -> 0 (clipped), single (.3 - 1/6) / (7/12) = 8/35,
multi (.5 - 1/6) / (7/12) = 4/7, total (.3 - 1/6) / (7/12) = 8/35.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from copal_tui.metrics.traffic_correction import Label, traffic_correction

SAMPLE = [  # pair, reference (category, erroneous), judge (category, erroneous)
    ("s01", "none", False, "none", False), ("s02", "none", False, "none", False),
    ("s03", "none", False, "single", True), ("s04", "single", True, "single", True),
    ("s05", "single", False, "single", False), ("s06", "single", False, "single", False),
    ("s07", "single", True, "multi", False), ("s08", "multi", True, "multi", True),
    ("s09", "multi", True, "multi", True), ("s10", "multi", False, "single", False),
]
# The judge's labels on the rest of the log: (category, pairs, of them erroneous).
REST = [("none", 8, 1), ("single", 15, 4), ("multi", 7, 3)]


def _labels() -> tuple[list[Label], list[Label], Counter[tuple[str, bool]]]:
    """The reference labels, the judge's labels on the sample, and its counts over the log."""
    reference = [Label(p, c, e) for p, c, e, _jc, _je in SAMPLE]
    reference.append(Label("labelled-but-not-judged", "multi", True))
    predictions = [Label(p, jc, je) for p, _c, _e, jc, je in SAMPLE]
    log = Counter((jc, je) for _p, _c, _e, jc, je in SAMPLE)
    for category, n, errors in REST:
        log[(category, True)] += errors
        log[(category, False)] += n - errors
    return reference, predictions, log


def test_agreement_and_corrections_match_the_hand_computed_figures():
    reference, predictions, log = _labels()
    got = traffic_correction(reference, predictions, log, n_boot=0)
    assert (got.n_log, got.n_sample) == (40, 10)
    assert got.category.confusion == [[2, 1, 0], [0, 3, 1], [0, 1, 2]]
    assert got.category.agreement.value == pytest.approx(0.7)
    assert got.category.kappa.value == pytest.approx(7 / 13)
    e = got.error
    assert (e.tp, e.fp, e.tn, e.fn) == (3, 1, 5, 1)
    for name, want in (("precision", 3 / 4), ("recall", 3 / 4), ("f1", 3 / 4),
                       ("fn_rate", 1 / 4), ("fp_rate", 1 / 6), ("kappa", 7 / 12)):
        assert getattr(e, name).value == pytest.approx(want), name
    assert got.sensitivity.value == pytest.approx(3 / 4)
    assert got.specificity.value == pytest.approx(5 / 6)
    mix = {s.category: s for s in got.mix}
    assert [mix[c].observed.value for c in ("none", "single", "multi")] == \
        pytest.approx([0.25, 0.5, 0.25])
    assert [mix[c].corrected.value for c in ("none", "single", "multi")] == \
        pytest.approx([0.375, 0.4, 0.225])
    assert got.mix_clipped is False
    rates = {r.category: r for r in got.error_rates}
    assert [(rates[c].n, rates[c].errors) for c in ("none", "single", "multi", "total")] == \
        [(10, 1), (20, 6), (10, 5), (40, 12)]
    assert rates["none"].corrected.value == 0.0 and rates["none"].clipped
    assert rates["single"].corrected.value == pytest.approx(8 / 35)
    assert rates["multi"].corrected.value == pytest.approx(4 / 7)
    assert rates["total"].corrected.value == pytest.approx(8 / 35)
    assert not any(rates[c].clipped for c in ("single", "multi", "total"))
    # Without a bootstrap the intervals say why they are missing.
    assert got.category.kappa.interval is not None
    assert got.category.kappa.interval.reason == "bootstrap disabled (--bootstrap 0)"
    assert got.error.f1.interval is not None and got.error.f1.interval.low is None


def test_the_kappa_interval_is_the_pair_bootstrap():
    # An independent bootstrap: the same seeded draws of the ten pairs in id order (numpy's
    # default_rng, n_boot x n indices, as every copal item bootstrap draws them),
    # scikit-learn's kappa on each resample, undefined where a rater used one category,
    # numpy's percentiles.
    reference, predictions, log = _labels()
    got = traffic_correction(reference, predictions, log, n_boot=200, seed=11)
    ref = np.array([["none", "single", "multi"].index(c) for _p, c, _e, _jc, _je in SAMPLE])
    pred = np.array([["none", "single", "multi"].index(jc) for _p, _c, _e, jc, _je in SAMPLE])
    draws = np.random.default_rng(11).integers(0, 10, size=(200, 10))
    values = [cohen_kappa_score(ref[d], pred[d], labels=[0, 1, 2]) for d in draws
              if len(set(ref[d])) > 1 and len(set(pred[d])) > 1]
    interval = got.category.kappa.interval
    assert interval is not None and interval.resamples_defined == len(values)
    assert (interval.low, interval.high) == pytest.approx(tuple(np.percentile(values,
                                                                              [2.5, 97.5])))
    f1 = got.error.f1.interval
    assert f1 is not None and f1.low is not None and f1.high is not None
    assert f1.low <= 0.75 <= f1.high


def test_a_judge_that_cannot_tell_the_categories_apart_leaves_the_mix_undefined():
    reference, predictions, log = _labels()
    flat = [Label(p.pair, "single", p.erroneous) for p in predictions]
    flat_log = Counter({("single", e): sum(n for (_c, x), n in log.items() if x == e)
                        for e in (True, False)})
    got = traffic_correction(reference, flat, flat_log, n_boot=0)
    assert all(s.corrected.value is None and "singular" in str(s.corrected.reason)
               for s in got.mix)
    assert got.category.kappa.value is None
    assert got.category.kappa.reason == "the judge used one category only (single); kappa is " \
                                        "undefined"
    # No labelled multi-policy pair: that column of the confusion matrix is unknown.
    no_multi = [r for r in reference if r.category != "multi"]
    got = traffic_correction(no_multi, predictions, log, n_boot=0)
    assert all("no labelled pair is in category multi" in str(s.corrected.reason)
               for s in got.mix)


def test_a_judge_no_better_than_chance_is_not_corrected():
    # Sensitivity 1/2 and specificity 1/2: the correction's denominator is 0.
    reference = [Label(f"p{k}", "single", k < 4) for k in range(8)]
    predictions = [Label(f"p{k}", "single", k in (0, 1, 4, 5)) for k in range(8)]
    log = Counter(("single", p.erroneous) for p in predictions)
    got = traffic_correction(reference, predictions, log, n_boot=0)
    assert got.sensitivity.value == pytest.approx(0.5)
    assert got.specificity.value == pytest.approx(0.5)
    assert "no better than chance" in str(got.sensitivity.reason)
    assert all(r.corrected.value is None for r in got.error_rates)
    total = next(r for r in got.error_rates if r.category == "total")
    assert total.observed.value == pytest.approx(0.5)
    # With nothing in common there is no sample at all.
    got = traffic_correction([], predictions, log, n_boot=0)
    assert got.n_sample == 0
    assert got.error.precision.value is None and got.category.kappa.value is None
    assert all(r.corrected.value is None for r in got.error_rates)
