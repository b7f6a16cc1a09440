"""Typed models, in this order, of the report's scope (judges, provenance), the structured-output
counts and the sections of the other suites: COMPASS (`pas*`, `compass_summary`), dialogue
judging and the observed facets. The builders construct them; the order of a model's fields is
the order of its keys in the JSON (see `document_base`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from copal_tui.metrics.document_base import Flat, FlatModel, Metric, SuiteSections
from copal_tui.metrics.document_copal import JudgeSetting


class JudgeSettingCount(JudgeSetting):
    usable: int
    failed: int


class ModelSetting(FlatModel):
    """What one model was sent in one role (from the run manifests' `model_settings`)."""

    model: str
    role: str
    litellm_model: str | None
    temperature: float | None
    max_tokens: int | None
    reasoning_effort: str | None
    reasoning_effort_sent: bool | None


class SuiteProvenance(FlatModel):
    """The models behind one suite's figures, by role, and what was imported without a run."""

    generator: list[str]
    verifier: list[str]
    prefilter: list[str]
    target: list[str]
    judge: list[str]
    imported: dict[str, int]
    sections: list[str]
    heuristic: list[str]
    caveat: str | None = None
    # COMPASS only: the allowed-edge writers of the compass_generate runs (reference, variants).
    edge_writer: list[str] | None = None
    settings: list[ModelSetting] | None = None  # absent when no run in scope recorded them
    # The suite's choices behind its figures ({option: values its runs used}; the suite's
    # descriptor names them): absent when no run in scope made one.
    options: dict[str, list[str]] | None = None
    # What the suite's sections add besides the models (the traffic suite: what
    # de-identification removed, {source: {type: count}}): absent when nothing.
    removed: dict[str, dict[str, int]] | None = None


class Scope(FlatModel):
    worlds: list[str]
    primary_judge: JudgeSetting | None
    primary_judge_reason: str
    reference_judge: JudgeSetting | None
    judge_settings: list[JudgeSettingCount]
    bootstrap: int
    seed: int
    confidence: float
    provenance: dict[str, SuiteProvenance] | None = None


class OutputCount(FlatModel):
    stage: str
    model: str
    task: str
    valid: int
    repaired: int
    failed: int


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


class DialogueRow(FlatModel):
    """CompliBench's figures per judge and domain over `attempts` attempts of `conversations`
    conversations: plain floats, None (null, without a reason) when their denominator is
    empty, as CompliBench writes them. The headline figures are CompliBench's own reading of
    each attempt's first answer, pooling `files` conversation x attempt judgements
    (`not_scored`: attempts whose first answer is JSON but not an object, which the reference
    never scores). The `repaired_*` figures are copal's reading (its parser and repair round),
    pooling `repaired_files`: `repaired_attempts` were read after a repair round,
    `unparsed_attempts` gave no readable verdict even then (every turn wrong), and
    `changed_by_repair` are read otherwise than in the headline."""

    judge: str
    domain: str
    conversations: int
    attempts: int
    binary: bool
    compliant_turns: int
    violation_turns: int
    files: int
    not_scored: int
    compliant_turn_accuracy: float | None
    violation_detection_accuracy: float | None
    strict_violation_detection_accuracy: float | None
    conversation_accuracy: float | None
    precision: float | None
    recall: float | None
    repaired_files: int
    repaired_attempts: int
    unparsed_attempts: int
    changed_by_repair: int
    repaired_compliant_turn_accuracy: float | None
    repaired_violation_detection_accuracy: float | None
    repaired_strict_violation_detection_accuracy: float | None
    repaired_conversation_accuracy: float | None
    repaired_precision: float | None
    repaired_recall: float | None


class ErrorTypeCount(FlatModel):
    judge: str
    domain: str
    error_type: str
    count: int


class DialogueSections(SuiteSections):
    """The dialogue-judging sections: CompliBench's figures per judge and domain, and the
    reviewers' error types of the judges' wrong predictions."""

    SUITE: ClassVar[str] = "dialogue"
    dialogue_judging: list[DialogueRow]
    dialogue_error_taxonomy: list[ErrorTypeCount]


class FacetRow(FlatModel):
    """Errors of one target facet by observed facet (the section's `columns`)."""

    target_facet: str
    errors: int
    counts: dict[str, int]


class FacetTable(FlatModel):
    """Target x observed facet counts of one side; the human side says what it left out, the
    judge side how many stored facet names it could not read (absent without a judge)."""

    n_errors: int
    rows: list[FacetRow]
    error_ties_excluded: int | None = None
    facet_ties_excluded: int | None = None
    unrecognised_facets: int | None = None


class FacetAgreement(FlatModel):
    n_both_errors: int
    n_compared: int
    n_agree: int
    agreement: Metric
    kappa: Metric


class ObservedFacets(FlatModel):
    """Target facet x observed facet of errors, by the primary judge and by the human
    reference (`copal_tui.metrics.facets`); `judge` and `mode` are None, with `reason`, when
    no judge setting has usable judgments."""

    scope: str
    reference: str
    columns: list[str]
    judge: str | None
    mode: str | None
    reason: str | None = None
    judge_table: FacetTable
    human_table: FacetTable
    agreement: FacetAgreement
    heuristic: list[str]
    caveat: str | None = None

