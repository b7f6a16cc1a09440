"""The report as one typed document: `ReportDocument`, a pydantic model of every section
(models in `document_copal` and `document_suites`, metrics in `document_base`), so code reads
`doc.validity_of("J1", "contract").f1.value`, `.reason` and `.interval` instead of keys.

`copal_tui.services.report.build_document` builds it; `to_dict()` gives the JSON's layout (NaN
where undefined, every key in its place), from which `copal_tui.export.jsondoc` writes the
JSON. Sections are optional where the report leaves them out (no COMPASS suite, no judged
dialogue).
"""

from __future__ import annotations

from typing import Annotated

from copal_tui.metrics.document_base import GENERIC_REASON, OMIT, PLAIN, FlatModel, Interval, Metric
from copal_tui.metrics.document_copal import (
    AblationRow,
    Controls,
    Corpus,
    CorrectedErrorRates,
    Exclusion,
    FacetAtlasRow,
    HumanAgreement,
    JudgeValidity,
    ModelErrorRate,
    OneSided,
    OverallRate,
    PairedContrastRow,
    ReferenceLabels,
    SensitivityRow,
)
from copal_tui.metrics.document_suites import (
    CompassSummaryRow,
    DialogueRow,
    ErrorTypeCount,
    FailureModeRow,
    ObservedFacets,
    OutputCount,
    PasJudgeValidity,
    PasRow,
    PasVsComposedRow,
    Scope,
)

__all__ = ["GENERIC_REASON", "Interval", "Metric", "ReportDocument"]


class ReportDocument(FlatModel):
    format: str
    scope: Scope
    error_rates: list[ModelErrorRate]
    overall_error_rate: Annotated[Metric, PLAIN]
    overall: OverallRate
    facet_atlas: dict[str, FacetAtlasRow]
    one_sided: OneSided
    paired_contrast: list[PairedContrastRow]
    ablation: list[AblationRow]
    controls: Controls
    reference_labels: ReferenceLabels
    judge_validity: list[JudgeValidity]
    human_agreement: HumanAgreement
    corrected_error_rates: CorrectedErrorRates
    judge_sensitivity: list[SensitivityRow]
    corpus: Corpus
    exclusions: list[Exclusion]
    # COMPASS: present only when a world in scope has a suite.
    pas: Annotated[list[PasRow] | None, OMIT] = None
    pas_failure_modes: Annotated[list[FailureModeRow] | None, OMIT] = None
    compass_summary: Annotated[list[CompassSummaryRow] | None, OMIT] = None
    pas_vs_composed: Annotated[list[PasVsComposedRow] | None, OMIT] = None
    pas_judge_validity: Annotated[list[PasJudgeValidity] | None, OMIT] = None
    # Dialogue judging: present only when some dialogue has a judge attempt.
    dialogue_judging: Annotated[list[DialogueRow] | None, OMIT] = None
    dialogue_error_taxonomy: Annotated[list[ErrorTypeCount] | None, OMIT] = None
    # Target facet x observed facet of errors (judge and humans).
    observed_facets: Annotated[ObservedFacets | None, OMIT] = None
    structured_outputs: list[OutputCount]

    @property
    def validity(self) -> dict[str, JudgeValidity]:
        """Judge validity by setting, keyed `judge@mode`."""
        return {f"{v.judge}@{v.mode}": v for v in self.judge_validity}

    def validity_of(self, judge: str, mode: str) -> JudgeValidity | None:
        return self.validity.get(f"{judge}@{mode}")
