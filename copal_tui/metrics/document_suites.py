"""Typed models, in this order, of the report's scope (judges, provenance), the structured-output
counts and the observed facets: the parts every suite's figures share (each other suite's
sections are a `SuiteSections` model in that suite's own module). The builders construct them;
the order of a model's fields is the order of its keys in the JSON (see `document_base`).
"""

from __future__ import annotations

from copal_tui.metrics.document_base import FlatModel, Metric
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
    # A role a suite's descriptor reads from its runs' options (`Suite.provenance_roles`): the
    # allowed-edge writers of COMPASS's generating runs (reference, variants).
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

