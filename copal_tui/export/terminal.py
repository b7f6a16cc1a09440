"""`copal report` on the terminal: compact tables (pivots where the exports have long tables)
that fit the terminal's width, 80 columns included. The exports carry every row and column;
this is the overview.

Tables go through `copal_tui.export.fit_table`: a bordered table when every column fits
whole, else abbreviated headers with a legend, else one record per block, so no number or
interval is ever broken across lines and nothing is elided. Every judge-validity metric is
shown with its bootstrap interval.

Text from the store (model, judge and world names) is shown literally: every title, header,
cell and note is a rich `Text` (a name containing `[bold]` is never interpreted as markup) of
text made safe by `copal_tui.domain.safe_text.visible` (a name containing an escape sequence
shows it as `␛...`, never runs it). Rich adds its own styling codes afterwards, which is fine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.text import Text

from copal_tui.domain.safe_text import visible
from copal_tui.export.facet_terminal import print_observed_facets
from copal_tui.export.fit_table import print_table, terminal_console
from copal_tui.export.suite_tables import summary_tables
from copal_tui.export.table import bounds
from copal_tui.export.tables import control_tables
from copal_tui.metrics.document import Metric, ReportDocument
from copal_tui.metrics.document_copal import JudgeValidity, ValidityBlock
from copal_tui.metrics.document_suites import PasRow
from copal_tui.metrics.provenance import line
from copal_tui.metrics.rates import PATTERN_ORDER
from copal_tui.metrics.reference import CELLS, CLASSES, CONVENTION


def f3(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}"


def ci(low: Any, high: Any) -> str:
    if f3(low) == "n/a":
        return "n/a"
    return f"[{f3(low)}, {f3(high)}]"


def with_ci(m: Metric) -> str:
    """An estimate and its interval in one cell: `0.681 [0.600, 0.785]`."""
    interval = ci(*bounds(m))
    return f3(m.value) if interval == "n/a" else f"{f3(m.value)} {interval}"


class _Printer:
    def __init__(self, console: Any) -> None:
        self.console = console

    def text(self, value: Any, style: str = "") -> Any:
        """The one way data enters a rich object here: safe text in a Text, never markup."""
        return Text(visible(value), style=style)

    def table(self, title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]],
              numeric_from: int = 1, note: str = "", keys: int | None = None,
              pivot: bool = False) -> None:
        """Columns from `numeric_from` on are numbers (right-aligned, never wrapped); the
        first `keys` columns (default: those before `numeric_from`) name a row. A `pivot`'s
        column headers (model names) are all lettered when any must be."""
        print_table(self.console, headers, rows, title=title,
                    numeric=set(range(numeric_from, len(headers))),
                    keys=numeric_from if keys is None else keys, note=note, letter_all=pivot)


def _caveat(p: _Printer, doc: ReportDocument, suite: str) -> None:
    """The heuristic caveat of a suite's figures, printed before them, in bold."""
    prov = (doc.scope.provenance or {}).get(suite)
    if prov is not None and prov.caveat:
        p.console.print(p.text(prov.caveat, style="bold reverse"))


def _pivot(p: _Printer, doc: ReportDocument, key: str, label: str) -> None:
    models = [r.model for r in doc.error_rates]
    keys: list[str] = []
    for r in doc.error_rates:
        keys += [k for k in getattr(r, key) if k not in keys]
    if key == "by_pattern":
        keys = [k for k in PATTERN_ORDER if k in keys] + [k for k in keys if k not in
                                                          PATTERN_ORDER]
    rows = [[k, *(f3(cell.error_rate.value if (cell := getattr(r, key).get(k)) else None)
                  for r in doc.error_rates)] for k in keys]
    p.table(f"Error rate by {label} (rows) and model (columns)", [label, *models], rows,
            pivot=True)


def print_report(doc: ReportDocument, console: Any = None) -> None:
    console = console or terminal_console()
    p = _Printer(console)
    scope = doc.scope
    primary = scope.primary_judge
    console.print(p.text(
        f"primary judge: {primary.judge if primary else 'none'} "
        f"({primary.mode if primary else '-'}); "
        f"worlds: {len(scope.worlds)}; bootstrap: {scope.bootstrap} resamples, "
        f"seed {scope.seed}; rates are fractions, CIs 95%", style="bold"))
    if scope.primary_judge_reason:
        console.print(p.text(f"primary judge chosen: {scope.primary_judge_reason}"))
    for suite, prov in (scope.provenance or {}).items():
        console.print(p.text(f"{suite}: {line(prov)}"))
    _caveat(p, doc, "copal")

    o = doc.overall
    rows = [*([r.model, r.n, r.errors, f3(r.error_rate.value), ci(*bounds(r.error_rate))]
              for r in doc.error_rates),
            ["(all models)", o.n, o.errors, f3(o.error_rate.value), ci(*bounds(o.error_rate))]]
    p.table("Error rate on composed items (Wilson CI)", ["model", "n", "errors", "rate", "CI"],
            rows)
    _pivot(p, doc, "by_pattern", "pattern")
    _pivot(p, doc, "by_facet", "facet")
    _pivot(p, doc, "by_world", "world")

    p.table("Facet atlas (share of judgments, all models)",
            ["facet", "n", "errors", "under", "over", "mixed"],
            [[f, a.n, a.errors, f3(a.under_enforcement_share.value),
              f3(a.over_enforcement_share.value), f3(a.mixed_share.value)]
             for f, a in doc.facet_atlas.items()])
    one = doc.one_sided
    p.table("One-sided failures (share of errors)",
            ["model", "errors", "under", "over", "one-sided", "mixed"],
            [[m, s.errors, f3(s.under_enforcement_share.value),
              f3(s.over_enforcement_share.value), f3(s.one_sided_share.value),
              f3(s.mixed_share.value)]
             for m, s in [*one.by_model.items(), ("(all models)", one)]])
    for t in control_tables(doc):
        pooled = [r for r in t.rows if r[2] == "(pooled)"]
        p.table("Controls (pooled targets): active clauses, query-length quartile, "
                "non-interacting", ["control", "group", "n", "rate", "CI"],
                [[r[0], r[1] + (f" ({r[3]}-{r[4]} chars)" if r[3] is not None else ""), r[5],
                  f3(r[7]), ci(r[8], r[9])] for r in pooled], numeric_from=2)
    p.table("Paired contrast (composed items whose projections were accepted, answered and "
            "judged)",
            ["model", "n", "single", "composed", "induced", "induced CI"],
            [[r.model, r.n, f3(r.single_error_rate.value), f3(r.composed_error_rate.value),
              f3(r.composition_induced_rate.value), ci(*bounds(r.composition_induced_rate))]
             for r in doc.paired_contrast])
    p.table("Construction ablation (pooled over models judged on every method)",
            ["method", "selected", "n", "rate", "CI"],
            [[r.method, r.selected_items, r.n, f3(r.error_rate.value), ci(*bounds(r.error_rate))]
             for r in doc.ablation])
    _validity(p, doc)
    print_observed_facets(p.console, doc)
    _sensitivity(p, doc)
    _corpus(p, doc)
    _compass(p, doc)
    for t in summary_tables(doc):  # COMPASS's own table, as its analysis script prints it
        p.table(t.title, [name for name, _kind in t.columns], t.rows, numeric_from=2,
                note=t.note)
    _dialogues(p, doc)
    if doc.structured_outputs:
        p.table("Structured answers (valid at once / after the repair round / failed)",
                ["stage", "model", "task", "valid", "repaired", "failed"],
                [[r.stage, r.model, r.task, r.valid, r.repaired, r.failed]
                 for r in doc.structured_outputs], numeric_from=3)
    p.table("Exclusions", ["section", "what", "reason", "count"],
            [[e.section, e.what, e.reason, e.count] for e in doc.exclusions],
            numeric_from=3, keys=2)


# Judge-validity metrics as the terminal names them, each shown with its bootstrap interval.
VALIDITY_METRICS = (("agreement", "agreement"), ("precision", "precision"),
                    ("recall", "recall"), ("f1", "F1"), ("kappa", "kappa"),
                    ("fn_rate", "FN rate"), ("fp_rate", "FP rate"))


def _metrics(v: JudgeValidity | ValidityBlock) -> list[str]:
    return [with_ci(v.metrics[key]) for key, _ in VALIDITY_METRICS]


def _validity(p: _Printer, doc: ReportDocument) -> None:
    ha = doc.human_agreement
    ceiling = f3(ha.mean_pairwise_kappa.value)
    names = [name for _, name in VALIDITY_METRICS]
    rows, by_pattern = [], []
    for v in doc.judge_validity:
        judge = f"{v.judge} ({v.mode})"
        rows.append([judge, v.n, v.tp, v.fp, v.tn, v.fn, *_metrics(v)])
        by_pattern += [[judge, pattern, b.n, *_metrics(b)] for pattern, b in v.by_pattern.items()]
    ref = doc.reference_labels
    p.table(f"Judge validity vs human reference, error = positive ({ref.n} responses: "
            f"{ref.adjudicated} adjudicated, {ref.majority} majority, {ref.ties_excluded} ties "
            f"excluded); estimate [95% bootstrap CI, {doc.scope.bootstrap} resamples]",
            ["judge", "n", "tp", "fp", "tn", "fn", *names], rows,
            note=f"Human kappa (mean pairwise kappa of the annotators, the ceiling a judge can "
                 f"reach): {ceiling}")
    p.table(f"Confusion matrices ({CONVENTION})",
            ["judge", "human reference", "judge: no error", "judge: error"],
            [[name if r == 0 else "", cls, *(f"{CELLS[r][c]} {m[r][c]}" for c in (0, 1))]
             for v in doc.judge_validity
             for name, m in [(f"{v.judge} ({v.mode})", v.confusion_matrix.matrix)]
             for r, cls in enumerate(CLASSES)], numeric_from=2)
    p.table("Judge validity by pattern; estimate [95% bootstrap CI]",
            ["judge", "pattern", "n", *names], by_pattern, numeric_from=2)
    reasons = sorted({v.kappa.reason or "" for v in doc.judge_validity}
                     | {f"{pr.annotator_a}/{pr.annotator_b}: {pr.kappa.reason}"
                        for pr in ha.pairwise if pr.kappa.reason} - {""})
    pairs = [[pr.annotator_a, pr.annotator_b, pr.n, f3(pr.agreement.value), f3(pr.kappa.value)]
             for pr in ha.pairwise]
    p.table(f"Human agreement ({len(ha.annotators)} annotators, {ha.n_multiply_labelled} "
            f"multiply-labelled responses; Krippendorff's alpha "
            f"{f3(ha.krippendorff_alpha.value)}, mean pairwise kappa {ceiling})",
            ["annotator", "annotator", "n", "agree", "kappa"], pairs, numeric_from=2,
            note="\n".join(reasons + [ha.krippendorff_alpha.reason or ""]).strip())


def _sensitivity(p: _Printer, doc: ReportDocument) -> None:
    rows, rankings = [], []
    for r in doc.judge_sensitivity:
        name = f"{r.judge} ({r.mode})" + (" *" if r.is_reference else "")
        shift = r.max_shift.value
        rows.append([name, r.n, f3(r.error_rate.value), f3(r.kendall_tau.value),
                     f3(r.spearman_rho.value), shift if isinstance(shift, int) else "n/a"])
        rankings.append(f"{name}: " + " < ".join(r.ranking))
    p.table("Judge-family sensitivity (* = reference; same responses for every judge)",
            ["judge", "n", "error", "tau", "rho", "max shift"], rows,
            note="\n".join(rankings))
    c = doc.corrected_error_rates
    p.table(f"Judge-corrected error (Rogan-Gladen) for {c.judge} ({c.mode}): sensitivity "
            f"{f3(c.sensitivity.value)}, specificity {f3(c.specificity.value)}",
            ["model", "n", "observed", "corrected", "clipped"],
            [[m.model, m.n, f3(m.observed_error_rate), f3(m.corrected_error_rate.value),
              "yes" if m.clipped else ""] for m in c.models],
            note=c.caveat + (f" ({c.sensitivity.reason})" if c.sensitivity.reason else ""))


def _corpus(p: _Printer, doc: ReportDocument) -> None:
    fields = list(doc.corpus)
    totals = ", ".join(f"{k} {v}" for k, v in fields if isinstance(v, int))
    rows = [[k.replace("_", " "), ", ".join(f"{kk}: {vv}" for kk, vv in v.items())]
            for k, v in fields if isinstance(v, dict)]
    p.table(f"Corpus: {totals}", ["breakdown", "counts"], rows, numeric_from=2)
    p.table("Relation patterns of the selected suite beside the paper's (Table 8)",
            ["pattern", "selected", "share", "paper", "paper share"],
            [[r.pattern, r.selected, _share(r.selected_share.value), r.paper,
              _share(r.paper_share)] for r in doc.corpus.pattern_mix])


def _share(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.1%}"


def _compass(p: _Printer, doc: ReportDocument) -> None:
    """The COMPASS tables, only when the report has them (no suite in scope: nothing)."""
    if doc.pas is None:
        return
    _caveat(p, doc, "compass")
    by_judge: dict[str, list[PasRow]] = {}
    for r in doc.pas:
        by_judge.setdefault(r.judge, []).append(r)
    for judge, judged in by_judge.items() or [("none", [])]:
        targets = list(dict.fromkeys(f"{r.model} ({r.variant})" for r in judged))
        cells: dict[tuple[str, str], dict[str, str]] = {}
        for r in judged:
            text = "n/a" if r.n == 0 else f"{f3(r.pas.value)} ({r.aligned}/{r.n})"
            cells.setdefault((r.world, r.query_type), {})[f"{r.model} ({r.variant})"] = text
        p.table(f"Policy Alignment Score, judge {judge}: world x query type (rows), target "
                "(columns); PAS (aligned/n)", ["world", "query type", *targets],
                [[w, t, *(c.get(x, "") for x in targets)] for (w, t), c in cells.items()],
                numeric_from=2, pivot=True)
    p.table("Failure modes of misaligned denied-edge responses (counts)",
            ["judge", "target", "world", "denied edge", "misaligned", "direct", "hybrid",
             "indirect", "unclassified"],
            [[r.judge, f"{r.model} ({r.variant})", r.world, r.n_denied_edge, r.n_misaligned,
              r.direct_violation, r.refusal_answer_hybrid, r.indirect_violation,
              r.unclassified] for r in doc.pas_failure_modes or []],
            numeric_from=3)
    p.table("Single-policy PAS (base variant) beside the composed error rate",
            ["world", "model", "judge", "n", "PAS", "allowed", "denied", "composed", "error",
             "error CI"],
            [[r.world, r.model, r.compass_judge if r.same_judge else
              f"{r.compass_judge} / {r.composed_judge}", r.n, f3(r.pas.value),
              f3(r.allowed_pas.value), f3(r.denied_pas.value), r.composed_n,
              f3(r.composed_error_rate.value), ci(*bounds(r.composed_error_rate))]
             for r in doc.pas_vs_composed or []], numeric_from=3,
            note="PAS: share aligned (higher is better); error: share of composed items "
                 "failed (lower is better); 'A / B' names the COMPASS and the composed judge.")
    validity, reasons = [], []
    for v in doc.pas_judge_validity or []:
        dims = {"refused": v.refused, "compliant": v.compliant, "aligned": v.aligned}
        validity.append([v.judge, v.n_responses, *(x for d in dims.values()
                                                    for x in (f3(d.agreement.value),
                                                              f3(d.kappa.value)))])
        reasons += [f"{v.judge} {name}: {d.kappa.reason}" for name, d in dims.items()
                    if d.kappa.reason is not None]
    p.table("COMPASS judge vs human majority (agreement, Cohen's kappa)",
            ["judge", "n", "refused", "kappa", "compliant", "kappa", "aligned", "kappa"],
            validity, note="\n".join(reasons))


def _dialogues(p: _Printer, doc: ReportDocument) -> None:
    """Dialogue-judging tables, only when the report has them."""
    if doc.dialogue_judging is None:
        return
    _caveat(p, doc, "dialogue")
    p.table("Dialogue judging (CompliBench's rule: every tagged turn, attempts' files pooled, "
            "micro over turns)",
            ["judge", "domain", "conv", "attempts", "compliant acc", "violation det",
             "strict", "conversation acc"],
            [[r.judge, r.domain, r.conversations, r.attempts, f3(r.compliant_turn_accuracy),
              f3(r.violation_detection_accuracy), f3(r.strict_violation_detection_accuracy),
              f3(r.conversation_accuracy)] for r in doc.dialogue_judging], numeric_from=2)
    p.table("Dialogue judges' answers: files (conversation x attempt) read after the repair "
            "round, with no readable verdict (all wrong), and the first answers alone as "
            "CompliBench's parser reads them",
            ["judge", "domain", "files", "repaired", "unparsed", "compliant acc",
             "violation det", "strict", "conversation acc"],
            [[r.judge, r.domain, r.files, r.repaired_attempts, r.unparsed_attempts,
              f3(r.first_answer_compliant_turn_accuracy),
              f3(r.first_answer_violation_detection_accuracy),
              f3(r.first_answer_strict_violation_detection_accuracy),
              f3(r.first_answer_conversation_accuracy)] for r in doc.dialogue_judging],
            numeric_from=2)
    taxonomy = doc.dialogue_error_taxonomy or []
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for e in taxonomy:
        counts.setdefault((e.judge, e.domain), {})[e.error_type] = e.count
    types = list(dict.fromkeys(e.error_type for e in taxonomy))
    if types:
        p.table("Reviewed judge mistakes by error type", ["judge", "domain", *types],
                [[j, d, *(c.get(t, 0) for t in types)] for (j, d), c in counts.items()],
                numeric_from=2)
