"""The report models of the real-traffic audit (the COPAL paper's Table 11 and Table 12).

Table 11: per policy category (none, single, multi, and the total) the cases, the erroneous
ones, the error rate with its Wilson 95% interval, and the category's share of the cases and of
the errors; the multi/single error-rate ratio with its 95% interval (log method); all of it for
the whole log (`source` "all") and per source. Table 12: per deployed chatbot probed over HTTP,
its world's clauses and compositions, the probes selected, how many it answered correctly, and
its error rate with its interval, with the total over deployments.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import PrivateAttr

from copal_tui.metrics.document_base import CI, RATE, Flat, FlatModel, Metric, SuiteSections
from copal_tui.metrics.traffic_agreement import TrafficAgreement

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


class LabellerRow(FlatModel):
    """The automatic labeller `judge` against the human reference labels: on the `sample` of
    labelled pairs it also labelled, exact agreement and Cohen's kappa on the category, and
    precision, recall, F1 and kappa on the error (erroneous the positive class), each with its
    bootstrap interval in `ci`; its sensitivity and specificity on the error (what the
    correction uses); over the log, the pairs it labelled and the calls that failed."""

    judge: str
    pairs: int
    failed: int
    sample: int
    category_agreement: Annotated[Metric, CI]
    category_kappa: Annotated[Metric, CI]
    error_precision: Annotated[Metric, CI]
    error_recall: Annotated[Metric, CI]
    error_f1: Annotated[Metric, CI]
    error_kappa: Annotated[Metric, CI]
    sensitivity: Metric
    specificity: Metric
    confusion: list[list[int]]  # rows: the reference category, columns: the labeller's


class CorrectedRow(FlatModel):
    """The whole log by `judge`, per category as the judge assigns it (or `total`): its share
    of the pairs and its error rate as the judge gives them (`observed_*`) and corrected for the
    judge's mistakes measured on the sample (`corrected_*`; `clipped` when a correction left
    [0, 1])."""

    judge: str
    category: str
    pairs: int
    errors: int
    observed_share: Metric
    corrected_share: Metric
    observed_error_rate: Metric
    corrected_error_rate: Metric
    clipped: bool


class TrafficSections(SuiteSections):
    """The real-traffic audit's sections: Table 11 (`traffic_audit`), the annotators'
    agreement (`traffic_agreement`), the automatic labeller against them
    (`traffic_labeller`) with the log's corrected figures (`traffic_corrected`), and Table 12
    (`public_probes`); each absent when the store has nothing for it."""

    SUITE: ClassVar[str] = "traffic"
    traffic_audit: TrafficAudit | None = None
    traffic_agreement: TrafficAgreement | None = None
    traffic_labeller: list[LabellerRow] | None = None
    traffic_corrected: list[CorrectedRow] | None = None
    public_probes: PublicProbe | None = None
    # What de-identification removed, {source: {type: count}}: shown in the provenance.
    _removed: dict[str, dict[str, int]] = PrivateAttr(default_factory=dict)

    def provenance_counts(self) -> dict[str, dict[str, int]] | None:
        return self._removed or None
