"""The report flattened into named tables: one tabular model behind CSV, Markdown, LaTeX and the
terminal, so the four renderings can never disagree.

Each table has typed columns (str, int, float, bool) so a CSV reader can restore the types, and a
`display` subset for the narrow renderings (Markdown, LaTeX, terminal); CSV carries every column.
Rows come in the order of the report, which is already sorted.

This file owns the tabular model (`Table`, the column spelling) and the COPAL tables (error
rates, atlas, contrasts and controls, judge validity and sensitivity, corpus, provenance,
structured outputs), and assembles every table of a report in order; the COMPASS and CompliBench
tables are copal_tui.export.suite_tables', the facet and confusion tables their own modules'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from copal_tui.metrics.compass_summary import summary_tables
from copal_tui.metrics.provenance import line

ALL = "(all models)"
POOLED = "(pooled)"


@dataclass
class Table:
    name: str
    title: str
    columns: list[tuple[str, str]]
    rows: list[list[Any]] = field(default_factory=list)
    display: list[str] | None = None
    note: str = ""

    def view(self, narrow: bool) -> tuple[list[tuple[str, str]], list[list[Any]]]:
        """Columns and rows, all of them or only the display subset."""
        if not narrow or self.display is None:
            return self.columns, self.rows
        keep = [i for i, (name, _t) in enumerate(self.columns) if name in self.display]
        return [self.columns[i] for i in keep], [[row[i] for i in keep] for row in self.rows]


def cols(spec: str) -> list[tuple[str, str]]:
    """'model:str n:int rate:float' -> [('model', 'str'), ...]."""
    return [(part.split(":")[0], part.split(":")[1]) for part in spec.split()]


RATE = "n:int errors:int error_rate:float ci_low:float ci_high:float"


def _rate(row: dict[str, Any]) -> list[Any]:
    return [row["n"], row["errors"], row["error_rate"], row["ci_low"], row["ci_high"]]


def reason_text(row: dict[str, Any], key: str) -> str:
    return str(row.get(f"{key}_reason") or "")


def error_tables(doc: dict[str, Any]) -> list[Table]:
    main = Table("error_rates", "Error rates on composed items (primary judge), Wilson 95% CI",
                 cols(f"model:str {RATE}"))
    for row in doc["error_rates"]:
        main.rows.append([row["model"], *_rate(row)])
    main.rows.append([ALL, *_rate(doc["overall"])])
    out = [main]
    for key, label in (("by_pattern", "pattern"), ("by_facet", "facet"), ("by_world", "world")):
        t = Table(f"error_rates_{key}", f"Error rates {key.replace('_', ' ')}",
                  cols(f"model:str {label}:str {RATE}"))
        for row in doc["error_rates"]:
            for name, cell in row[key].items():
                t.rows.append([row["model"], name, *_rate(cell)])
        out.append(t)
    return out


def atlas_tables(doc: dict[str, Any]) -> list[Table]:
    atlas = Table("facet_atlas", "Facet atlas: error direction shares per target facet "
                  "(all models)", cols(
                      "pattern:str facet:str n:int errors:int under_enforcement:int "
                      "over_enforcement:int mixed:int unknown_direction:int "
                      "under_enforcement_share:float over_enforcement_share:float "
                      "mixed_share:float"),
                  display=["pattern", "facet", "n", "errors", "under_enforcement_share",
                           "over_enforcement_share", "mixed_share"])
    for facet, row in doc["facet_atlas"].items():
        atlas.rows.append([row["pattern"], facet, row["n"], row["errors"],
                           row["under_enforcement"], row["over_enforcement"], row["mixed"],
                           row["unknown_direction"], row["under_enforcement_share"],
                           row["over_enforcement_share"], row["mixed_share"]])
    sided = Table("one_sided", "One-sided failures: share of errors that are only "
                  "under-enforcement (a forbidden item present, or a required gate, route or "
                  "action missing) or only over-enforcement (a required content item missing)",
                  cols("model:str errors:int under_enforcement:int over_enforcement:int "
                        "mixed:int unknown_direction:int under_enforcement_share:float "
                        "over_enforcement_share:float one_sided_share:float mixed_share:float"),
                  display=["model", "errors", "under_enforcement_share", "over_enforcement_share",
                           "one_sided_share", "mixed_share"])
    keys = ["errors", "under_enforcement", "over_enforcement", "mixed", "unknown_direction",
            "under_enforcement_share", "over_enforcement_share", "one_sided_share",
            "mixed_share"]
    one = doc["one_sided"]
    for model, row in one["by_model"].items():
        sided.rows.append([model, *(row[k] for k in keys)])
    sided.rows.append([ALL, *(one[k] for k in keys)])
    return [atlas, sided]


def contrast_tables(doc: dict[str, Any]) -> list[Table]:
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
    for r in doc["paired_contrast"]:
        pc.rows.append([r["model"], r["n"], r["n_projections"], r["single_error_rate"],
                        r["composed_error_rate"], r["composition_induced"],
                        r["composition_induced_rate"], r["composition_induced_ci_low"],
                        r["composition_induced_ci_high"], r["any_projection_error_rate"],
                        r["excluded_no_projections"], r["excluded_incomplete_projections"],
                        r.get("excluded_rejected_projections", 0),
                        r.get("excluded_unanswered", 0), r.get("excluded_unjudged", 0)])
    ab = Table("ablation", "Construction ablation at matched budget (pooled over models judged "
               "on every method)", cols(f"method:str model:str selected_items:int {RATE}"))
    for r in doc["ablation"]:
        ab.rows.append([r["method"], POOLED, r["selected_items"], *_rate(r)])
        for model, cell in r["by_model"].items():
            ab.rows.append([r["method"], model, r["selected_items"], *_rate(cell)])
    return [pc, ab, *control_tables(doc)]


def control_tables(doc: dict[str, Any]) -> list[Table]:
    """The paper's controls: error by active clauses, by query-length quartile, and on
    non-interacting multi-clause controls beside the composed items of the same models."""
    c = doc.get("controls") or {}
    t = Table("controls", "Controls (primary judge): error by active clauses, by query-length "
              "quartile, and on non-interacting multi-clause controls", cols(
                  "control:str group:str model:str min_length:int max_length:int "
                  f"{RATE}"),
              display=["control", "group", "model", "n", "error_rate", "ci_low", "ci_high"])
    by_clauses = c.get("by_active_clauses") or {}
    for group, fig in (by_clauses.get("pooled") or {}).items():
        t.rows.append(["active_clauses", group, POOLED, None, None, *_rate(fig)])
    for model, groups in (by_clauses.get("by_model") or {}).items():
        for group, fig in groups.items():
            t.rows.append(["active_clauses", group, model, None, None, *_rate(fig)])
    for q in (c.get("by_query_length") or {}).get("quartiles") or []:
        t.rows.append(["query_length", q["quartile"], POOLED, q.get("min_length"),
                       q.get("max_length"), *_rate(q)])
    ni = c.get("non_interacting") or {}
    if ni.get("pooled"):
        t.rows.append(["non_interacting", "controls", POOLED, None, None, *_rate(ni["pooled"])])
    if ni.get("composed_pooled"):
        t.rows.append(["non_interacting", "composed (same models)", POOLED, None, None,
                       *_rate(ni["composed_pooled"])])
    return [t] if t.rows else []


VALIDITY_METRICS = ("agreement", "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa")


def validity_tables(doc: dict[str, Any]) -> list[Table]:
    ci_cols = " ".join(f"{m}_ci_low:float {m}_ci_high:float" for m in VALIDITY_METRICS)
    jv = Table("judge_validity", "Judge validity against human reference labels (positive: "
               "error; fp: judge error, reference no error), item-bootstrap 95% CI", cols(
                   "judge:str mode:str pattern:str n_items:int n:int tp:int fp:int tn:int "
                   "fn:int " + " ".join(f"{m}:float" for m in VALIDITY_METRICS)
                   + f" kappa_reason:str {ci_cols} human_kappa_ceiling:float"),
               display=["judge", "mode", "pattern", "n", "tp", "fp", "tn", "fn", "agreement",
                        "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa",
                        "kappa_ci_low", "kappa_ci_high", "human_kappa_ceiling"])
    for entry in doc["judge_validity"]:
        blocks: list[tuple[str, dict[str, Any]]] = [("all", entry),
                                                     *entry["by_pattern"].items()]
        for pattern, b in blocks:
            ci = [v for m in VALIDITY_METRICS for v in (b["ci"][m]["low"], b["ci"][m]["high"])]
            jv.rows.append([entry["judge"], entry["mode"], pattern, b["n_items"], b["n"],
                            b["tp"], b["fp"], b["tn"], b["fn"],
                            *(b[m] for m in VALIDITY_METRICS), reason_text(b, "kappa"), *ci,
                            entry["human_kappa_ceiling"]])
    ref = doc["reference_labels"]
    rl = Table("reference_labels", "Human reference labels (adjudication, else majority; ties "
               "excluded)", cols("n:int adjudicated:int majority:int ties_excluded:int "
                                  "annotators:str adjudicators:str"))
    rl.rows.append([ref["n"], ref["adjudicated"], ref["majority"], ref["ties_excluded"],
                    "; ".join(ref["annotators"]), "; ".join(ref["adjudicators"])])
    ha = doc["human_agreement"]
    pairs = Table("human_agreement_pairs", "Human agreement: pairwise Cohen's kappa",
                  cols("annotator_a:str annotator_b:str n:int agreement:float kappa:float "
                        "kappa_reason:str"))
    for p in ha["pairwise"]:
        pairs.rows.append([p["annotator_a"], p["annotator_b"], p["n"], p["agreement"],
                           p["kappa"], reason_text(p, "kappa")])
    summary = Table("human_agreement", "Human agreement: the ceiling a judge can reach",
                    cols("annotators:str n_labels:int n_responses:int n_multiply_labelled:int "
                          "mean_pairwise_kappa:float krippendorff_alpha:float "
                          "krippendorff_alpha_reason:str"))
    summary.rows.append(["; ".join(ha["annotators"]), ha["n_labels"], ha["n_responses"],
                         ha["n_multiply_labelled"], ha["mean_pairwise_kappa"],
                         ha["krippendorff_alpha"], reason_text(ha, "krippendorff_alpha")])
    return [jv, rl, summary, pairs]


def sensitivity_tables(doc: dict[str, Any]) -> list[Table]:
    js = Table("judge_sensitivity", "Judge-family sensitivity on responses every judge judged "
               "(ranking: lowest error first)", cols(
                   "judge:str mode:str n:int errors:int error_rate:float ranking:str "
                   "kendall_tau:float spearman_rho:float max_shift:int is_reference:bool "
                   "ties_excluded:int"))
    for r in doc["judge_sensitivity"]:
        js.rows.append([r["judge"], r["mode"], r["n"], r["errors"], r["error_rate"],
                        " < ".join(r["ranking"]), r["kendall_tau"], r["spearman_rho"],
                        r["max_shift"], r["is_reference"], r.get("ties_excluded", 0)])
    c = doc["corrected_error_rates"]
    ce = Table("corrected_error_rates", f"Judge-corrected error (Rogan-Gladen) for {c['judge']} "
               f"({c['mode']})", cols(
                   "model:str n:int observed_error_rate:float corrected_error_rate:float "
                   "clipped:bool sensitivity:float specificity:float reason:str"),
               note=c["caveat"])
    for r in c["models"]:
        ce.rows.append([r["model"], r["n"], r["observed_error_rate"], r["corrected_error_rate"],
                        r["clipped"], c["sensitivity"], c["specificity"],
                        reason_text(r, "corrected_error_rate")])
    return [js, ce]


def corpus_tables(doc: dict[str, Any]) -> list[Table]:
    corpus = Table("corpus", "Corpus profile", cols("section:str key:str count:int"))
    for key, value in doc["corpus"].items():
        if isinstance(value, dict):
            for k, v in value.items():
                corpus.rows.append([key, k, v])
        elif isinstance(value, int):
            corpus.rows.append(["total", key, value])
    mix = Table("corpus_pattern_mix", "Relation patterns of the selected suite beside the "
                "paper's (Table 8, 900 selected composed queries)",
                cols("pattern:str selected:int selected_share:float paper:int "
                     "paper_share:float reason:str"))
    for r in doc["corpus"].get("pattern_mix", []):
        mix.rows.append([r["pattern"], r["selected"], r["selected_share"], r["paper"],
                         r["paper_share"], reason_text(r, "selected_share")])
    ex = Table("exclusions", "Exclusions (every left-out row, with its reason)",
               cols("section:str what:str reason:str count:int"))
    for e in doc["exclusions"]:
        ex.rows.append([e["section"], e["what"], e["reason"], e["count"]])
    return [corpus, mix, ex]


def provenance_tables(doc: dict[str, Any]) -> list[Table]:
    """Which models stand behind each suite's figures, and whether any is a heuristic."""
    t = Table("provenance", "Models behind the figures (offline/* models are the offline "
              "engine's heuristics, not language models)",
              cols("suite:str generator:str verifier:str prefilter:str targets:str "
                    "judges:str imported:str heuristic:bool caveat:str"),
              display=["suite", "generator", "targets", "judges", "heuristic"])
    for suite, p in (doc["scope"].get("provenance") or {}).items():
        imported = ", ".join(f"{n} {k.split(':', 1)[1]}" for k, n in sorted(p["imported"].items()))
        t.rows.append([suite, ", ".join(p["generator"]), ", ".join(p["verifier"]),
                       ", ".join(p["prefilter"]), ", ".join(p["target"]), ", ".join(p["judge"]),
                       imported, bool(p["heuristic"]), p.get("caveat", "")])
    settings = Table("provenance_settings", "What each model was sent, per suite and role "
                     "(temperature, output cap, reasoning effort; the allowed-edge writer of a "
                     "COMPASS suite)",
                     cols("suite:str model:str role:str litellm_model:str temperature:float "
                          "max_tokens:int reasoning_effort:str reasoning_effort_sent:str "
                          "edge_writer:str"),
                     display=["suite", "model", "role", "temperature", "max_tokens",
                              "reasoning_effort"])
    for suite, p in (doc["scope"].get("provenance") or {}).items():
        writers = ", ".join(p.get("edge_writer") or [])
        for s in p.get("settings") or []:
            sent = s.get("reasoning_effort_sent")
            settings.rows.append([suite, s["model"], s["role"], s.get("litellm_model") or "",
                                  s.get("temperature"), s.get("max_tokens"),
                                  s.get("reasoning_effort") or "",
                                  "" if sent is None else ("yes" if sent else "no"), writers])
        if writers and not p.get("settings"):
            settings.rows.append([suite, "", "", "", None, None, "", "", writers])
    return [t, settings] if settings.rows else [t]


def output_tables(doc: dict[str, Any]) -> list[Table]:
    t = Table("structured_outputs", "Structured answers per stage, model and task: valid at "
              "once, valid after the repair round, failed (not scored)",
              cols("stage:str model:str task:str valid:int repaired:int failed:int"))
    t.rows = [[r["stage"], r["model"], r["task"], r["valid"], r["repaired"], r["failed"]]
              for r in doc.get("structured_outputs", [])]
    return [t]


# Which suite's models a table's figures rest on, by the table's name.
_SUITE_PREFIXES = (("pas", "compass"), ("compass", "compass"), ("dialogue", "dialogues"))


def _with_caveats(doc: dict[str, Any], tables: list[Table]) -> list[Table]:
    """Every table whose figures rest on an offline model says so in its note."""
    prov = doc["scope"].get("provenance") or {}
    for t in tables:
        if t.name in ("provenance", "provenance_settings", "structured_outputs") \
                or t.name.startswith("corpus"):
            continue
        suite = next((s for prefix, s in _SUITE_PREFIXES if t.name.startswith(prefix)), "copal")
        caveat = (prov.get(suite) or {}).get("caveat")
        if caveat:
            t.note = f"{caveat}. {t.note}".strip() if t.note else caveat
    return tables


def report_tables(doc: dict[str, Any]) -> list[Table]:
    # These import Table from here, hence the late imports.
    from copal_tui.export.facet_tables import facet_tables
    from copal_tui.export.suite_tables import compass_tables, dialogue_tables
    from copal_tui.export.traceability import confusion_tables

    return _with_caveats(doc, [
        *provenance_tables(doc), *error_tables(doc), *atlas_tables(doc), *contrast_tables(doc),
        *validity_tables(doc), *confusion_tables(doc), *facet_tables(doc),
        *sensitivity_tables(doc),
        *compass_tables(doc), *summary_tables(doc), *dialogue_tables(doc),
        *corpus_tables(doc), *output_tables(doc)])


def table_names(tables: Sequence[Table]) -> list[str]:
    return [t.name for t in tables]


def scope_lines(doc: dict[str, Any]) -> list[str]:
    """What the report is computed over, as sentences for the Markdown and LaTeX headers."""
    scope = doc["scope"]
    primary = scope.get("primary_judge") or {"judge": "none", "mode": "-"}
    reference = scope.get("reference_judge") or {"judge": "none", "mode": "-"}
    lines = [
        f"Worlds: {', '.join(scope['worlds'])}.",
        f"Primary judge: {primary['judge']} ({primary['mode']}): "
        f"{scope.get('primary_judge_reason', '')}; reference judge for "
        f"sensitivity: {reference['judge']} ({reference['mode']}).",
        f"Rates are fractions in [0, 1]; intervals are 95% (Wilson for rates, a seeded "
        f"item-level bootstrap with {scope['bootstrap']} resamples and seed {scope['seed']} "
        "for judge validity); n/a marks an undefined value (the JSON export states why).",
    ]
    for suite, p in (scope.get("provenance") or {}).items():
        lines.append(f"{suite}: {line(p)}." + (f" {p['caveat']}." if p.get("caveat") else ""))
    return lines
