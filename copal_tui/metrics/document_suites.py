"""Typed models of the report's scope (judges, provenance) and of the sections of the other
suites: COMPASS (`pas*`, `compass_summary`), dialogue judging, the observed facets and the
structured-output counts. The builders construct them; the order of a model's fields is the
order of its keys in the JSON (see `document_base`).
"""

from __future__ import annotations

from typing import Annotated

from copal_tui.metrics.document_base import OMIT, PLAIN, Flat, FlatModel, Metric
from copal_tui.metrics.document_copal import JudgeSetting

# ------------------------------------------------------------------ scope


class JudgeSettingCount(FlatModel):
    judge: str
    mode: str
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
    caveat: Annotated[str | None, OMIT] = None
    # COMPASS only: the allowed-edge writers of the compass_generate runs (reference, variants).
    edge_writer: Annotated[list[str] | None, OMIT] = None
    # Per model and role: temperature, max_tokens, reasoning effort (absent before recorded).
    settings: Annotated[list[ModelSetting] | None, OMIT] = None


class Scope(FlatModel):
    worlds: list[str]
    primary_judge: JudgeSetting | None
    primary_judge_reason: str
    reference_judge: JudgeSetting | None
    judge_settings: list[JudgeSettingCount]
    bootstrap: int
    seed: int
    confidence: float
    provenance: Annotated[dict[str, SuiteProvenance] | None, OMIT] = None


class OutputCount(FlatModel):
    stage: str
    model: str
    task: str
    valid: int
    repaired: int
    failed: int


# ------------------------------------------------------------------ COMPASS

# PAS with its Wilson interval; COMPASS's rows give the reasons after the interval.
PAS = Flat(low="ci_low", high="ci_high", reasons_last=True)


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


class Pooled(FlatModel):
    correct: int
    total: int
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
    allowed_pas: Annotated[Metric, Flat(low="allowed_ci_low", high="allowed_ci_high",
                                        reasons_last=True)]
    denied_n: int
    denied_aligned: int
    denied_pas: Annotated[Metric, Flat(low="denied_ci_low", high="denied_ci_high",
                                       reasons_last=True)]
    composed_judge: str
    composed_n: int
    composed_errors: int
    composed_error_rate: Annotated[Metric, Flat(low="composed_ci_low", high="composed_ci_high")]
    same_judge: bool


class PasAgreement(FlatModel):
    n: int
    agreement: Annotated[Metric, PLAIN]
    kappa: Annotated[Metric, PLAIN]


class PasJudgeValidity(FlatModel):
    judge: str
    n_responses: int
    refused: PasAgreement
    compliant: PasAgreement
    aligned: PasAgreement


# ------------------------------------------------------------------ dialogues


class DialogueRow(FlatModel):
    """CompliBench's figures per judge and domain, pooling `attempts` attempts (`files`
    conversation x attempt judgements). They are None (null, without a reason) when their
    denominator is empty, as CompliBench writes them, so they stay plain floats. How the
    answers were read: files whose predictions come from copal's repair round, files with no
    readable verdict (every turn wrong), and the accuracies of the first answers alone as
    CompliBench's parser reads them."""

    judge: str
    domain: str
    conversations: int
    attempts: int
    files: int
    binary: bool
    compliant_turns: int
    violation_turns: int
    compliant_turn_accuracy: float | None
    violation_detection_accuracy: float | None
    strict_violation_detection_accuracy: float | None
    conversation_accuracy: float | None
    precision: float | None
    recall: float | None
    repaired_attempts: int
    unparsed_attempts: int
    first_answer_compliant_turn_accuracy: float | None
    first_answer_violation_detection_accuracy: float | None
    first_answer_strict_violation_detection_accuracy: float | None
    first_answer_conversation_accuracy: float | None


class ErrorTypeCount(FlatModel):
    judge: str
    domain: str
    error_type: str
    count: int


# ------------------------------------------------------------------ observed facets


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
    error_ties_excluded: Annotated[int | None, OMIT] = None
    facet_ties_excluded: Annotated[int | None, OMIT] = None
    unrecognised_facets: Annotated[int | None, OMIT] = None


class FacetAgreement(FlatModel):
    n_both_errors: int
    n_compared: int
    n_agree: int
    agreement: Annotated[Metric, PLAIN]
    kappa: Annotated[Metric, PLAIN]


class ObservedFacets(FlatModel):
    """Target facet x observed facet of errors, by the primary judge and by the human
    reference (`copal_tui.metrics.facets`); `judge` and `mode` are None, with `reason`, when
    no judge setting has usable judgments."""

    scope: str
    reference: str
    columns: list[str]
    judge: str | None
    mode: str | None
    reason: Annotated[str | None, OMIT] = None
    judge_table: FacetTable
    human_table: FacetTable
    agreement: FacetAgreement
    heuristic: list[str]
    caveat: Annotated[str | None, OMIT] = None

