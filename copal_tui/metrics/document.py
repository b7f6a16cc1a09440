"""The report as one typed document: `ReportDocument`, a pydantic model of every section
(models in `document_sections` and `document_suites`, metrics in `document_base`), so code reads
`doc.validity_of("J1", "contract").f1.value`, `.reason` and `.interval` instead of keys.

`build_document` builds it from the same section builders as `report.build_report`, and
`to_dict()` gives back exactly the dict they produce (NaN where undefined, every key in its
place), which the exporters and the dashboard still read; `copal_tui.export.jsondoc` writes
the JSON from it, so `copal report --json` is unchanged byte for byte.

Sections are optional where the report leaves them out (no COMPASS suite, no judged dialogue);
`observed_facets` is typed loosely until its own model exists; any other key a builder adds is
kept (after the known ones) rather than dropped.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import JsonValue

from copal_tui.metrics.document_base import GENERIC_REASON, OMIT, PLAIN, FlatModel, Interval, Metric
from copal_tui.metrics.document_sections import (
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
    OutputCount,
    PasJudgeValidity,
    PasRow,
    PasVsComposedRow,
    Scope,
)

__all__ = ["GENERIC_REASON", "Interval", "Metric", "ReportDocument", "build_document"]


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
    # Target facet x observed facet of errors (judge and humans): typed loosely for now.
    observed_facets: Annotated[JsonValue | None, OMIT] = None
    structured_outputs: list[OutputCount]

    @classmethod
    def from_report(cls, doc: dict[str, Any]) -> ReportDocument:
        """The model of a report dict as `report.build_report` returns it."""
        return cls.model_validate(_plain(doc))

    @property
    def validity(self) -> dict[str, JudgeValidity]:
        """Judge validity by setting, keyed `judge@mode`."""
        return {f"{v.judge}@{v.mode}": v for v in self.judge_validity}

    def validity_of(self, judge: str, mode: str) -> JudgeValidity | None:
        return self.validity.get(f"{judge}@{mode}")


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (the builders may leave a few), containers copied."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and hasattr(value, "dtype"):
        return value.item()
    return value


def build_document(db: Any, opts: Any) -> ReportDocument:
    """`report.build_report` as a `ReportDocument` (same options, same errors)."""
    from copal_tui.metrics.report import build_report

    return ReportDocument.from_report(build_report(db, opts))
