"""The real-traffic audit's tables (the traffic suite's `Report.tables`): Table 11 as the COPAL
paper lays it out (per source and category: cases, errors, error rate with its Wilson 95%
interval, share of cases, share of errors; the total), the multi/single error-rate ratio with its
log-method interval, the annotators' agreement, the automatic labeller against them with the
log's corrected figures, and Table 12 (deployed chatbots probed over HTTP). The terminal shows
each as any table, each estimate with its interval in one cell.
"""

from __future__ import annotations

from copal_tui.export.table import Table, cols, estimate
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_traffic import TrafficAudit, TrafficSections

RATE = "error_rate:float ci_low:float ci_high:float"


def traffic_tables(doc: ReportDocument, s: TrafficSections) -> list[Table]:
    """Every table of the traffic sections present in `s`."""
    out = _audit_tables(s.traffic_audit) if s.traffic_audit is not None else []
    if s.traffic_agreement is not None:
        a = s.traffic_agreement
        t = Table("traffic_agreement", "Annotators' agreement on the policy category and the "
                  "error (pairs labelled twice or more; sensitive pairs left out)",
                  cols("field:str pairs:int annotators:int kappa:float alpha:float"),
                  note=f"{a.excluded_sensitive} labelled pair(s) flagged sensitive left out."
                  if a.excluded_sensitive else "")
        t.rows = [[f.field, f.n_pairs, f.n_annotators, f.kappa.value, f.alpha.value]
                  for f in (a.category, a.error)]
        out.append(t)
    if s.traffic_labeller:
        t = Table("traffic_labeller", "Automatic labeller against the human reference labels "
                  "(sample: labelled pairs it labelled; error: erroneous is positive), "
                  "bootstrap 95% CI",
                  cols("judge:str pairs:int failed:int sample:int "
                       "category_agreement:float category_agreement_ci_low:float "
                       "category_agreement_ci_high:float category_kappa:float "
                       "category_kappa_ci_low:float category_kappa_ci_high:float "
                       "error_precision:float error_precision_ci_low:float "
                       "error_precision_ci_high:float error_recall:float "
                       "error_recall_ci_low:float error_recall_ci_high:float "
                       "error_f1:float error_f1_ci_low:float error_f1_ci_high:float "
                       "sensitivity:float specificity:float"),
                  display=["judge", "pairs", "sample", "category_kappa", "error_precision",
                           "error_recall", "error_f1"])
        t.rows = [[r.judge, r.pairs, r.failed, r.sample, *estimate(r.category_agreement),
                   *estimate(r.category_kappa), *estimate(r.error_precision),
                   *estimate(r.error_recall), *estimate(r.error_f1), r.sensitivity.value,
                   r.specificity.value] for r in s.traffic_labeller]
        out.append(t)
    if s.traffic_corrected:
        t = Table("traffic_corrected", "The whole log by the automatic labeller, corrected for "
                  "its mistakes on the labelled sample (category mix by its inverted confusion "
                  "matrix, error rates by Rogan-Gladen)",
                  cols("judge:str category:str pairs:int errors:int observed_share:float "
                       "corrected_share:float observed_error_rate:float "
                       "corrected_error_rate:float clipped:bool"))
        t.rows = [[r.judge, r.category, r.pairs, r.errors, r.observed_share.value,
                   r.corrected_share.value, r.observed_error_rate.value,
                   r.corrected_error_rate.value, r.clipped] for r in s.traffic_corrected]
        out.append(t)
    if s.public_probes is not None:
        t = Table("public_probes", "Deployed chatbots probed over HTTP (Table 12), judge "
                  f"{s.public_probes.judge}: correct/selected and error rate, Wilson 95% CI",
                  cols(f"deployment:str world:str clauses:int compositions:int selected:int "
                       f"correct:int {RATE}"))
        t.rows = [[r.deployment, r.world, r.clauses, r.compositions, r.selected, r.correct,
                   *estimate(r.error_rate)] for r in s.public_probes.rows]
        out.append(t)
    return out


def _audit_tables(a: TrafficAudit) -> list[Table]:
    by = "human reference labels" if a.labels == "human" else f"the automatic labeller {a.labels}"
    left = "; ".join(f"{what}: {n}" for what, n in a.excluded.items())
    t = Table("traffic_audit", f"Real traffic (Table 11) by {by}: cases and errors per policy "
              "category and source, error rate with Wilson 95% CI, shares of cases and errors",
              cols(f"source:str category:str cases:int errors:int {RATE} "
                   "share_of_cases:float share_of_errors:float"),
              note=f"{a.pairs} pair(s) counted; left out: {left}." if left
              else f"{a.pairs} pair(s) counted.")
    t.rows = [[r.source, r.category, r.cases, r.errors, *estimate(r.error_rate),
               r.share_of_cases.value, r.share_of_errors.value] for r in a.rows]
    ratio = Table("traffic_ratio", "Multi-policy over single-policy error rate, 95% CI (log "
                  "method)", cols("source:str multi_rate:float single_rate:float ratio:float "
                                  "ci_low:float ci_high:float"))
    ratio.rows = [[r.source, r.multi_rate, r.single_rate, *estimate(r.ratio)] for r in a.ratios]
    return [t, ratio]
