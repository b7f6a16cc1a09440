"""The traffic suite's report sections (its descriptor's `Report.build`), from its read
(`copal_tui.domain.traffic_rows.TrafficRows`):

- `traffic_audit`, the COPAL paper's Table 11, over each pair's human reference label (its
  adjudication, else its annotators' majority: `traffic_agreement.references`). Pairs flagged
  as still holding sensitive content, pairs without a reference (a tie) and purged pairs are
  left out and counted in `excluded`. With no human label in scope, Table 11 is the automatic
  labeller's reading of the whole log (the labeller with the most pairs), named in `labels`
  and marked HEURISTIC when it is the offline engine;
- `traffic_agreement`: the annotators' kappa and alpha on category and on error;
- `traffic_labeller` and `traffic_corrected`: each automatic labeller against the reference
  labels, and the whole log's category mix and error rates corrected for its measured
  mistakes (`traffic_correction`);
- `public_probes`, Table 12: each deployed chatbot probed over HTTP with the composed suite,
  judged by the report's primary judge (its error table's counts per world).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from copal_tui.domain.traffic_rows import TrafficRows
from copal_tui.metrics import traffic_correction as correction
from copal_tui.metrics.document_traffic import (
    CorrectedRow,
    LabellerRow,
    PublicProbe,
    TrafficAudit,
    TrafficSections,
)
from copal_tui.metrics.provenance import caveat, is_offline
from copal_tui.metrics.traffic import Probe, table11_counts, table12
from copal_tui.metrics.traffic_agreement import Reference, references, traffic_agreement

if TYPE_CHECKING:
    from copal_tui.metrics.suite_report import Given

HUMAN = "human"


def build(given: Given, rows: TrafficRows | None) -> TrafficSections | None:
    """The traffic sections; None when no pair is in scope and no deployment was probed."""
    if rows is None:
        return None
    labels = [v for v in rows.votes if not v.decision]
    refs, usable = counted_references(rows)
    scope = given.doc.scope
    labellers = _labellers(rows, usable, scope.bootstrap, scope.seed)
    out = TrafficSections(
        traffic_audit=_audit(rows, refs, usable),
        traffic_agreement=traffic_agreement(labels) if labels else None,
        traffic_labeller=[row for row, _c in labellers] or None,
        traffic_corrected=[c for _r, cs in labellers for c in cs] or None,
        public_probes=_probes(given, rows))
    out._removed = {source: kinds for source, kinds in rows.redactions.items() if kinds}
    return out if any(getattr(out, f) is not None for f in type(out).model_fields) \
        or rows.pairs else None


def counted_references(rows: TrafficRows) -> tuple[list[Reference], list[Reference]]:
    """Every labelled pair's reference label, and those Table 11 counts (not flagged
    sensitive, not split)."""
    refs = references([v for v in rows.votes if not v.decision],
                      [v for v in rows.votes if v.decision])
    return refs, [r for r in refs if not r.sensitive and r.category is not None
                  and r.erroneous is not None]


def audit(rows: TrafficRows) -> TrafficAudit | None:
    """Table 11 alone (the demo's summary prints it)."""
    return _audit(rows, *counted_references(rows))


def _audit(rows: TrafficRows, refs: list[Reference], usable: list[Reference]
           ) -> TrafficAudit | None:
    """Table 11 over the human references, else over the busiest labeller's predictions."""
    if usable:
        counts = Counter((r.source, str(r.category), bool(r.erroneous)) for r in usable)
        table, ratios = table11_counts(counts)
        excluded = {"flagged sensitive": sum(r.sensitive for r in refs),
                    "no reference label (annotators split evenly)":
                        sum(not r.sensitive and r.category is None for r in refs),
                    "text purged": rows.purged}
        return TrafficAudit(labels=HUMAN, pairs=len(usable), rows=table, ratios=ratios,
                            excluded={k: n for k, n in excluded.items() if n})
    by_judge = Counter[str]()
    for p in rows.predicted:
        by_judge[p.judge] += p.count
    if not by_judge:
        return None
    judge = min(by_judge, key=lambda j: (-by_judge[j], j))
    counts = Counter({(p.source, p.category, p.erroneous): p.count for p in rows.predicted
                      if p.judge == judge})
    table, ratios = table11_counts(counts)
    excluded = {"flagged sensitive": rows.flagged,
                "no prediction (failed call)": rows.failed.get(judge, 0),
                "text purged": rows.purged}
    return TrafficAudit(labels=judge, caveat=caveat([judge]) if is_offline(judge) else None,
                        pairs=by_judge[judge], rows=table, ratios=ratios,
                        excluded={k: n for k, n in excluded.items() if n})


def _labellers(rows: TrafficRows, usable: list[Reference], n_boot: int, seed: int
               ) -> list[tuple[LabellerRow, list[CorrectedRow]]]:
    reference = [correction.Label(r.pair, str(r.category), bool(r.erroneous)) for r in usable]
    out = []
    for judge in sorted({p.judge for p in rows.predicted} | set(rows.failed)):
        sample = [correction.Label(p.pair, p.category, p.erroneous) for p in rows.predictions
                  if p.judge == judge]
        log: Counter[tuple[str, bool]] = Counter()
        for p in rows.predicted:  # every source's counts
            if p.judge == judge:
                log[(p.category, p.erroneous)] += p.count
        found = correction.traffic_correction(reference, sample, log, n_boot=n_boot, seed=seed)
        c, e = found.category, found.error
        row = LabellerRow(judge=judge, pairs=found.n_log, failed=rows.failed.get(judge, 0),
                          sample=found.n_sample, category_agreement=c.agreement,
                          category_kappa=c.kappa, error_precision=e.precision,
                          error_recall=e.recall, error_f1=e.f1, error_kappa=e.kappa,
                          sensitivity=found.sensitivity, specificity=found.specificity,
                          confusion=c.confusion)
        shares = {s.category: s for s in found.mix}
        corrected = [CorrectedRow(
            judge=judge, category=r.category, pairs=r.n, errors=r.errors,
            observed_share=shares[r.category].observed if r.category in shares
            else _whole(r.n),
            corrected_share=shares[r.category].corrected if r.category in shares
            else _whole(r.n),
            observed_error_rate=r.observed, corrected_error_rate=r.corrected,
            clipped=r.clipped or (r.category in shares and found.mix_clipped))
            for r in found.error_rates]
        out.append((row, corrected))
    return out


def _whole(n: int) -> correction.Metric:
    return correction.Metric.of(1.0 if n else None, None if n else "the judge labelled no pair")


def _probes(given: Given, rows: TrafficRows) -> PublicProbe | None:
    """Table 12 from the report's error table (primary judge), for the deployed chatbots."""
    chosen = given.doc.scope.primary_judge
    if not rows.deployments or chosen is None:
        return None
    deployed = set(rows.deployments)
    probes = [Probe(r.model, world, *rows.world_sizes.get(world, (0, 0)), cell.n, cell.errors)
              for r in given.doc.error_rates if r.model in deployed
              for world, cell in sorted(r.by_world.items()) if cell.n]
    return PublicProbe(judge=chosen.judge, rows=table12(probes)) if probes else None
