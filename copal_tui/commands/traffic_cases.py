"""`copal cases --suite traffic`: the pairs behind a figure of the real-traffic audit, one per
line.

`copal cases --suite traffic --source web --category multi --erroneous yes` lists the pairs
counted in that cell of Table 11 (as many as its `errors`), over the labels the report counts (the human
reference labels, else the busiest automatic labeller's); `--judge J` lists labeller J's
predictions over the whole log instead. `--judge J --cell fp` lists J's false positives against
the human reference (erroneous the positive class), `--judge J --category-cell multi:single`
the pairs the reference puts in multi and J in single: the cells of the report's
`traffic_labeller` row of J. The rows come from `copal_tui.services.traffic_cases`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import islice
from typing import TYPE_CHECKING

import click

from copal_tui.commands.cases_cmds import CELL_CHOICES
from copal_tui.commands.choices import BadValue, NothingYet, require_known
from copal_tui.commands.context import open_db
from copal_tui.commands.output import echo, print_table, write_document, write_json

if TYPE_CHECKING:
    from copal_tui.services.traffic_cases import CaseSpec, Found, Known, TrafficCase

ANSWERS = {"yes": True, "no": False, "either": None}
CHUNK = 10_000  # cases formatted and written at a time in CSV and JSON lines
# Table 11's names for every source and every category (`metrics.document_traffic`), spelled
# here so that loading `copal traffic` loads no report code.
ALL, TOTAL = "all", "total"


@click.command("cases")
@click.option("--source", default=ALL, show_default=True, metavar="SOURCE",
              help="Only pairs of this source of the log (`all`: every source).")
@click.option("--category", default=None, metavar="CATEGORY",
              help="Only pairs of this policy category: none, single or multi (default: "
                   "total, every category).")
@click.option("--erroneous", type=click.Choice(list(ANSWERS)), default=None,
              help="Only erroneous pairs (yes), correct ones (no) or both (default: either).")
@click.option("--judge", default=None, metavar="JUDGE",
              help="The automatic labeller: its predictions over the whole log instead of "
                   "the report's labels; with --cell or --category-cell, the labeller "
                   "compared with the human reference.")
@click.option("--cell", "cells", multiple=True, type=click.Choice(CELL_CHOICES),
              help="Only pairs in this cell of the labeller's error against the human "
                   "reference, erroneous the positive class (repeatable; needs --judge).")
@click.option("--category-cell", "category_cells", multiple=True, metavar="REF:PRED",
              help="Only pairs the human reference puts in category REF and the labeller in "
                   "PRED: a cell of its confusion matrix (repeatable; needs --judge).")
@click.option("--world", "worlds", multiple=True, metavar="ID",
              help="Only pairs of logs linked to this world, as the report's --world "
                   "(repeatable; default: all).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "jsonl"]),
              default="table", show_default=True, help="How to print the rows.")
@click.pass_context
def cases(ctx: click.Context, source: str, category: str | None, erroneous: str | None,
          judge: str | None, cells: tuple[str, ...], category_cells: tuple[str, ...],
          worlds: tuple[str, ...], fmt: str) -> None:
    """The pairs behind a traffic figure (a cell of Table 11 or of the labeller's agreement)."""
    from copal_tui.domain.traffic import CATEGORIES
    from copal_tui.services import launch
    from copal_tui.services.traffic_cases import CaseSpec, find

    if category is not None:
        require_known("--category", [category], [*CATEGORIES, TOTAL],
                      "a policy category or total")
    spec = CaseSpec(judge=judge, source=source, category=category or TOTAL,
                    erroneous=ANSWERS[erroneous or "either"], cells=tuple(dict.fromkeys(cells)),
                    category_cells=_category_cells(category_cells), worlds=tuple(worlds))
    if spec.agreement:
        given = [f"--{name}" for name, value in (("category", category),
                                                 ("erroneous", erroneous)) if value]
        if given:
            verb = "names" if len(given) == 1 else "name"
            raise BadValue(f"{' and '.join(given)} {verb} a cell of Table 11, --cell and "
                           "--category-cell one of the labeller's agreement: give one or the "
                           "other")
        if judge is None:
            raise BadValue("--cell and --category-cell need --judge J: the labeller compared "
                           "with the human reference")
    db = open_db(ctx)
    if worlds:
        require_known("--world", worlds, launch.worlds(db), "a stored world",
                      none_yet="`copal import WORLD.yaml` adds one")

    def check(known: Known) -> None:
        if source != ALL:
            require_known("--source", [source], [*known.sources, ALL],
                          "a source with pairs in scope, or all")
        if judge is not None:
            require_known("--judge", [judge], known.judges, "an automatic labeller of the log",
                          none_yet="`copal run traffic_judge --judge MODEL` labels the log")

    with find(db, spec, check) as found:
        if found is None:
            raise NothingYet("no traffic pair is in scope: `copal traffic import LOG --source "
                             "NAME` adds a log")
        if found.labels is None:
            raise NothingYet("no pair is labelled yet: `copal label --suite traffic` (people) "
                             "or `copal run traffic_judge --judge MODEL` (a model) labels them")
        n = _print(found.cases, fmt, spec.agreement)
    echo(_count_line(spec, found, n), err=True)


def _category_cells(given: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """REF:PRED values as (reference, labeller) categories; a bad one is exit 2."""
    from copal_tui.domain.traffic import CATEGORIES

    out = []
    for value in dict.fromkeys(given):
        ref, colon, pred = value.partition(":")
        if not colon:
            raise BadValue(f"--category-cell {value}: give REF:PRED, the human reference's "
                           f"category then the labeller's ({', '.join(CATEGORIES)})")
        require_known("--category-cell", [ref, pred], CATEGORIES, "a policy category")
        out.append((ref, pred))
    return tuple(out)


def _count_line(spec: CaseSpec, found: Found, n: int) -> str:
    from copal_tui.metrics.provenance import caveat, is_offline

    where = f"source {spec.source}"
    if spec.agreement:
        chosen = [*spec.cells, *(f"{r}:{p}" for r, p in spec.category_cells)]
        line = (f"{n} pair(s) of {spec.judge}'s sample against the human reference "
                f"({where}) in {', '.join(chosen)}; cells "
                + " ".join(f"{k} {v}" for k, v in found.tally.items())
                + f" of {found.sample} (positive: erroneous)")
    else:
        whose = ("human reference labels" if found.labels == "human"
                 else f"the automatic labeller {found.labels}")
        answer = {True: "yes", False: "no", None: "either"}[spec.erroneous]
        line = (f"{n} pair(s) of Table 11 by {whose}: {where}, category {spec.category}, "
                f"erroneous {answer}")
    if not n:
        line += ": the cell is empty"
    labeller = spec.judge if spec.agreement else found.labels
    if labeller is not None and is_offline(labeller):
        line += f"\n{caveat([labeller])}"
    return line


def _print(found: Iterable[TrafficCase], fmt: str, agreement: bool) -> int:
    """The cases on stdout in `fmt`; how many. CSV and JSON lines are written a chunk at a
    time (a labeller's whole-log cell is never held); the table, made to fit the terminal,
    holds its rows."""
    if fmt == "table":
        rows = list(found)
        if rows:  # an empty cell prints no table: the count line says it is empty
            _print_table(rows, agreement)
        return len(rows)
    from copal_tui.export.formats import table_csv
    from copal_tui.export.table import Table
    from copal_tui.services.traffic_cases import FIELDS

    kinds = {"line": "int", "turn": "int", "erroneous": "bool", "judge_erroneous": "bool"}
    columns = [(name, kinds.get(name, "str")) for name in FIELDS]
    n, cases = 0, iter(found)
    while chunk := list(islice(cases, CHUNK)):
        first, n = n == 0, n + len(chunk)
        if fmt == "jsonl":
            write_json("".join(json.dumps(c.record(), ensure_ascii=False) + "\n"
                               for c in chunk))
            continue
        text = table_csv(Table("traffic_cases", "Pairs behind a traffic figure", columns,
                               rows=[[getattr(c, name) for name in FIELDS] for c in chunk]))
        write_document(text if first else text.split("\r\n", 1)[1])  # one header
    if fmt == "csv" and not n:
        write_document(table_csv(Table("traffic_cases", "", columns)))
    return n


def _print_table(found: list[TrafficCase], agreement: bool) -> None:
    def where(c: TrafficCase) -> str:
        return str(c.line) if c.turn is None else f"{c.line}:{c.turn}"

    def query(c: TrafficCase) -> str:
        return " ".join(c.query.split())  # one line per pair

    def label(category: str | None, erroneous: bool | None) -> str:
        return f"{category}, {'erroneous' if erroneous else 'correct'}"

    if agreement:
        print_table(["pair", "source", "line", "reference", "formed by", "judge", "cell",
                     "query"],
                    [[c.pair, c.source, where(c), label(c.category, c.erroneous), c.labels,
                      label(c.judge_category, c.judge_erroneous), c.cell or "-", query(c)]
                     for c in found], right=("line",))
    else:
        print_table(["pair", "source", "line", "category", "erroneous", "labels", "query"],
                    [[c.pair, c.source, where(c), c.category, "yes" if c.erroneous else "no",
                      c.labels, query(c)] for c in found], right=("line",))
