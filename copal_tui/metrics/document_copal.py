"""Typed models of the composed-policy (COPAL) sections of the report, in the report's order
(error rates to judge sensitivity, then the corpus profile and the exclusions). The builders in
`copal_tui.metrics` construct them; the order of a model's fields is the order of its keys in
the JSON (see `document_base`).
"""

from __future__ import annotations

from typing import Annotated

from copal_tui.metrics.document_base import CI, RATE, Flat, FlatModel, Metric


class Rate(FlatModel):
    """Judged responses, errors and the error rate with its Wilson interval."""

    n: int
    errors: int
    error_rate: Annotated[Metric, RATE]


class ModelErrorRate(FlatModel):
    model: str
    n: int
    errors: int
    error_rate: Annotated[Metric, RATE]
    by_pattern: dict[str, Rate]
    by_facet: dict[str, Rate]
    by_world: dict[str, Rate]
    reference_bot: bool


class OverallRate(Rate):
    models: list[str]


class FacetAtlasRow(FlatModel):
    pattern: str
    n: int
    errors: int
    under_enforcement: int
    over_enforcement: int
    mixed: int
    unknown_direction: int
    under_enforcement_share: Metric
    over_enforcement_share: Metric
    mixed_share: Metric


class Sided(FlatModel):
    errors: int
    under_enforcement: int
    over_enforcement: int
    mixed: int
    unknown_direction: int
    under_enforcement_share: Metric
    over_enforcement_share: Metric
    one_sided_share: Metric
    mixed_share: Metric


class OneSided(Sided):
    by_model: dict[str, Sided]


class PairedContrastRow(FlatModel):
    model: str
    n: int
    n_projections: int
    composed_errors: int
    projection_errors: int
    composition_induced: int
    single_error_rate: Metric
    composed_error_rate: Metric
    composition_induced_rate: Annotated[Metric, Flat(
        prefix="composition_induced_", interval_after="any_projection_error_rate")]
    any_projection_error_rate: Metric
    composed_items: int
    excluded_rejected_projections: int
    excluded_no_projections: int
    excluded_unanswered: int
    excluded_unjudged: int
    excluded_incomplete_projections: int


class AblationRow(FlatModel):
    method: str
    selected_items: int
    n: int
    errors: int
    error_rate: Annotated[Metric, RATE]
    pooled_models: list[str]
    by_model: dict[str, Rate]


class JudgeSetting(FlatModel):
    judge: str
    mode: str


class ClauseGroups(FlatModel):
    pooled: dict[str, Rate]
    by_model: dict[str, dict[str, Rate]]
    unknown_active_clauses: int


class QuartileRate(FlatModel):
    quartile: str
    n: int
    errors: int
    error_rate: Annotated[Metric, RATE]


class Quartile(FlatModel):
    """A query-length quartile; its length span is None, with a reason, when it is empty."""

    quartile: str
    items: int
    min_length: int | None
    max_length: int | None
    min_length_reason: str | None = None
    max_length_reason: str | None = None
    n: int
    errors: int
    error_rate: Annotated[Metric, RATE]


class QueryLength(FlatModel):
    unit: str
    items: int
    quartiles: list[Quartile]
    by_model: dict[str, list[QuartileRate]]


class NonInteracting(FlatModel):
    items: int
    items_by_active_clauses: dict[str, int]
    pooled: Rate
    by_model: dict[str, Rate]
    composed_pooled: Rate


class Controls(FlatModel):
    judge: JudgeSetting | None
    pooled_models: list[str]
    by_active_clauses: ClauseGroups
    by_query_length: QueryLength
    non_interacting: NonInteracting
    judge_reason: str | None = None


class ReferenceLabels(FlatModel):
    n: int
    adjudicated: int
    majority: int
    ties_excluded: int
    annotators: list[str]
    adjudicators: list[str]


class ConfusionMatrix(FlatModel):
    convention: str
    rows: str
    columns: str
    positive: str
    labels: list[str]
    cells: list[list[str]]
    matrix: list[list[int]]


# The statistics of judge validity, in the report's order (`classify.METRICS`).
VALIDITY_METRICS = ("agreement", "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa")


class Validity(FlatModel):
    """Judge against the human reference on one set of responses: the 2x2 counts and every
    statistic with its item-bootstrap interval (the `ci` object of the JSON)."""

    n_items: int
    n: int
    tp: int
    fp: int
    tn: int
    fn: int
    agreement: Annotated[Metric, CI]
    precision: Annotated[Metric, CI]
    recall: Annotated[Metric, CI]
    f1: Annotated[Metric, CI]
    fn_rate: Annotated[Metric, CI]
    fp_rate: Annotated[Metric, CI]
    kappa: Annotated[Metric, CI]

    @property
    def metrics(self) -> dict[str, Metric]:
        return {name: getattr(self, name) for name in VALIDITY_METRICS}


class ValidityBlock(Validity):
    confusion_matrix: ConfusionMatrix


class JudgeValidity(Validity, JudgeSetting):  # judge and mode first
    by_pattern: dict[str, ValidityBlock]
    confusion_matrix: ConfusionMatrix
    human_kappa_ceiling: Metric


class AnnotatorPair(FlatModel):
    annotator_a: str
    annotator_b: str
    n: int
    agreement: Metric
    kappa: Metric


class HumanAgreement(FlatModel):
    annotators: list[str]
    n_labels: int
    n_responses: int
    n_multiply_labelled: int
    pairwise: list[AnnotatorPair]
    mean_pairwise_kappa: Metric
    krippendorff_alpha: Metric


class CorrectedModel(FlatModel):
    model: str
    n: int
    observed_error_rate: float
    corrected_error_rate: Metric
    clipped: bool


class CorrectedErrorRates(JudgeSetting):
    caveat: str
    sensitivity: Annotated[Metric, Flat(reason_after="n_labelled")]
    specificity: Annotated[Metric, Flat(reason_after="n_labelled")]
    n_labelled: int
    models: list[CorrectedModel]


class SensitivityRow(JudgeSetting):
    n: int
    errors: int
    error_rate: Metric
    # Per model error rates over the common responses; NaN for a model with none.
    by_model: dict[str, float]
    ranking: list[str]
    kendall_tau: Metric
    spearman_rho: Metric
    max_shift: Metric
    is_reference: bool
    ties_excluded: int | None = None


class PatternMixRow(FlatModel):
    """One relation pattern of the selected suite beside the paper's (Table 8)."""

    pattern: str
    selected: int
    selected_share: Metric
    paper: int
    paper_share: float


class Corpus(FlatModel):
    worlds: int
    world_ids: list[str]
    policies: int
    clauses: int
    compositions: int
    composed_items: int
    projections: int
    responses: int
    judgments: int
    policies_by_kind: dict[str, int]
    clauses_by_effect: dict[str, int]
    compositions_by_pattern: dict[str, int]
    compositions_by_status: dict[str, int]
    items_by_pattern: dict[str, int]
    items_by_facet: dict[str, int]
    items_by_active_clauses: dict[str, int]
    items_by_method: dict[str, int]
    responses_by_model: dict[str, int]
    judgments_by_setting: dict[str, int]
    pattern_mix: list[PatternMixRow]


class Exclusion(FlatModel):
    section: str
    what: str
    reason: str
    count: int
