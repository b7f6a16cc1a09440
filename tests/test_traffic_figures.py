"""The real-traffic audit's figures against the COPAL paper's own (Table 11, appendix B.3;
Table 12) and against independent computations: scipy's Wilson interval, the log-method
interval of a ratio of two proportions written out here."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from copal_tui.metrics.traffic import Case, Probe, rate_ratio, table11, table12

# The paper's Table 11: 1,000 pairs, per category (cases, errors).
PAPER = {"none": (183, 4), "single": (341, 32), "multi": (476, 138)}


def _cases(source: str = "web") -> list[Case]:
    return [Case(source, cat, k < errors) for cat, (n, errors) in PAPER.items()
            for k in range(n)]


def test_the_papers_counts_give_the_papers_figures():
    rows, ratios = table11(_cases())
    got = {r.category: r for r in rows if r.source == "all"}
    # Error rates 2.2 / 9.4 / 29.0 / 17.4 %, as the paper prints them.
    assert [round(100 * got[c].error_rate.value, 1) for c in ("none", "single", "multi",
                                                               "total")] == [2.2, 9.4, 29.0, 17.4]
    assert round(100 * got["multi"].share_of_cases.value, 1) == 47.6
    assert round(100 * got["multi"].share_of_errors.value, 1) == 79.3
    assert (got["total"].cases, got["total"].errors) == (1000, 174)
    assert round(ratios[0].ratio.value, 2) == 3.09


def test_error_rates_carry_scipys_wilson_interval():
    rows, _ = table11(_cases())
    for r in rows:
        ci = binomtest(r.errors, r.cases).proportion_ci(confidence_level=0.95, method="wilson")
        assert r.error_rate.interval is not None
        assert r.error_rate.interval.low == pytest.approx(ci.low)
        assert r.error_rate.interval.high == pytest.approx(ci.high)


def test_the_ratio_interval_is_the_log_method():
    ratio = rate_ratio(138, 476, 32, 341)
    se = math.sqrt(1 / 138 - 1 / 476 + 1 / 32 - 1 / 341)
    r = (138 / 476) / (32 / 341)
    assert ratio.interval is not None
    assert ratio.interval.low == pytest.approx(r * math.exp(-1.959963984540054 * se))
    assert ratio.interval.high == pytest.approx(r * math.exp(1.959963984540054 * se))
    # Undefined, with the reason, where the log ratio is.
    assert rate_ratio(0, 10, 0, 10).value is None and rate_ratio(3, 10, 0, 0).reason


def test_figures_per_source_beside_the_whole_log():
    rows, ratios = table11(_cases("app")[:400] + _cases("web")[400:])
    assert [q.source for q in ratios] == ["all", "app", "web"]
    by = {(r.source, r.category): r for r in rows}
    assert by[("app", "total")].cases + by[("web", "total")].cases == 1000
    assert by[("all", "total")].errors == by[("app", "total")].errors + by[
        ("web", "total")].errors


def test_the_public_probe_total():
    # Constructed as the issue gives them: 17/30, 15/30 and 14/30 correct.
    rows = table12([Probe("bot-a", "w1", 40, 12, 30, 13), Probe("bot-b", "w2", 35, 10, 30, 15),
                    Probe("bot-c", "w3", 50, 14, 30, 16)])
    total = rows[-1]
    assert (total.correct, total.selected) == (46, 90)
    assert round(100 * total.error_rate.value, 1) == 48.9
    assert (total.clauses, total.compositions) == (125, 36)
