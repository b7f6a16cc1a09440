"""The pairs behind a figure of the real-traffic audit (`copal cases --suite traffic`), so a
reader can open a number of the report down to the pairs it counts. Three kinds of cell:

- a cell of Table 11 (`traffic_audit`: a source or `all`, a policy category or `total`, the
  erroneous pairs, the others or either) over the labels the report counts: each pair's human
  reference label (`copal_tui.metrics.traffic_agreement.references`: its adjudication, else its
  annotators' majority), leaving out the pairs flagged sensitive, those without a reference (an
  even split) and purged ones; with no such label in scope, the predictions of the labeller
  with the most pairs over the whole log, as the report's Table 11 then is;
- the same cell over one automatic labeller's predictions over the whole log (`judge`): its
  rows in `traffic_corrected` count them per category;
- a cell of a labeller's agreement with the human reference (`traffic_labeller`), on its
  sample (the pairs with a reference label that it labelled): on the error, tp/fp/fn/tn with
  erroneous the positive class; on the category, (reference, labeller), a cell of its
  `confusion` matrix.

The rows come from the report's own read (`store.report.traffic.report_rows`) and, for what a
listing shows of each pair, `store.report.traffic_cases`, in one read transaction that stays
open while the caller reads the cases: a labeller's cell over the whole log is streamed from
SQLite, never held (a million pairs are a million rows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from copal_tui.domain.traffic_rows import Prediction, TrafficRows
from copal_tui.metrics.document_traffic import ALL, TOTAL
from copal_tui.metrics.reference import CELL_NAMES
from copal_tui.metrics.reference import cell as cell_of
from copal_tui.metrics.traffic_agreement import Reference
from copal_tui.metrics.traffic_sections import HUMAN, audit, counted_references
from copal_tui.services import reading
from store.db import Database
from store.report import traffic_cases as sql
from store.report.traffic import report_rows

CELLS = CELL_NAMES  # tp, fp, fn, tn

# The columns of every rendering, in order (the CLI table shows a subset).
FIELDS = ("pair", "source", "line", "turn", "category", "erroneous", "labels", "judge",
          "judge_category", "judge_erroneous", "cell", "query")


@dataclass(frozen=True)
class CaseSpec:
    """Which pairs: a cell of Table 11 (`source`, `category`, `erroneous`: None for either)
    over the report's labels, or over `judge`'s predictions when named; with `cells` or
    `category_cells` ((reference, labeller) categories), cells of `judge`'s agreement with the
    human reference instead, narrowed to `source` unless it is `all`. `worlds` scopes the
    pairs as the report's `--world` does."""

    judge: str | None = None
    source: str = ALL
    category: str = TOTAL
    erroneous: bool | None = None
    cells: tuple[str, ...] = ()
    category_cells: tuple[tuple[str, str], ...] = ()
    worlds: tuple[str, ...] = ()

    @property
    def agreement(self) -> bool:
        """Whether the spec names cells of the labeller's agreement (else of Table 11)."""
        return bool(self.cells or self.category_cells)


@dataclass(frozen=True)
class Known:
    """The names a spec may use: the sources with pairs in scope and the labellers with a
    prediction or a failed call on them."""

    sources: tuple[str, ...]
    judges: tuple[str, ...]


@dataclass(frozen=True)
class TrafficCase:
    """One pair behind a figure. `category` and `erroneous` are the label the figure counts;
    `labels` how it was formed (`adjudicated` or `majority`: the human reference) or the
    labeller whose prediction it is. In an agreement cell, `judge` is the labeller compared
    and `judge_category`, `judge_erroneous` its prediction, `cell` its error cell. `query` is
    the start of the de-identified query; `turn` None for a pair of a pairs log."""

    pair: str
    source: str
    line: int
    turn: int | None
    category: str
    erroneous: bool
    labels: str
    query: str
    judge: str | None = None
    judge_category: str | None = None
    judge_erroneous: bool | None = None
    cell: str | None = None

    def record(self) -> dict[str, Any]:
        """The case as one flat JSON object, in FIELDS order."""
        return {name: getattr(self, name) for name in FIELDS}


@dataclass(frozen=True)
class Found:
    """The pairs of a spec, by source, line and turn, to be read once and within `find`'s
    block. `labels`: HUMAN or the labeller whose predictions Table 11 counted (None: nothing
    in scope is labelled). For an agreement cell, `sample` is the labeller's sample (narrowed
    to the spec's source) and `tally` its error cells over it."""

    cases: Iterable[TrafficCase]
    labels: str | None
    sample: int = 0
    tally: dict[str, int] = field(default_factory=dict)


@contextmanager
def find(db: Database, spec: CaseSpec,
         check: Callable[[Known], None] = lambda known: None) -> Iterator[Found | None]:
    """The pairs behind `spec`'s cell, read in the block (one read transaction); None when no
    pair is in scope. `check` is given the names the store holds before anything else is
    read (it raises to refuse the spec)."""
    with reading(db):
        rows = report_rows(db, list(spec.worlds) or None)
        if rows is not None:
            check(Known(tuple(sorted(rows.pairs)),
                        tuple(sorted({p.judge for p in rows.predicted} | set(rows.failed)))))
        yield None if rows is None else _found(db, spec, rows)


def _found(db: Database, spec: CaseSpec, rows: TrafficRows) -> Found:
    counted = counted_references(rows)[1]
    if spec.agreement:
        assert spec.judge is not None, "an agreement cell names its labeller"
        return _agreement(db, spec, counted, [p for p in rows.predictions
                                              if p.judge == spec.judge])
    if spec.judge is not None:
        return _judged(db, spec, spec.judge)
    table11 = audit(rows)  # whose labels the report's Table 11 counts
    if table11 is None:
        return Found([], None)
    if table11.labels == HUMAN:
        return _human(db, spec, counted)
    return _judged(db, spec, table11.labels)


def _in_cell(spec: CaseSpec, source: str, category: str, erroneous: bool) -> bool:
    return (spec.source in (ALL, source) and spec.category in (TOTAL, category)
            and spec.erroneous in (None, erroneous))


def _order(cases: Iterable[TrafficCase]) -> list[TrafficCase]:
    return sorted(cases, key=lambda c: (c.source, c.line, -1 if c.turn is None else c.turn,
                                        c.pair))


def _human(db: Database, spec: CaseSpec, counted: list[Reference]) -> Found:
    chosen = [r for r in counted if _in_cell(spec, r.source, str(r.category),
                                             bool(r.erroneous))]
    heads = sql.heads(db, [r.pair for r in chosen])
    return Found(_order(TrafficCase(
        r.pair, r.source, heads[r.pair].line, heads[r.pair].turn, str(r.category),
        bool(r.erroneous), r.basis, heads[r.pair].query) for r in chosen), HUMAN)


def _judged(db: Database, spec: CaseSpec, judge: str) -> Found:
    found = sql.judged(db, judge, spec.worlds, source=None if spec.source == ALL else spec.source,
                       category=None if spec.category == TOTAL else spec.category,
                       erroneous=spec.erroneous)
    return Found((TrafficCase(j.head.pair, j.head.source, j.head.line, j.head.turn, j.category,
                              j.erroneous, judge, j.head.query) for j in found), judge)


def _agreement(db: Database, spec: CaseSpec, counted: list[Reference],
               predictions: list[Prediction]) -> Found:
    mine = {p.pair: p for p in predictions}
    sample = [(r, mine[r.pair]) for r in counted if r.pair in mine
              and spec.source in (ALL, r.source)]
    cells = {r.pair: cell_of(int(p.erroneous), int(bool(r.erroneous))) for r, p in sample}
    tally = Counter(cells.values())
    chosen = [(r, p) for r, p in sample
              if (not spec.cells or cells[r.pair] in spec.cells)
              and (not spec.category_cells
                   or (str(r.category), p.category) in spec.category_cells)]
    heads = sql.heads(db, [r.pair for r, _p in chosen])
    return Found(_order(TrafficCase(
        r.pair, r.source, heads[r.pair].line, heads[r.pair].turn, str(r.category),
        bool(r.erroneous), r.basis, heads[r.pair].query, judge=p.judge,
        judge_category=p.category, judge_erroneous=p.erroneous, cell=cells[r.pair])
        for r, p in chosen), HUMAN, sample=len(sample),
        tally={c: tally.get(c, 0) for c in CELLS})
