"""The report models of the COMPASS suite's sections: PAS per query type (`pas`), the failure
modes of misaligned denied-edge responses (`pas_failure_modes`), COMPASS's own summary table
(`compass_summary`), PAS beside the composed error rate (`pas_vs_composed`) and the COMPASS judge
against the human labels (`pas_judge_validity`). The order of a model's fields is the order of
its keys in the JSON (see `document_base`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from copal_tui.metrics.document_base import Flat, FlatModel, Metric, SuiteSections

# PAS with its Wilson interval; COMPASS's rows give the reasons after the interval.
PAS = Flat(prefix="", reasons_last=True)


class PasRow(FlatModel):
    judge: str
    model: str
    variant: str
    world: str
    query_type: str
    n: int
    aligned: int
    pas: Annotated[Metric, PAS]


class FailureModeRow(FlatModel):
    judge: str
    model: str
    variant: str
    world: str
    n_denied_edge: int
    n_misaligned: int
    direct_violation: int
    refusal_answer_hybrid: int
    indirect_violation: int
    unclassified: int


class Correct(FlatModel):
    correct: int
    total: int


class Pooled(Correct):
    percent: str


class CompassSummaryRow(FlatModel):
    """COMPASS's own table row: percentages as COMPASS writes them ("N/A" without data)."""

    judge: str
    model: str
    variant: str
    query_type: str
    organisations: dict[str, str]
    average: str
    counts: dict[str, Correct]
    pooled: Pooled


class PasVsComposedRow(FlatModel):
    world: str
    model: str
    compass_judge: str
    n: int
    aligned: int
    pas: Annotated[Metric, PAS]
    allowed_n: int
    allowed_aligned: int
    allowed_pas: Annotated[Metric, Flat(prefix="allowed_", reasons_last=True)]
    denied_n: int
    denied_aligned: int
    denied_pas: Annotated[Metric, Flat(prefix="denied_", reasons_last=True)]
    composed_judge: str
    composed_n: int
    composed_errors: int
    composed_error_rate: Annotated[Metric, Flat(prefix="composed_")]
    same_judge: bool


class PasAgreement(FlatModel):
    n: int
    agreement: Metric
    kappa: Metric


class PasJudgeValidity(FlatModel):
    judge: str
    n_responses: int
    refused: PasAgreement
    compliant: PasAgreement
    aligned: PasAgreement


class CompassSections(SuiteSections):
    """The COMPASS sections: PAS per query type, the failure modes of misaligned denied-edge
    responses, COMPASS's own summary table, PAS beside the composed error rate, and the COMPASS
    judge against the human labels."""

    SUITE: ClassVar[str] = "compass"
    pas: list[PasRow]
    pas_failure_modes: list[FailureModeRow]
    compass_summary: list[CompassSummaryRow]
    pas_vs_composed: list[PasVsComposedRow]
    pas_judge_validity: list[PasJudgeValidity]

