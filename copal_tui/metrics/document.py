"""The report as one typed document: `ReportDocument`, a pydantic model of every section
(models in `document_copal` and `document_suites`, metrics in `document_base`), so code reads
`doc.judge_validity[0].f1.value`, `.reason` and `.interval` instead of keys.
`copal_tui.services.report.build_document` builds it; `copal_tui.export.jsondoc` writes the
JSON from its `to_dict()`.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import Field

from copal_tui.metrics import document_copal as copal
from copal_tui.metrics import document_suites as parts
from copal_tui.metrics.document_base import INLINE, FlatModel, Metric, SuiteSections

__all__ = ["Metric", "ReportDocument", "SuiteSections"]


S = TypeVar("S", bound=SuiteSections)


class ReportDocument(FlatModel):
    format: str
    scope: parts.Scope
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
    # The other suites' sections by suite, in registration order, each present only when the
    # store has something for it (COMPASS: a world in scope has a suite; dialogues: a judge
    # attempt; ...); their keys are written at the top level.
    suites: Annotated[dict[str, SuiteSections], INLINE] = Field(default_factory=dict)
    observed_facets: parts.ObservedFacets | None = None
    structured_outputs: list[parts.OutputCount]


    def section(self, kind: type[S]) -> S | None:
        """The sections of `kind`'s suite, when the report has them."""
        found = self.suites.get(kind.SUITE)
        return found if isinstance(found, kind) else None
