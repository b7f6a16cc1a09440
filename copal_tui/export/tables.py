"""The report flattened into named tables: one tabular model (copal_tui.export.table) behind
CSV, Markdown, LaTeX and the terminal, so the four renderings can never disagree. Rows come in
the order of the report, which is already sorted.

This file owns the COPAL tables (error rates, atlas, contrasts and controls, judge validity and
sensitivity, corpus, provenance, structured outputs) and assembles every table of a report in
order; each other suite's tables come from the function its descriptor names
(`Report.tables`: COMPASS's and CompliBench's are copal_tui.export.suite_tables'), the facet and
confusion tables from their own modules.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.suites import SUITES, load
from copal_tui.export.facet_tables import facet_tables
from copal_tui.export.table import Table, bounds, cols, estimate, field_rows, validity_blocks
from copal_tui.export.traceability import confusion_tables
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_copal import (
    VALIDITY_METRICS,
    AblationRow,
    ModelErrorRate,
    OverallRate,
    Quartile,
    Rate,
    Sided,
)
from copal_tui.metrics.provenance import line

ALL = "(all models)"
POOLED = "(pooled)"
RATE = "n:int errors:int error_rate:float ci_low:float ci_high:float"


def _rate(row: Rate | ModelErrorRate | OverallRate | AblationRow | Quartile) -> list[Any]:
    return [row.n, row.errors, *estimate(row.error_rate)]


def error_tables(doc: ReportDocument) -> list[Table]:
    main = Table("error_rates", "Error rates on composed items (primary judge), Wilson 95% CI",
                 cols(f"model:str {RATE}"))
    main.rows = [*([r.model, *_rate(r)] for r in doc.error_rates), [ALL, *_rate(doc.overall)]]
    out = [main]
    for key, label in (("by_pattern", "pattern"), ("by_facet", "facet"), ("by_world", "world")):
        t = Table(f"error_rates_{key}", f"Error rates {key.replace('_', ' ')}",
                  cols(f"model:str {label}:str {RATE}"))
        t.rows = [[r.model, name, *_rate(cell)] for r in doc.error_rates
                  for name, cell in getattr(r, key).items()]
        out.append(t)
    return out


def _sided(s: Sided) -> list[Any]:
    return [s.errors, s.under_enforcement, s.over_enforcement, s.mixed, s.unknown_direction,
            s.under_enforcement_share.value, s.over_enforcement_share.value,
            s.one_sided_share.value, s.mixed_share.value]


def atlas_tables(doc: ReportDocument) -> list[Table]:
    atlas = Table("facet_atlas", "Facet atlas: error direction shares per target facet "
                  "(all models)", cols(
                      "pattern:str facet:str n:int errors:int under_enforcement:int "
                      "over_enforcement:int mixed:int unknown_direction:int "
                      "under_enforcement_share:float over_enforcement_share:float "
                      "mixed_share:float"),
                  display=["facet", "n", "errors", "under_enforcement_share",
                           "over_enforcement_share", "mixed_share"])
    atlas.rows = [[a.pattern, facet, a.n, a.errors, a.under_enforcement, a.over_enforcement,
                   a.mixed, a.unknown_direction, a.under_enforcement_share.value,
                   a.over_enforcement_share.value, a.mixed_share.value]
                  for facet, a in doc.facet_atlas.items()]
    sided = Table("one_sided", "One-sided failures: share of errors that are only "
                  "under-enforcement (a forbidden item present, or a required gate, route or "
                  "action missing) or only over-enforcement (a required content item missing)",
                  cols("model:str errors:int under_enforcement:int over_enforcement:int "
                        "mixed:int unknown_direction:int under_enforcement_share:float "
                        "over_enforcement_share:float one_sided_share:float mixed_share:float"),
                  display=["model", "errors", "under_enforcement_share", "over_enforcement_share",
                           "one_sided_share", "mixed_share"])
    one = doc.one_sided
    sided.rows = [*([m, *_sided(s)] for m, s in one.by_model.items()), [ALL, *_sided(one)]]
    return [atlas, sided]


def contrast_tables(doc: ReportDocument) -> list[Table]:
    pc = Table("paired_contrast", "Paired contrast: single-policy projections vs composed items "
               "(items with every projection judged)", cols(
                   "model:str n:int n_projections:int single_error_rate:float "
                   "composed_error_rate:float composition_induced:int "
                   "composition_induced_rate:float composition_induced_ci_low:float "
                   "composition_induced_ci_high:float any_projection_error_rate:float "
                   "excluded_no_projections:int excluded_incomplete_projections:int "
                   "excluded_rejected_projections:int excluded_unanswered:int "
                   "excluded_unjudged:int"),
               display=["model", "n", "single_error_rate", "composed_error_rate",
                        "composition_induced_rate", "composition_induced_ci_low",
                        "composition_induced_ci_high"])
    pc.rows = [[r.model, r.n, r.n_projections, r.single_error_rate.value,
                r.composed_error_rate.value, r.composition_induced,
                *estimate(r.composition_induced_rate), r.any_projection_error_rate.value,
                r.excluded_no_projections, r.excluded_incomplete_projections,
                r.excluded_rejected_projections, r.excluded_unanswered, r.excluded_unjudged]
               for r in doc.paired_contrast]
    ab = Table("ablation", "Construction ablation at matched budget (pooled over models judged "
               "on every method)", cols(f"method:str model:str selected_items:int {RATE}"))
    for r in doc.ablation:
        ab.rows += [[r.method, POOLED, r.selected_items, *_rate(r)],
                    *([r.method, model, r.selected_items, *_rate(cell)]
                      for model, cell in r.by_model.items())]
    c = doc.controls
    t = Table("controls", "Controls (primary judge): error by active clauses, by query-length "
              "quartile, and on non-interacting multi-clause controls", cols(
                  "control:str group:str model:str min_length:int max_length:int "
                  f"{RATE}"),
              display=["control", "group", "model", "n", "error_rate", "ci_low", "ci_high"])
    by_clauses = c.by_active_clauses
    t.rows = [*(["active_clauses", group, POOLED, None, None, *_rate(fig)]
                for group, fig in by_clauses.pooled.items()),
              *(["active_clauses", group, model, None, None, *_rate(fig)]
                for model, groups in by_clauses.by_model.items() for group, fig in groups.items()),
              *(["query_length", q.quartile, POOLED, q.min_length, q.max_length, *_rate(q)]
                for q in c.by_query_length.quartiles),
              ["non_interacting", "controls", POOLED, None, None,
               *_rate(c.non_interacting.pooled)],
              ["non_interacting", "composed (same models)", POOLED, None, None,
               *_rate(c.non_interacting.composed_pooled)]]
    return [pc, ab, t]


def validity_tables(doc: ReportDocument) -> list[Table]:
    ci_cols = " ".join(f"{m}_ci_low:float {m}_ci_high:float" for m in VALIDITY_METRICS)
    jv = Table("judge_validity", "Judge validity against human reference labels (positive: "
               "error; fp: judge error, reference no error), item-bootstrap 95% CI", cols(
                   "judge:str mode:str pattern:str n_items:int n:int tp:int fp:int tn:int "
                   "fn:int " + " ".join(f"{m}:float" for m in VALIDITY_METRICS)
                   + f" kappa_reason:str {ci_cols} human_kappa_ceiling:float"),
               display=["judge", "mode", "pattern", "n", "tp", "fp", "tn", "fn", "agreement",
                        "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa",
                        "kappa_ci_low", "kappa_ci_high", "human_kappa_ceiling"])
    for entry in doc.judge_validity:
        jv.rows += [[entry.judge, entry.mode, pattern, b.n_items, b.n, b.tp, b.fp, b.tn, b.fn,
                     *(m.value for m in b.metrics.values()), b.kappa.reason or "",
                     *(v for m in b.metrics.values() for v in bounds(m)),
                     entry.human_kappa_ceiling.value] for pattern, b in validity_blocks(entry)]
    ref = doc.reference_labels
    rl = Table("reference_labels", "Human reference labels (adjudication, else majority; ties "
               "excluded)", cols("n:int adjudicated:int majority:int ties_excluded:int "
                                  "annotators:str adjudicators:str"))
    rl.rows.append([ref.n, ref.adjudicated, ref.majority, ref.ties_excluded,
                    "; ".join(ref.annotators), "; ".join(ref.adjudicators)])
    ha = doc.human_agreement
    pairs = Table("human_agreement_pairs", "Human agreement: pairwise Cohen's kappa",
                  cols("annotator_a:str annotator_b:str n:int agreement:float kappa:float "
                        "kappa_reason:str"))
    pairs.rows = [[p.annotator_a, p.annotator_b, p.n, p.agreement.value, p.kappa.value,
                   p.kappa.reason or ""] for p in ha.pairwise]
    summary = Table("human_agreement", "Human agreement: the ceiling a judge can reach",
                    cols("annotators:str n_labels:int n_responses:int n_multiply_labelled:int "
                          "mean_pairwise_kappa:float krippendorff_alpha:float "
                          "krippendorff_alpha_reason:str"))
    summary.rows.append(["; ".join(ha.annotators), ha.n_labels, ha.n_responses,
                         ha.n_multiply_labelled, ha.mean_pairwise_kappa.value,
                         ha.krippendorff_alpha.value, ha.krippendorff_alpha.reason or ""])
    return [jv, rl, summary, pairs]


def sensitivity_tables(doc: ReportDocument) -> list[Table]:
    js = Table("judge_sensitivity", "Judge-family sensitivity on responses every judge judged "
               "(ranking: lowest error first)", cols(
                   "judge:str mode:str n:int errors:int error_rate:float ranking:str "
                   "kendall_tau:float spearman_rho:float max_shift:int is_reference:bool "
                   "ties_excluded:int"))
    js.rows = [[r.judge, r.mode, r.n, r.errors, r.error_rate.value, " < ".join(r.ranking),
                r.kendall_tau.value, r.spearman_rho.value, r.max_shift.value, r.is_reference,
                r.ties_excluded or 0] for r in doc.judge_sensitivity]
    c = doc.corrected_error_rates
    ce = Table("corrected_error_rates", f"Judge-corrected error (Rogan-Gladen) for {c.judge} "
               f"({c.mode})", cols(
                   "model:str n:int observed_error_rate:float corrected_error_rate:float "
                   "clipped:bool sensitivity:float specificity:float reason:str"),
               note=c.caveat)
    ce.rows = [[r.model, r.n, r.observed_error_rate, r.corrected_error_rate.value, r.clipped,
                c.sensitivity.value, c.specificity.value, r.corrected_error_rate.reason or ""]
               for r in c.models]
    return [js, ce]


def corpus_tables(doc: ReportDocument) -> list[Table]:
    corpus = Table("corpus", "Corpus profile", cols("section:str key:str count:int"))
    for key, value in doc.corpus:
        if isinstance(value, dict):
            corpus.rows += [[key, k, v] for k, v in value.items()]
        elif isinstance(value, int):
            corpus.rows.append(["total", key, value])
    mix = Table("corpus_pattern_mix", "Relation patterns of the selected suite beside the "
                "paper's (Table 8, 900 selected composed queries)",
                cols("pattern:str selected:int selected_share:float paper:int "
                     "paper_share:float reason:str"))
    mix.rows = [[r.pattern, r.selected, r.selected_share.value, r.paper, r.paper_share,
                 r.selected_share.reason or ""] for r in doc.corpus.pattern_mix]
    ex = Table("exclusions", "Exclusions (every left-out row, with its reason)",
               cols("section:str what:str reason:str count:int"))
    ex.rows = field_rows(ex, doc.exclusions)
    return [corpus, mix, ex]


def provenance_tables(doc: ReportDocument) -> list[Table]:
    """Which models stand behind each suite's figures, and whether any is a heuristic."""
    t = Table("provenance", "Models behind the figures (offline/* models are the offline "
              "engine's heuristics, not language models), and the suite's choices where copal "
              "offers a way besides the reference's",
              cols("suite:str generator:str verifier:str prefilter:str targets:str "
                    "judges:str imported:str heuristic:bool caveat:str options:str "
                    "removed:str"),
              display=["suite", "generator", "targets", "judges", "heuristic"])
    settings = Table("provenance_settings", "What each model was sent, per suite and role "
                     "(temperature, output cap, reasoning effort; the allowed-edge writer of a "
                     "COMPASS suite)",
                     cols("suite:str model:str role:str litellm_model:str temperature:float "
                          "max_tokens:int reasoning_effort:str reasoning_effort_sent:str "
                          "edge_writer:str"),
                     display=["suite", "model", "role", "temperature", "max_tokens",
                              "reasoning_effort"])
    for suite, p in (doc.scope.provenance or {}).items():
        imported = ", ".join(f"{n} {k.split(':', 1)[1]}" for k, n in sorted(p.imported.items()))
        t.rows.append([suite, ", ".join(p.generator), ", ".join(p.verifier),
                       ", ".join(p.prefilter), ", ".join(p.target), ", ".join(p.judge),
                       imported, bool(p.heuristic), p.caveat or "",
                       "; ".join(f"{k} {', '.join(v)}" for k, v in (p.options or {}).items()),
                       "; ".join(f"{source}: " + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
                                 for source, kinds in (p.removed or {}).items())])
        writers = ", ".join(p.edge_writer or [])
        for s in p.settings or []:
            sent = s.reasoning_effort_sent
            settings.rows.append([suite, s.model, s.role, s.litellm_model or "", s.temperature,
                                  s.max_tokens, s.reasoning_effort or "",
                                  "" if sent is None else ("yes" if sent else "no"), writers])
        if writers and not p.settings:
            settings.rows.append([suite, "", "", "", None, None, "", "", writers])
    return [t, settings] if settings.rows else [t]


def output_tables(doc: ReportDocument) -> list[Table]:
    t = Table("structured_outputs", "Structured answers per stage, model and task: valid at "
              "once, valid after the repair round, failed (not scored)",
              cols("stage:str model:str task:str valid:int repaired:int failed:int"))
    t.rows = field_rows(t, doc.structured_outputs)
    return [t]


# Which suite's models a table's figures rest on, by the table's name (the prefixes each
# suite's descriptor gives its tables).
_SUITE_PREFIXES = tuple((prefix, spec.name) for spec in SUITES.values() if spec.report
                        for prefix in spec.report.export_tables)


def suite_tables(doc: ReportDocument, name: str) -> list[Table]:
    """The tables of suite `name`'s sections in `doc` (its descriptor's `Report.tables`); none
    when the report has none."""
    report, section = SUITES[name].report, doc.suites.get(name)
    if report is None or report.tables is None or section is None:
        return []
    found: list[Table] = load(report.tables)(doc, section)
    return found


def _with_caveats(doc: ReportDocument, tables: list[Table]) -> list[Table]:
    """Every table whose figures rest on an offline model says so in its note."""
    prov = doc.scope.provenance or {}
    for t in tables:
        if t.name in ("provenance", "provenance_settings", "structured_outputs") \
                or t.name.startswith("corpus"):
            continue
        suite = next((s for prefix, s in _SUITE_PREFIXES if t.name.startswith(prefix)), "copal")
        caveat = prov[suite].caveat if suite in prov else None
        if caveat:
            t.note = f"{caveat}. {t.note}".strip() if t.note else caveat
    return tables


def report_tables(doc: ReportDocument) -> list[Table]:
    """Every table of the report, in the order of the exports."""
    return _with_caveats(doc, [
        *provenance_tables(doc), *error_tables(doc), *atlas_tables(doc), *contrast_tables(doc),
        *validity_tables(doc), *confusion_tables(doc), *facet_tables(doc),
        *sensitivity_tables(doc),
        *(t for name in doc.suites for t in suite_tables(doc, name)),
        *corpus_tables(doc), *output_tables(doc)])


def scope_lines(doc: ReportDocument) -> list[str]:
    """What the report is computed over, as sentences heading the Markdown, LaTeX and terminal."""
    scope = doc.scope
    primary, reference = scope.primary_judge, scope.reference_judge
    lines = [
        f"Worlds: {', '.join(scope.worlds)}.",
        f"Primary judge: {primary.judge if primary else 'none'} "
        f"({primary.mode if primary else '-'}): {scope.primary_judge_reason}; reference judge "
        f"for sensitivity: {reference.judge if reference else 'none'} "
        f"({reference.mode if reference else '-'}).",
        f"Rates are fractions in [0, 1]; intervals are 95% (Wilson for rates, a seeded "
        f"item-level bootstrap with {scope.bootstrap} resamples and seed {scope.seed} "
        "for judge validity); n/a marks an undefined value (the JSON export states why).",
    ]
    for suite, p in (scope.provenance or {}).items():
        lines.append(f"{suite}: {line(p)}." + (f" {p.caveat}." if p.caveat else ""))
    return lines
