"""The real-traffic audit's figures: the COPAL paper's Table 11 from labelled pairs, and its
Table 12 from deployed chatbots probed with the composed suite.

Table 11 counts, per policy category and in total, the cases, the erroneous ones, the error rate
with its Wilson 95% interval (`metrics.intervals.wilson`, the interval every copal rate uses),
the category's share of the cases and of the errors, and the multi/single error-rate ratio with
its 95% interval by the log method (Katz): exp(ln r +/- z sqrt(1/a - 1/n1 + 1/c - 1/n2)), for a
errors of n1 multi-policy cases and c of n2 single-policy ones; undefined, with the reason, when
either rate is 0 or has no case. The paper's counts (183/341/476 cases, 4/32/138 errors) give
2.2/9.4/29.0/17.4%, a 47.6% share of the cases and a 79.3% share of the errors for multi-policy
pairs, and a ratio of 3.09.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from copal_tui.domain.traffic import CATEGORIES, MULTI, SINGLE
from copal_tui.metrics.classify import ratio
from copal_tui.metrics.document_base import Interval, Metric
from copal_tui.metrics.document_traffic import ALL, TOTAL, CategoryRow, ProbeRow, RatioRow
from copal_tui.metrics.intervals import Z95, wilson


@dataclass(frozen=True)
class Case:
    """One labelled pair as Table 11 counts it."""

    source: str
    category: str
    erroneous: bool


def _rate(errors: int, n: int) -> Metric:
    low, high = wilson(errors, n)
    reason = None if n else "no case in this category"
    return Metric.of(*ratio(errors, n, "no case in this category"),
                     interval=Interval.of(low, high, reason))


def _share(part: int, whole: int, what: str) -> Metric:
    return Metric.of(*ratio(part, whole, f"no {what} in this source"))


def rate_ratio(a: int, n1: int, c: int, n2: int) -> Metric:
    """The ratio of a/n1 to c/n2 with its 95% interval by the log method."""
    if n1 == 0 or n2 == 0:
        return Metric.of(None, "no multi-policy or no single-policy case",
                         Interval.of(math.nan, math.nan, "no multi-policy or no single-policy "
                                                         "case"))
    if a == 0 or c == 0:
        why = "no erroneous multi-policy or single-policy case: the log ratio is undefined"
        value = None if c == 0 else 0.0
        return Metric.of(value, why if value is None else None, Interval.of(math.nan, math.nan,
                                                                            why))
    r = (a / n1) / (c / n2)
    se = math.sqrt(1 / a - 1 / n1 + 1 / c - 1 / n2)
    return Metric.of(r, interval=Interval.of(math.exp(math.log(r) - Z95 * se),
                                             math.exp(math.log(r) + Z95 * se)))


def _rows(source: str, n: Counter[str], e: Counter[str]
          ) -> tuple[list[CategoryRow], RatioRow]:
    """Table 11's rows of one source from its cases `n` and errors `e` by category."""
    total_n, total_e = sum(n.values()), sum(e.values())
    rows = [CategoryRow(source=source, category=cat, cases=n[cat], errors=e[cat],
                        error_rate=_rate(e[cat], n[cat]),
                        share_of_cases=_share(n[cat], total_n, "case"),
                        share_of_errors=_share(e[cat], total_e, "error"))
            for cat in CATEGORIES]
    rows.append(CategoryRow(source=source, category=TOTAL, cases=total_n, errors=total_e,
                            error_rate=_rate(total_e, total_n),
                            share_of_cases=_share(total_n, total_n, "case"),
                            share_of_errors=_share(total_e, total_e, "error")))
    multi = e[MULTI] / n[MULTI] if n[MULTI] else None
    single = e[SINGLE] / n[SINGLE] if n[SINGLE] else None
    return rows, RatioRow(source=source, multi_rate=multi, single_rate=single,
                          ratio=rate_ratio(e[MULTI], n[MULTI], e[SINGLE], n[SINGLE]))


def table11_counts(counts: Mapping[tuple[str, str, bool], int]
                   ) -> tuple[list[CategoryRow], list[RatioRow]]:
    """Table 11 from {(source, category, erroneous): cases}: every source pooled (`all`),
    then each source in name order."""
    out_rows, ratios = [], []
    for source in [ALL, *sorted({s for s, _c, _e in counts})]:
        n: Counter[str] = Counter()
        e: Counter[str] = Counter()
        for (s, category, erroneous), k in counts.items():
            if source in (ALL, s):
                n[category] += k
                e[category] += k if erroneous else 0
        r, q = _rows(source, n, e)
        out_rows += r
        ratios.append(q)
    return out_rows, ratios


def table11(cases: Sequence[Case]) -> tuple[list[CategoryRow], list[RatioRow]]:
    """Table 11 for all the cases (source `all`), then for each source in name order."""
    return table11_counts(Counter((c.source, c.category, c.erroneous) for c in cases))


@dataclass(frozen=True)
class Probe:
    """One deployment's judged probes (Table 12)."""

    deployment: str
    world: str
    clauses: int
    compositions: int
    selected: int
    errors: int


def table12(probes: Sequence[Probe]) -> list[ProbeRow]:
    """One row per deployment, then the total over them."""
    def row(deployment: str, world: str, clauses: int, compositions: int, selected: int,
            errors: int) -> ProbeRow:
        return ProbeRow(deployment=deployment, world=world, clauses=clauses,
                        compositions=compositions, selected=selected,
                        correct=selected - errors, error_rate=_rate(errors, selected))

    rows = [row(p.deployment, p.world, p.clauses, p.compositions, p.selected, p.errors)
            for p in probes]
    worlds = {p.world: (p.clauses, p.compositions) for p in probes}  # a world counted once
    rows.append(row(TOTAL, ", ".join(sorted(worlds)), sum(c for c, _k in worlds.values()),
                    sum(k for _c, k in worlds.values()), sum(p.selected for p in probes),
                    sum(p.errors for p in probes)))
    return rows
