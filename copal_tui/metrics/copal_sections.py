"""The composed-policy (COPAL) sections of the report document, computed from the report's reads
(`copal_tui.domain.report_rows.ReportReads`): loads them into a `frame.Frame`, feeds the metric
functions and records every exclusion with its reason. `copal_tui.metrics.assemble` adds the
other suites' sections, the observed facets and the provenance; this module is imported only
once the reads are running (it loads numpy).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from copal_tui.domain.report_rows import ReportReads
from copal_tui.metrics import controls, frame
from copal_tui.metrics import document_copal as copal
from copal_tui.metrics.agreement import human_agreement
from copal_tui.metrics.contrast import EXCLUSION_REASONS, paired_contrast
from copal_tui.metrics.corpus import corpus_profile
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_suites import JudgeSettingCount, Scope
from copal_tui.metrics.intervals import CONFIDENCE
from copal_tui.metrics.options import REPORT_FORMAT, ReportOptions, parse_setting, pick, why_primary
from copal_tui.metrics.provenance import real_targets
from copal_tui.metrics.rates import (
    ablation,
    corrected_error_rates,
    error_rates,
    facet_atlas,
    one_sided,
    rate,
)
from copal_tui.metrics.sensitivity import judge_sensitivity
from copal_tui.metrics.validity import judge_validity


@dataclass
class Exclusions:
    """The report's `exclusions`: what each section left out, why, and how much."""

    rows: list[copal.Exclusion] = field(default_factory=list)

    def add(self, section: str, what: str, reason: str, count: int) -> None:
        if count:  # the report lists only exclusions that left something out
            self.rows.append(copal.Exclusion(section=section, what=what, reason=reason,
                                             count=int(count)))


def setting(chosen: tuple[str, str] | None) -> copal.JudgeSetting | None:
    return None if chosen is None else copal.JudgeSetting(judge=chosen[0], mode=chosen[1])


def build(reads: ReportReads, worlds: list[str] | None, shown: list[str],
          opts: ReportOptions) -> tuple[ReportDocument, frame.Frame]:
    """The report's COPAL sections over `worlds` (None: all; `shown` is the scope's list of
    worlds), and the frame they were computed over (the observed facets are counted over it
    too). The document has no suite sections, provenance or structured-output counts yet."""
    ex = Exclusions()
    f = frame.load(reads, worlds)
    # The labels need no judgment: worked on while the judgments are still being read.
    ref, labels, agreement = _labels(reads, f)
    frame.add_judgments(f, reads)
    settings = frame.setting_counts(f)
    primary = pick(settings, opts.judge, opts.mode, "judge")
    reference = pick(settings, *parse_setting(opts.reference_judge), "reference judge") \
        if opts.reference_judge else primary
    for judge, mode, _usable, failed in settings:
        ex.add("judgments", f"{judge}@{mode}", "the judge call failed or gave no verdict",
               failed)
    scope = Scope(
        worlds=shown, primary_judge=setting(primary), reference_judge=setting(reference),
        primary_judge_reason=why_primary(settings, primary, opts),
        judge_settings=[JudgeSettingCount(judge=j, mode=m, usable=int(u), failed=int(b))
                        for j, m, u, b in settings],
        bootstrap=opts.bootstrap, seed=opts.seed, confidence=CONFIDENCE)
    rates = _rates(f, primary, ex)
    validity = judge_validity(frame.validity_cells(f, ref), opts.bootstrap, opts.seed,
                              ceiling=agreement.mean_pairwise_kappa)
    _validity_exclusions(labels, agreement, validity, ex)
    found = next((v for v in validity if (v.judge, v.mode) == primary), None)
    doc = ReportDocument(
        format=REPORT_FORMAT, scope=scope, **rates,
        controls=controls.build(f, reads, primary), reference_labels=labels,
        judge_validity=validity, human_agreement=agreement,
        corrected_error_rates=corrected_error_rates(rates["error_rates"], found,
                                                    *(primary or ("", "contract"))),
        judge_sensitivity=_sensitivity(f, reference, ex),
        corpus=corpus_profile({**reads.corpus.by_key(), **frame.corpus_arrays(f)}),
        exclusions=ex.rows, structured_outputs=[])
    return doc, f


class _RateSections(TypedDict):
    error_rates: list[copal.ModelErrorRate]
    overall_error_rate: Metric
    overall: copal.OverallRate
    facet_atlas: dict[str, copal.FacetAtlasRow]
    one_sided: copal.OneSided
    paired_contrast: list[copal.PairedContrastRow]
    ablation: list[copal.AblationRow]


def _rates(f: frame.Frame, primary: tuple[str, str] | None, ex: Exclusions) -> _RateSections:
    sid = f.setting_index(primary)
    cells, directed = frame.composed_cells(f, sid) if primary else ([], [])
    rows = error_rates(cells)
    # Pooled figures are over real targets: the offline reference bots are calibration and are
    # shown per model only (unless they are all there is, as in the offline demo).
    targets = real_targets(r.model for r in rows)
    pool = [c for c in directed if c[0] in targets]
    pooled = [r for r in rows if r.model in targets]
    overall = rate(sum(r.errors for r in pooled), sum(r.n for r in pooled))
    sided = one_sided(pool, directed)
    for row in rows:
        if row.model not in targets:
            ex.add("overall", f"judged responses of {row.model}", "a reference bot (offline "
                   "engine): shown per model, not pooled with the real targets", row.n)
    ex.add("facet_atlas", "errors", "imported with a bare error flag and no marks, so the "
           "direction is unknown", sided.unknown_direction)
    for model, failed_resp, _answered, failed_j, unjudged in (
            frame.composed_coverage(f, sid) if primary else []):
        what = f"responses of {model}"
        ex.add("error_rates", what, "the target model's call failed (no answer to judge)",
               failed_resp)
        ex.add("error_rates", what, "the primary judge's call failed or gave no verdict",
               failed_j)
        ex.add("error_rates", what, "not judged by the primary judge (skipped)", unjudged)
    contrast = paired_contrast(frame.paired_contrast(f, sid) if primary else [])
    for entry in contrast:
        for key, why in EXCLUSION_REASONS.items():
            ex.add("paired_contrast", f"composed items of {entry.model}", why,
                   getattr(entry, key))
    methods = frame.method_cells(f, sid) if primary else []
    by_method, left_out = ablation(methods, frame.selected_by_method(f), targets)
    for model in left_out:
        ex.add("ablation", f"judged responses of {model}", "the model was not judged on every "
               "construction method, so it is left out of the pooled rates (kept in by_model)",
               sum(r.by_model[model].n for r in by_method if model in r.by_model))
    # The budget is matched per world to COPAL's selected suite; `ablate` says so when a
    # method's screened pool was smaller, and so does the report (unless ablate never ran).
    budget = {r.method: r.selected_items for r in by_method}
    baselines = ("raw_policy", "clause_only", "no_facet")
    if any(budget.get(method) for method in baselines):
        for method in baselines:
            ex.add("ablation", f"selected {method} items", "below the matched budget (COPAL's "
                   "selected suite): the method's screened candidate pool was too small",
                   max(0, budget.get("copal", 0) - budget.get(method, 0)))
    reason = None if overall.n else "no judged composed responses"
    return _RateSections(
        error_rates=rows, overall_error_rate=Metric.of(overall.error_rate.value, reason),
        overall=copal.OverallRate(n=overall.n, errors=overall.errors,
                                  error_rate=overall.error_rate, models=targets),
        facet_atlas=facet_atlas(pool), one_sided=sided, paired_contrast=contrast,
        ablation=by_method)


def _labels(reads: ReportReads, f: frame.Frame) -> tuple[np.ndarray, copal.ReferenceLabels,
                                                          copal.HumanAgreement]:
    """The human side of judge validity: each response's reference label, how the references
    were formed and the annotators' agreement."""
    ref, sources = frame.reference(f, reads.labels, reads.adjudications)
    scoped = frame.labels_in_scope(f, reads.labels)
    adjudicators = frame.labels_in_scope(f, reads.adjudications)
    labels = copal.ReferenceLabels(
        n=sources["adjudicated"] + sources["majority"], adjudicated=sources["adjudicated"],
        majority=sources["majority"], ties_excluded=sources["tie"],
        annotators=sorted({a for _r, a, _e in scoped}),
        adjudicators=sorted({a for _r, a, _e in adjudicators}))
    return ref, labels, human_agreement(scoped)


def _validity_exclusions(labels: copal.ReferenceLabels, agreement: copal.HumanAgreement,
                         validity: list[copal.JudgeValidity], ex: Exclusions) -> None:
    ex.add("judge_validity", "labelled responses", "annotators split evenly and there is no "
           "adjudication (tie)", labels.ties_excluded)
    for entry in validity:
        ex.add("judge_validity", f"reference-labelled responses for {entry.judge}@"
               f"{entry.mode}", "the judge did not judge them (skipped or failed)",
               labels.n - entry.n)
    ex.add("human_agreement", "labelled responses", "labelled by one annotator only (no "
           "agreement to measure)", agreement.n_responses - agreement.n_multiply_labelled)


def _sensitivity(f: frame.Frame, reference: tuple[str, str] | None,
                 ex: Exclusions) -> list[copal.SensitivityRow]:
    # Only settings that judged some composed response take part: a judge run on projections
    # or ablation items alone would otherwise empty the common set. Each judge mode is its own
    # family: contract judges are compared (and vote) among themselves, full-policy judges
    # likewise, each against the reference judge when it is of that mode, else against the
    # mode's setting with the most common judgments.
    rows: list[copal.SensitivityRow] = []
    for mode in sorted({m for _j, m in f.settings}):
        cells, majority, judged = frame.sensitivity(f, mode)
        if not cells:
            continue
        n_by: Counter[tuple[str, str]] = Counter()
        for judge, m, _model, n, _e in cells:
            n_by[(judge, m)] += int(n)
        ref = reference if reference is not None and reference[1] == mode \
            else min(n_by, key=lambda k: (-n_by[k], k))
        rows += judge_sensitivity(cells, majority, ref)
        common = sum(int(m[1]) for m in majority)
        ex.add("judge_sensitivity", f"composed responses ({mode} judges)",
               "not judged by every judge setting of the mode", judged - common)
        if len({(c[0], c[1]) for c in cells}) > 1:
            ex.add("judge_sensitivity", f"composed responses (majority of {mode} judges)",
                   "the judges' votes are tied", sum(int(m[3] or 0) for m in majority))
    return rows
