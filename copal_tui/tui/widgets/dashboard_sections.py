"""The dashboard's tables as plain data: the typed report (copal_tui.metrics.document) ->
columns, rows and the reasons behind every "n/a"; and, for a cell, the responses it counts
(`cases_behind`, a `copal_tui.services.cases.CaseSpec`). Confusion matrices use scikit-learn's
layout (rows: the human reference, columns: the judge; `copal_tui.metrics.reference`).

Pure functions, no widgets, so the tests can compare what the screen shows with the report
cell by cell. Numbers use the same formatting as `copal report` (three decimals, "n/a" for
an undefined value); names from the store (models, judges, annotators, facets) go through
copal_tui.tui.safe.one_line, so a name like "[bold]x" is shown literally.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from rich.text import Text

from copal_tui.export.terminal import f3
from copal_tui.metrics.document import Metric, ReportDocument
from copal_tui.metrics.document_copal import JudgeSetting, JudgeValidity
from copal_tui.metrics.rates import PATTERN_ORDER
from copal_tui.metrics.reference import CELLS, CLASSES, CONVENTION
from copal_tui.services.cases import CaseSpec
from copal_tui.tui.safe import one_line

NA = "n/a"


@dataclass
class Section:
    """One table: column labels, rows of cells (str or Text), row keys, n/a reasons."""

    columns: list[str]
    rows: list[list[str | Text]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, cells: list[str | Text]) -> None:
        self.keys.append(key)
        self.rows.append(cells)


def name(text: Any, width: int = 40) -> Text:
    """A store-provided name as literal text (never markup)."""
    return Text(one_line(str(text), width))


def value(number: float | None, reason: str | None, where: str, notes: list[str]) -> str:
    """`number` formatted; when undefined, "n/a" and its reason recorded once in `notes` so
    the screen can say why."""
    if number is not None:
        return f3(number)
    note = f"{where}: {one_line(str(reason or 'not defined for this data'), 200)}"
    if note not in notes:
        notes.append(note)
    return NA


def num(m: Metric, where: str, notes: list[str]) -> str:
    """A figure of the report formatted, as `value`."""
    return value(m.value, m.reason, where, notes)


def setting(entry: JudgeSetting | JudgeValidity) -> str:
    return f"{entry.judge}@{entry.mode}"


# ---------------------------------------------------------------- sections


def patterns_of(doc: ReportDocument) -> list[str]:
    seen: list[str] = []
    for row in doc.error_rates:
        seen += [p for p in row.by_pattern if p not in seen]
    return [p for p in PATTERN_ORDER if p in seen] + [p for p in seen if p not in PATTERN_ORDER]


def error_matrix(doc: ReportDocument) -> Section:
    """Model (rows) x pattern (columns) error rate on composed items, plus all patterns."""
    patterns = patterns_of(doc)
    s = Section(["model", *(p.replace("_", " ") for p in patterns), "all", "errors", "n"])
    for row in doc.error_rates:
        model = str(row.model)
        cells: list[str | Text] = [name(model)]
        for p in patterns:
            cell = row.by_pattern.get(p)
            # A pattern the model never answered is absent (not undefined): nothing to explain.
            cells.append("-" if cell is None else
                         num(cell.error_rate, f"{one_line(model)} x {p}", s.notes))
        cells += [num(row.error_rate, one_line(model), s.notes), str(row.errors), str(row.n)]
        s.add(model, cells)
    o = doc.overall
    s.add("(all models)", [Text("(all models)", style="italic"), *([""] * len(patterns)),
                           num(o.error_rate, "all models", s.notes), str(o.errors), str(o.n)])
    if doc.overall_error_rate.reason is not None:
        s.notes.append(f"all models: {one_line(doc.overall_error_rate.reason, 200)}")
    return s


def facet_atlas(doc: ReportDocument) -> Section:
    """Per facet: share of judgments that are under-, over-enforcement or mixed errors."""
    s = Section(["facet", "pattern", "n", "errors", "under", "over", "mixed"])
    for facet, a in doc.facet_atlas.items():
        where = one_line(facet)
        s.add(facet, [name(facet), name(a.pattern or "-"), str(a.n), str(a.errors),
                      num(a.under_enforcement_share, f"{where} under", s.notes),
                      num(a.over_enforcement_share, f"{where} over", s.notes),
                      num(a.mixed_share, f"{where} mixed", s.notes)])
    return s


def paired_contrast(doc: ReportDocument) -> Section:
    """Per model: error on the single-policy projections vs the composed item, and the rate of
    errors that only composition induces (with its CI)."""
    s = Section(["model", "n", "single", "composed", "induced", "induced CI"])
    for r in doc.paired_contrast:
        model = str(r.model)
        where = one_line(model)
        ci = r.composition_induced_rate.interval
        low, high = (value(bound, ci.reason if ci else None, f"{where} induced CI", s.notes)
                     for bound in (ci.bounds if ci else (None, None)))
        s.add(model, [name(model), str(r.n),
                      num(r.single_error_rate, f"{where} single", s.notes),
                      num(r.composed_error_rate, f"{where} composed", s.notes),
                      num(r.composition_induced_rate, f"{where} induced", s.notes),
                      NA if NA in (low, high) else f"[{low}, {high}]"])
    return s


def judge_validity(doc: ReportDocument) -> Section:
    """Per judge setting against the human reference: the confusion counts and the rates."""
    s = Section(["judge", "n", "tp", "fp", "fn", "tn", "agree", "prec", "recall", "F1",
                 "kappa"])
    for v in doc.judge_validity:
        key = setting(v)
        where = one_line(key)
        s.add(key, [name(key), str(v.n), str(v.tp), str(v.fp), str(v.fn), str(v.tn),
                    num(v.agreement, f"{where} agreement", s.notes),
                    num(v.precision, f"{where} precision", s.notes),
                    num(v.recall, f"{where} recall", s.notes),
                    num(v.f1, f"{where} F1", s.notes),
                    num(v.kappa, f"{where} kappa", s.notes)])
    return s


CONFUSION_TITLE = f"Confusion matrices ({CONVENTION})"


def confusion(doc: ReportDocument) -> Section:
    """Every judge setting's 2x2 matrix as scikit-learn lays it out: a row per human
    reference class, a column per judge class, "error" the positive class. Row keys are
    "<judge@mode>\t<class>"."""
    s = Section(["judge", "human reference", "judge: no error", "judge: error"])
    for v in doc.judge_validity:
        key = setting(v)
        counts = v.confusion_matrix.matrix
        for r, cls in enumerate(CLASSES):
            s.add(f"{key}\t{cls}", [name(key) if r == 0 else Text(""), Text(cls),
                                    *(f"{CELLS[r][c]} {counts[r][c]}" for c in range(2))])
    return s


def pairwise(doc: ReportDocument) -> Section:
    """Human agreement: one row per pair of annotators."""
    s = Section(["annotator", "annotator", "n", "agree", "kappa"])
    for pr in doc.human_agreement.pairwise:
        a, b = str(pr.annotator_a), str(pr.annotator_b)
        where = f"{one_line(a)}/{one_line(b)}"
        s.add(f"{a}\t{b}", [name(a), name(b), str(pr.n),
                            num(pr.agreement, f"{where} agreement", s.notes),
                            num(pr.kappa, f"{where} kappa", s.notes)])
    return s


def agreement_summary(doc: ReportDocument, notes: list[str]) -> Text:
    """The headline agreement numbers (n/a reasons go into `notes`)."""
    ha = doc.human_agreement
    alpha = num(ha.krippendorff_alpha, "Krippendorff's alpha", notes)
    kappa = num(ha.mean_pairwise_kappa, "mean pairwise kappa", notes)
    out = Text()
    out.append("Krippendorff's alpha ", style="bold")
    out.append(alpha)
    out.append("   mean pairwise kappa ", style="bold")
    out.append(kappa)
    out.append("   multiply labelled ", style="bold")
    out.append(f"{ha.n_multiply_labelled} of {ha.n_responses}")
    out.append("\nannotators: ")
    out.append(one_line(", ".join(map(str, ha.annotators)) or "none", 200))
    ref = doc.reference_labels
    out.append(f"\nreference labels: {ref.n} ({ref.adjudicated} adjudicated, "
               f"{ref.majority} majority, {ref.ties_excluded} ties excluded)")
    return out


def scope_line(doc: ReportDocument) -> Text:
    scope = doc.scope
    primary = scope.primary_judge
    out = Text()
    out.append("judge ", style="bold")
    out.append(one_line(setting(primary), 40) if primary else "none (no usable judgments)")
    out.append(f" \u00b7 {len(scope.worlds)} world(s) \u00b7 bootstrap {scope.bootstrap}, "
               f"seed {scope.seed}")
    copal = (scope.provenance or {}).get("copal")
    if copal is not None and copal.caveat:
        # Every figure on the dashboard rests on these models: said where the eye starts.
        out.append("\n")
        out.append(one_line(copal.caveat, 300), style="bold reverse")
    return out


def judge_choices(doc: ReportDocument) -> list[tuple[str, str]]:
    """Judge settings with usable judgments, as (judge, mode), in the report's order."""
    return [(s.judge, s.mode) for s in doc.scope.judge_settings if s.usable > 0]


# ---------------------------------------------------------------- the cases behind a cell


@dataclass(frozen=True)
class CellCases:
    """What a dashboard cell counts, as a list of cases: the fixed part (`spec`), the part
    shown in the list's filter line (`filter_text`, editable there) and a caption."""

    spec: CaseSpec
    filter_text: str
    what: str


def cases_behind(doc: ReportDocument, table: str, row_key: str,
                 column: int) -> CellCases | None:
    """The responses behind cell (`row_key`, `column`) of dashboard table `table` (errors,
    facets, validity or confusion); None where a cell counts no responses."""
    worlds = tuple(doc.scope.worlds)
    settings = {setting(v): (v.judge, v.mode) for v in doc.judge_validity}
    if table in ("validity", "confusion"):
        key, _, cls = row_key.partition("\t")
        if key not in settings:
            return None
        judge, mode = settings[key]
        spec = CaseSpec(judge=judge, mode=mode, worlds=worlds)
        if table == "validity":
            cells = ("tp", "fp", "fn", "tn")[column - 2:column - 1] if 2 <= column <= 5 \
                else ("tp", "fp", "fn", "tn")
        else:
            row = CELLS[CLASSES.index(cls)]
            cells = (row[column - 2],) if column >= 2 else row
        what = f"counted in {', '.join(cells)} ({CONVENTION})" if len(cells) < 4 else \
            "every response counted in the judge validity figures"
        return CellCases(spec, f"cell:{','.join(cells)}", what)
    primary = doc.scope.primary_judge
    if primary is None or row_key == "(none)":
        return None
    targets = tuple(doc.overall.models)
    base = CaseSpec(judge=primary.judge, mode=primary.mode, worlds=worlds, composed=True)
    if table == "errors":
        patterns = patterns_of(doc)
        models = targets if row_key == "(all models)" else (row_key,)
        spec = replace(base, models=models)
        who = "the pooled models" if row_key == "(all models)" else row_key
        what = f"composed items answered by {who}"
        if 1 <= column <= len(patterns):
            spec = replace(spec, pattern=patterns[column - 1])
            what += f", pattern {patterns[column - 1]}"
        return CellCases(spec, "verdict:error" if column == len(patterns) + 2 else "", what)
    if table == "facets":
        spec = replace(base, models=targets, facet=row_key)
        shown = {3: "verdict:error", 4: "direction:under_enforcement",
                 5: "direction:over_enforcement", 6: "direction:mixed"}.get(column, "")
        return CellCases(spec, shown, f"composed items of facet {row_key} (pooled models)")
    return None
