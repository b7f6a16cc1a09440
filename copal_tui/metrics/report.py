"""The report as one document: runs the queries of `store.metrics_sql`, feeds the metric
functions, and records every exclusion with its reason.

This module owns the choices that span sections: which judge is primary (default: the
contract-mode judge with the most usable judgments), which is the reference for judge-family
sensitivity (default: the primary), and the scope (worlds). The returned dict holds floats that
may be NaN, each with a sibling `<key>_reason`; `copal_tui.export.jsondoc` turns NaN into null.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from copal_tui.metrics import frame
from copal_tui.metrics.agreement import human_agreement
from copal_tui.metrics.contrast import paired_contrast
from copal_tui.metrics.corpus import corpus_profile
from copal_tui.metrics.intervals import CONFIDENCE
from copal_tui.metrics.rates import (
    ablation,
    corrected_error_rates,
    error_rates,
    facet_atlas,
    one_sided,
)
from copal_tui.metrics.sensitivity import judge_sensitivity
from copal_tui.metrics.validity import judge_validity
from store import metrics_sql as q
from store.db import Database

REPORT_FORMAT = "copal-report/1"
MODES = ("contract", "full_policy")


class ReportError(Exception):
    """A report option the store cannot satisfy (unknown world or judge)."""


@dataclass(frozen=True)
class ReportOptions:
    worlds: tuple[str, ...] = ()
    judge: str | None = None
    mode: str = "contract"
    reference_judge: str | None = None
    bootstrap: int = 1000
    seed: int = 0


@dataclass
class _Exclusions:
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, section: str, what: str, reason: str, count: int) -> None:
        if count:
            self.rows.append({"section": section, "what": what, "reason": reason,
                              "count": int(count)})


def parse_setting(text: str) -> tuple[str, str | None]:
    """`judge` or `judge@mode` (judge names may contain ':' as in ollama tags, never '@mode')."""
    for mode in MODES:
        if text.endswith(f"@{mode}"):
            return text[: -len(mode) - 1], mode
    return text, None


def _pick(settings: Sequence[tuple[str, str, int, int]], judge: str | None,
          mode: str | None, what: str) -> tuple[str, str] | None:
    usable = [s for s in settings if s[2] > 0]
    if judge is not None:
        found = [s for s in usable if s[0] == judge and (mode is None or s[1] == mode)]
        if not found:
            known = ", ".join(f"{s[0]}@{s[1]}" for s in usable) or "none"
            raise ReportError(f"no usable judgments by {what} {judge!r}"
                              f"{f' in {mode} mode' if mode else ''} (judge settings: {known})")
    else:
        found = [s for s in usable if mode is None or s[1] == mode] or usable
    if not found:
        return None
    # Most usable judgments first; ties by name so the choice is stable.
    best = sorted(found, key=lambda s: (-s[2], s[0], s[1]))[0]
    return best[0], best[1]


def build_report(db: Database, opts: ReportOptions) -> dict[str, Any]:
    worlds = sorted(set(opts.worlds)) or None
    known = q.known_worlds(db)
    if worlds:
        unknown = sorted(set(worlds) - set(known))
        if unknown:
            raise ReportError(f"unknown world(s): {', '.join(unknown)}")
    ex = _Exclusions()
    f = frame.load(db, worlds)
    settings = frame.setting_counts(f)
    primary = _pick(settings, opts.judge, opts.mode, "judge")
    ref_judge, ref_mode = parse_setting(opts.reference_judge) if opts.reference_judge \
        else (None, None)
    reference = primary if ref_judge is None else _pick(settings, ref_judge, ref_mode,
                                                        "reference judge")
    for judge, mode, _usable, failed in settings:
        ex.add("judgments", f"{judge}@{mode}", "the judge call failed or gave no verdict",
               failed)

    doc: dict[str, Any] = {"format": REPORT_FORMAT}
    doc["scope"] = {
        "worlds": worlds or known,
        "primary_judge": None if primary is None else {"judge": primary[0], "mode": primary[1]},
        "reference_judge": None if reference is None else {"judge": reference[0],
                                                           "mode": reference[1]},
        "judge_settings": [{"judge": j, "mode": m, "usable": int(u), "failed": int(b)}
                           for j, m, u, b in settings],
        "bootstrap": opts.bootstrap, "seed": opts.seed, "confidence": CONFIDENCE,
    }
    _rates(f, doc, primary, ex)
    _validity(db, f, doc, primary, opts, ex)
    _sensitivity(f, doc, reference, ex)
    doc["corpus"] = corpus_profile({**q.corpus_counts(db, worlds), **frame.corpus_arrays(f)})
    doc["exclusions"] = ex.rows
    return doc


def _rates(f: frame.Frame, doc: dict[str, Any], primary: tuple[str, str] | None,
           ex: _Exclusions) -> None:
    sid = f.setting_index(primary)
    cells = frame.composed_cells(f, sid) if primary else []
    rows, overall = error_rates(cells)
    doc["error_rates"] = rows
    doc["overall_error_rate"] = overall["error_rate"]
    if overall["n"] == 0:
        doc["overall_error_rate_reason"] = "no judged composed responses"
    doc["overall"] = overall
    doc["facet_atlas"] = facet_atlas(cells)
    doc["one_sided"] = one_sided(cells)
    ex.add("facet_atlas", "errors", "imported with a bare error flag and no marks, so the "
           "direction is unknown", doc["one_sided"]["unknown_direction"])
    if primary:
        for model, failed_resp, _answered, failed_j, unjudged in frame.composed_coverage(f, sid):
            ex.add("error_rates", f"responses of {model}", "the target model's call failed "
                   "(no answer to judge)", failed_resp)
            ex.add("error_rates", f"responses of {model}", "the primary judge's call failed "
                   "or gave no verdict", failed_j)
            ex.add("error_rates", f"responses of {model}", "not judged by the primary judge "
                   "(skipped)", unjudged)
    doc["paired_contrast"] = paired_contrast(frame.paired_contrast(f, sid) if primary else [])
    for row in doc["paired_contrast"]:
        ex.add("paired_contrast", f"composed items of {row['model']}",
               "the item has no single-policy projections", row["excluded_no_projections"])
        ex.add("paired_contrast", f"composed items of {row['model']}", "some projection was "
               "not answered or not judged by the primary judge",
               row["excluded_incomplete_projections"])
    methods = frame.method_cells(f, sid) if primary else []
    doc["ablation"], left_out = ablation(methods, frame.selected_by_method(f))
    for model in left_out:
        ex.add("ablation", f"judged responses of {model}", "the model was not judged on every "
               "construction method, so it is left out of the pooled rates (kept in by_model)",
               sum(r["by_model"].get(model, {}).get("n", 0) for r in doc["ablation"]))


def _validity(db: Database, f: frame.Frame, doc: dict[str, Any],
              primary: tuple[str, str] | None, opts: ReportOptions, ex: _Exclusions) -> None:
    labels, adjudications = q.label_rows(db), q.adjudication_rows(db)
    ref, sources = frame.reference(f, labels, adjudications)
    scoped = frame.labels_in_scope(f, labels)
    n_reference = sources["adjudicated"] + sources["majority"]
    doc["reference_labels"] = {
        "n": n_reference, "adjudicated": sources["adjudicated"],
        "majority": sources["majority"], "ties_excluded": sources["tie"],
        "annotators": sorted({a for _r, a, _e in scoped}),
        "adjudicators": sorted({a for _r, a, _e in frame.labels_in_scope(f, adjudications)}),
    }
    ex.add("judge_validity", "labelled responses", "annotators split evenly and there is no "
           "adjudication (tie)", sources["tie"])
    validity = judge_validity(frame.validity_cells(f, ref), opts.bootstrap, opts.seed)
    agreement = human_agreement(scoped)
    for entry in validity:
        entry["human_kappa_ceiling"] = agreement["mean_pairwise_kappa"]
        if "mean_pairwise_kappa_reason" in agreement:
            entry["human_kappa_ceiling_reason"] = agreement["mean_pairwise_kappa_reason"]
        ex.add("judge_validity", f"reference-labelled responses for {entry['judge']}@"
               f"{entry['mode']}", "the judge did not judge them (skipped or failed)",
               n_reference - entry["n"])
    doc["judge_validity"] = validity
    doc["human_agreement"] = agreement
    ex.add("human_agreement", "labelled responses", "labelled by one annotator only (no "
           "agreement to measure)", agreement["n_responses"] - agreement["n_multiply_labelled"])
    found = None if primary is None else next(
        (v for v in validity if (v["judge"], v["mode"]) == primary), None)
    doc["corrected_error_rates"] = corrected_error_rates(
        doc["error_rates"], found, *(primary or ("", "contract")))


def _sensitivity(f: frame.Frame, doc: dict[str, Any], reference: tuple[str, str] | None,
                 ex: _Exclusions) -> None:
    # Only settings that judged some composed response take part: a judge run on projections
    # or ablation items alone would otherwise empty the common set.
    cells, majority, judged = frame.sensitivity(f)
    doc["judge_sensitivity"] = judge_sensitivity(cells, majority, reference or ("", ""))
    common = sum(int(m[1]) for m in majority)
    ex.add("judge_sensitivity", "composed responses", "not judged by every judge setting",
           judged - common)
    ex.add("judge_sensitivity", "composed responses (majority row)", "the judges' votes are "
           "tied", sum(int(m[3] or 0) for m in majority))
