"""The report as one typed document: `ReportDocument`, a pydantic model of every section
(models in `document_copal` and `document_suites`, metrics in `document_base`), so code reads
`doc.judge_validity[0].f1.value`, `.reason` and `.interval` instead of keys.
`copal_tui.services.report.build_document` builds it; `copal_tui.export.jsondoc` writes the
JSON from its `to_dict()`.
"""

from __future__ import annotations

from copal_tui.metrics import document_copal as copal
from copal_tui.metrics import document_suites as suites
from copal_tui.metrics.document_base import FlatModel, Metric

__all__ = ["Metric", "ReportDocument"]


class ReportDocument(FlatModel):
    format: str
    scope: suites.Scope
    error_rates: list[copal.ModelErrorRate]
    overall_error_rate: Metric
    overall: copal.OverallRate
    facet_atlas: dict[str, copal.FacetAtlasRow]
    one_sided: copal.OneSided
    paired_contrast: list[copal.PairedContrastRow]
    ablation: list[copal.AblationRow]
    controls: copal.Controls
    reference_labels: copal.ReferenceLabels
    judge_validity: list[copal.JudgeValidity]
    human_agreement: copal.HumanAgreement
    corrected_error_rates: copal.CorrectedErrorRates
    judge_sensitivity: list[copal.SensitivityRow]
    corpus: copal.Corpus
    exclusions: list[copal.Exclusion]
    # COMPASS: present only when a world in scope has a suite.
    pas: list[suites.PasRow] | None = None
    pas_failure_modes: list[suites.FailureModeRow] | None = None
    compass_summary: list[suites.CompassSummaryRow] | None = None
    pas_vs_composed: list[suites.PasVsComposedRow] | None = None
    pas_judge_validity: list[suites.PasJudgeValidity] | None = None
    # Dialogue judging: present only when some dialogue has a judge attempt.
    dialogue_judging: list[suites.DialogueRow] | None = None
    dialogue_error_taxonomy: list[suites.ErrorTypeCount] | None = None
    observed_facets: suites.ObservedFacets | None = None
    structured_outputs: list[suites.OutputCount]

