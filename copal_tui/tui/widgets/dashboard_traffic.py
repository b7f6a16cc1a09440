"""The dashboard's traffic tab as plain data: the real-traffic audit's sections of the typed
report (`copal_tui.metrics.document_traffic.TrafficSections`) -> the tables of
`dashboard_sections` (columns, rows, the reasons behind every "n/a"): Table 11 with the
multi/single ratio, the annotators' agreement, each automatic labeller against the human
reference with the log's corrected figures, and Table 12. A figure that rests on the offline
engine carries its HEURISTIC caveat (Table 11 when its labels are the offline labeller's, an
offline labeller's rows), as the report's tables do.

For a cell of Table 11, `cases_command` is the `copal cases --suite traffic` line that lists
the pairs it counts. Pure functions, no widgets, so the tests compare the screen with the report cell by
cell; names from the store go through copal_tui.tui.safe.one_line.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from rich.text import Text

from copal_tui.metrics.document import Metric
from copal_tui.metrics.provenance import caveat, is_offline
from copal_tui.tui.safe import one_line
from copal_tui.tui.widgets.dashboard_sections import NA, Section, name, num, value

if TYPE_CHECKING:  # its module loads the agreement libraries: only the report loads them
    from copal_tui.metrics.document_traffic import TrafficSections

HUMAN = "human"
CAVEAT_STYLE = "bold reverse"  # as the dashboard's scope line shows the COPAL suite's caveat


def interval(m: Metric, where: str, notes: list[str]) -> str:
    """A figure's 95% interval as "[low, high]", "n/a" (its reason in `notes`) if undefined."""
    ci = m.interval
    low, high = (value(bound, ci.reason if ci else None, f"{where} CI", notes)
                 for bound in (ci.bounds if ci else (None, None)))
    return NA if NA in (low, high) else f"[{low}, {high}]"


def audit_caption(s: TrafficSections) -> Text:
    """Whose labels Table 11 counts, how many pairs, which were left out, and the HEURISTIC
    caveat when the labels are the offline labeller's."""
    a = s.traffic_audit
    out = Text()
    if a is None:
        out.append("Table 11: no pair in scope is labelled yet (copal label --suite traffic, "
                   "or copal run traffic_judge).")
        return out
    out.append("Table 11 by ", style="bold")
    if a.labels == HUMAN:
        out.append("human reference labels", style="bold")
        out.append(" (the adjudication, else the annotators' majority)")
    else:
        out.append("the automatic labeller ", style="bold")
        out.append(one_line(a.labels, 60), style="bold")
        out.append(" (no human label in scope)")
    left = "; ".join(f"{what} {n}" for what, n in a.excluded.items())
    out.append(f": {a.pairs} pair(s)" + (f"; left out: {left}" if left else ""))
    if a.caveat:
        out.append("\n")
        out.append(one_line(a.caveat, 300), style=CAVEAT_STYLE)
    return out


def audit(s: TrafficSections) -> Section:
    """Table 11: per source and category, cases, errors, the error rate with its Wilson
    interval, and the shares of the source's cases and errors. Row keys "<source>\t<cat>"."""
    # Short headers: at 80 columns the whole table fits beside the pane's scrollbar.
    out = Section(["source", "category", "cases", "errors", "rate", "95% CI",
                   "share of cases", "share of errors"])
    for r in s.traffic_audit.rows if s.traffic_audit else []:
        where = f"{one_line(r.source)} {r.category}"
        out.add(f"{r.source}\t{r.category}", [
            name(r.source), Text(r.category), str(r.cases), str(r.errors),
            num(r.error_rate, f"{where} error rate", out.notes),
            interval(r.error_rate, f"{where} error rate", out.notes),
            num(r.share_of_cases, f"{where} share of cases", out.notes),
            num(r.share_of_errors, f"{where} share of errors", out.notes)])
    return out


def ratios(s: TrafficSections) -> Section:
    """The multi/single error-rate ratio per source with its 95% interval (log method)."""
    out = Section(["source", "multi rate", "single rate", "ratio", "95% CI"])
    for r in s.traffic_audit.ratios if s.traffic_audit else []:
        where = one_line(r.source)
        out.add(r.source, [name(r.source),
                           value(r.multi_rate, "no multi-policy case", f"{where} multi",
                                 out.notes),
                           value(r.single_rate, "no single-policy case", f"{where} single",
                                 out.notes),
                           num(r.ratio, f"{where} ratio", out.notes),
                           interval(r.ratio, f"{where} ratio", out.notes)])
    return out


def annotators(s: TrafficSections) -> Section:
    """The annotators' agreement on the category and on the error (pairs labelled twice or
    more; a pair flagged sensitive is left out, as Table 11's caption counts)."""
    out = Section(["field", "pairs", "annotators", "kappa", "alpha"])
    a = s.traffic_agreement
    for f in (a.category, a.error) if a else ():
        out.add(f.field, [Text(f.field), str(f.n_pairs), str(f.n_annotators),
                          num(f.kappa, f"{f.field} kappa", out.notes),
                          num(f.alpha, f"{f.field} alpha", out.notes)])
    return out


def labeller(s: TrafficSections) -> Section:
    """Each automatic labeller against the human reference on its sample: the category's
    agreement and kappa, the error's precision, recall, F1 and kappa (erroneous positive)."""
    out = Section(["judge", "pairs", "failed", "sample", "category agree", "category kappa",
                   "precision", "recall", "F1", "error kappa"])
    for r in s.traffic_labeller or []:
        where = one_line(r.judge)
        out.add(r.judge, [name(r.judge), str(r.pairs), str(r.failed), str(r.sample),
                          num(r.category_agreement, f"{where} category agreement", out.notes),
                          num(r.category_kappa, f"{where} category kappa", out.notes),
                          num(r.error_precision, f"{where} precision", out.notes),
                          num(r.error_recall, f"{where} recall", out.notes),
                          num(r.error_f1, f"{where} F1", out.notes),
                          num(r.error_kappa, f"{where} error kappa", out.notes)])
    return out


def corrected(s: TrafficSections) -> Section:
    """The whole log by each labeller per category it assigns: the share and the error rate as
    it gives them and corrected for its mistakes on the sample."""
    out = Section(["judge", "category", "pairs", "errors", "share", "corrected share",
                   "error rate", "corrected rate"])
    for r in s.traffic_corrected or []:
        where = f"{one_line(r.judge)} {r.category}"
        mark = " (clipped)" if r.clipped else ""
        out.add(f"{r.judge}\t{r.category}", [
            name(r.judge), Text(r.category), str(r.pairs), str(r.errors),
            num(r.observed_share, f"{where} share", out.notes),
            num(r.corrected_share, f"{where} corrected share", out.notes),
            num(r.observed_error_rate, f"{where} error rate", out.notes),
            num(r.corrected_error_rate, f"{where} corrected rate", out.notes) + mark])
    return out


def labeller_caveat(s: TrafficSections) -> Text:
    """The HEURISTIC caveat of the offline labellers among them (empty when none is)."""
    offline = sorted({r.judge for r in s.traffic_labeller or [] if is_offline(r.judge)})
    return Text(one_line(caveat(offline), 300), style=CAVEAT_STYLE) if offline else Text()


def probes(s: TrafficSections) -> Section:
    """Table 12: each deployed chatbot probed over HTTP, then the total."""
    out = Section(["deployment", "world", "clauses", "compositions", "selected", "correct",
                   "error rate", "95% CI"])
    for r in s.public_probes.rows if s.public_probes else []:
        where = one_line(r.deployment)
        out.add(r.deployment, [name(r.deployment), name(r.world), str(r.clauses),
                               str(r.compositions), str(r.selected), str(r.correct),
                               num(r.error_rate, f"{where} error rate", out.notes),
                               interval(r.error_rate, f"{where} error rate", out.notes)])
    return out


def cases_command(s: TrafficSections, row_key: str, column: int) -> str | None:
    """The `copal cases --suite traffic` line listing the pairs of Table 11's cell (`row_key`,
    `column`): its errors on the errors column, else its cases; None off Table 11's rows. The
    dashboard's report names no world (a log linked to none is in it), nor does the line."""
    source, _, category = row_key.partition("\t")
    if s.traffic_audit is None or not category:
        return None
    args = ["copal", "cases", "--suite", "traffic", "--source", source, "--category", category]
    if column == 3:
        args += ["--erroneous", "yes"]
    return shlex.join(args)
