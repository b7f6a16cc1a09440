"""The report models of the real-traffic audit (the COPAL paper's Table 11 and Table 12).

Table 11: per policy category (none, single, multi, and the total) the cases, the erroneous
ones, the error rate with its Wilson 95% interval, and the category's share of the cases and of
the errors; the multi/single error-rate ratio with its 95% interval (log method); all of it for
the whole log (`source` "all") and per source. Table 12: per deployed chatbot probed over HTTP,
its world's clauses and compositions, the probes selected, how many it answered correctly, and
its error rate with its interval, with the total over deployments.
"""

from __future__ import annotations

from typing import Annotated

from copal_tui.metrics.document_base import RATE, Flat, FlatModel, Metric

ALL = "all"
TOTAL = "total"


class CategoryRow(FlatModel):
    """One row of Table 11: a category (or `total`) of one source (or `all`)."""

    source: str
    category: str
    cases: int
    errors: int
    error_rate: Annotated[Metric, RATE]
    share_of_cases: Metric
    share_of_errors: Metric


class RatioRow(FlatModel):
    """The multi/single error-rate ratio of one source, with its 95% interval by the log
    method (the standard error of ln(ratio) is sqrt(1/a - 1/n1 + 1/c - 1/n2))."""

    source: str
    multi_rate: float | None
    single_rate: float | None
    ratio: Annotated[Metric, Flat(prefix="")]


class TrafficAudit(FlatModel):
    """Table 11 over the labelled pairs in scope. `labels` names where the labels come from:
    `human` (each pair's reference: its adjudication, else the majority of its annotators)
    or a judge's name (the automatic labeller, where no human label is in scope); `caveat`
    says so when that judge is the offline heuristic. `excluded` counts the pairs left out,
    by reason (flagged sensitive, no reference label)."""

    labels: str
    caveat: str | None = None
    pairs: int
    rows: list[CategoryRow]
    ratios: list[RatioRow]
    excluded: dict[str, int]


class ProbeRow(FlatModel):
    """One row of Table 12: a deployed chatbot (an http target) or `total`."""

    deployment: str
    world: str
    clauses: int
    compositions: int
    selected: int
    correct: int
    error_rate: Annotated[Metric, RATE]


class PublicProbe(FlatModel):
    """Table 12: the composed suite run against deployed chatbots, judged by `judge`."""

    judge: str
    rows: list[ProbeRow]
