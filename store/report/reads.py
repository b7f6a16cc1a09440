"""All SQL behind `copal report` and `copal export`.

Speed is the point (the target: a full report over 100,000 responses and 300,000 judgments in
under a second). The big tables are read once each, in bulk, and grouped in numpy by
`copal_tui.metrics.frame`: one GROUP BY query per report section re-read and re-sorted the
judgments each time (BENCHMARKS.md, "Report reads"). Small tables are aggregated here. Every
query is ordered so the same database gives the same rows. The two largest reads come from
indexes, never the tables' long rows (`idx_judgments_report`, the partial
`idx_responses_unanswered`), and return integers, not names, which numpy would otherwise look up
one by one.

Conventions:
- a judgment is *usable* when `failure IS NULL AND error IS NOT NULL`; the others are counted
  as failed, never used;
- the target model is `responses.model`, suffixed `#variant` when the variant is not 'base',
  so two system-prompt variants of one model are two rows, never silently pooled;
- `worlds` (a list of world ids, or None for all) restricts a query through `world_id`;
- text columns of the group_concat reads are separated by char(30) (record separator), and a
  NULL that has to keep its place is written as NULL_MARK, char(31) (unit separator).

`BulkReads` runs every read a report needs at once (the COPAL tables here, and each other
suite's own read, which its descriptor names) in threads with their own connections; it is a
`copal_tui.domain.report_rows.ReportReads`, whose attributes are the reads' typed rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from copal_tui.domain.report_rows import (
    REJECTED_PROJECTION,
    CorpusCounts,
    ItemColumns,
    JudgmentCodes,
    LabelRow,
    ReportReads,
    suite_read,
)
from copal_tui.domain.suites import SUITES, load
from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.db import Database, connect
from store.report import facets as report_facets
from store.report import provenance
from store.report.coded import judgment_codes, response_columns
from store.report.scope import ERROR, all_rows, world_scope

# The target model of a response `r` as one name (the cases' reads filter on it).
MODEL = "CASE WHEN r.variant = 'base' THEN r.model ELSE r.model || '#' || r.variant END"


# ------------------------------------------------------------------ bulk reads

# Why group_concat: returning 100,000s of Python tuples costs more than the scan itself; one
# comma-separated string per column is parsed by numpy in C (copal_tui.metrics.arrays). All
# columns of one aggregate query see the rows in the same order, so the strings stay aligned.


def known_worlds(db: Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM worlds ORDER BY id")]


def judge_settings(db: Database) -> list[tuple[str, str]]:
    """Every (judge, mode) that has judgments, sorted. A skip scan of the (judge, mode) index:
    one seek per setting, where GROUP BY walks every entry of the index."""
    out: list[tuple[str, str]] = []
    judge = db.execute("SELECT MIN(judge) FROM judgments").fetchone()[0]
    while judge is not None:
        mode = db.execute("SELECT MIN(mode) FROM judgments WHERE judge = ?", (judge,)).fetchone()[0]
        while mode is not None:
            out.append((judge, mode))
            mode = db.execute("SELECT MIN(mode) FROM judgments WHERE judge = ? AND mode > ?",
                              (judge, mode)).fetchone()[0]
        judge = db.execute("SELECT MIN(judge) FROM judgments WHERE judge > ?",
                           (judge,)).fetchone()[0]
    return out


def items(db: Database) -> ItemColumns:
    """Aligned group_concat columns of every item, by id: ids, worlds, patterns, facets,
    methods (char(30)-separated), selected flags, parent ids (char(30)-separated) and active
    clauses (the number of clauses of the item's composition). NULL texts are NULL_MARK
    (`copal_tui.domain.report_rows`).
    A projection the projection screening rejected (`screening.passed` false) reads as method
    REJECTED_PROJECTION, so the paired contrast can leave its parent out without a column.

    From the same pass, for the report's `controls`, two more columns in the same order: the
    query's length in characters and, for a non-interacting control (no composition), the
    number of distinct clauses its contract items name (0 for other items, whose active
    clauses are their composition's). One scan of the items, whose rows are long."""
    texts = ", ".join(f"group_concat(ifnull({c}, char(31)), char(30))"
                      for c in ("id", "world_id", "pattern", "facet", "method"))
    row = db.execute(
        f"SELECT {texts}, group_concat(ifnull(selected, 0)), "
        "group_concat(ifnull(parent_item_id, char(31)), char(30)), group_concat(clauses), "
        "group_concat(n), group_concat(k) "
        # An aggregate over a subquery with ORDER BY reads it in that order (SQLite does not
        # flatten such a subquery).
        "FROM (SELECT i.id, i.world_id, i.pattern, i.facet, CASE WHEN i.parent_item_id IS "
        "NOT NULL AND (CASE WHEN json_valid(i.screening) THEN json_extract(i.screening, "
        f"'$.passed') END) IS 0 THEN '{REJECTED_PROJECTION}' ELSE i.method END AS method, "
        "i.selected, i.parent_item_id, COALESCE(json_array_length(c.clause_ids), 0) AS clauses, "
        "length(i.query) AS n, "
        "CASE WHEN i.method = 'control' THEN (SELECT COUNT(DISTINCT c) FROM ("
        "SELECT json_extract(value, '$.clause_id') AS c FROM json_each(i.required) "
        "UNION ALL SELECT json_extract(value, '$.clause_id') FROM json_each(i.forbidden)) "
        "WHERE c IS NOT NULL) ELSE 0 END AS k "
        "FROM items i LEFT JOIN compositions c ON c.id = i.composition_id ORDER BY i.id)"
    ).fetchone()
    return ItemColumns(*row)


def failed_responses(db: Database) -> str | None:
    """Rowids of responses without an answer (the call failed or gave no text), from the
    partial index of those rows (m012), not a scan of every response's text."""
    row = db.execute("SELECT group_concat(rowid) FROM responses "
                     "WHERE failure IS NOT NULL OR text IS NULL").fetchone()
    return row[0]


def label_rows(db: Database, decisions: bool = False) -> list[LabelRow]:
    """(response rowid, annotator, error) of every current label, or of every current
    adjudication when `decisions`."""
    rule = CURRENT_DECISION if decisions else CURRENT
    return _triples(db, f"SELECT r.rowid AS a, e.annotator AS b, {ERROR} AS c "
                        "FROM annotations e JOIN responses r ON r.id = e.subject "
                        f"WHERE e.suite = 'copal' AND {rule} AND {ERROR} IS NOT NULL "
                        "ORDER BY r.rowid, e.annotator")


def _triples(db: Database, sql: str) -> list[LabelRow]:
    """The rows of `sql` (integer a, text b, integer c; none NULL), read as three aligned
    group_concat columns rather than row by row (see the note above `BulkReads`)."""
    row = db.execute("SELECT group_concat(a), group_concat(b, char(30)), group_concat(c) "
                     f"FROM ({sql})").fetchone()
    if row[0] is None:
        return []
    return list(map(LabelRow._make, zip(map(int, row[0].split(",")), row[1].split("\x1e"),
                                         map(int, row[2].split(",")), strict=True)))


# ------------------------------------------------------------------ all reads of a report

# Why threads: sqlite3 releases the GIL while a statement steps, so the reads run on separate
# cores and the caller can import numpy meanwhile; read one after the other they were most of
# the report's second. Two workers: the judgments read is about half of the work.
# Every read returns one row (group_concat columns): a statement that returns rows one by one
# takes the GIL back for each, and while the caller imports numpy each of those waits for a
# switch interval (the measurements are in BENCHMARKS.md, "Report reads").
WORKERS = 2


def _suite_reads() -> list[tuple[str, str]]:
    """(suite, "module:function") of every suite with a read of its own, in registration
    order."""
    return [(name, spec.report.read) for name, spec in SUITES.items()
            if spec.report is not None and spec.report.read is not None]


class BulkReads(ReportReads):
    """Every read `copal report` makes, started at once; an attribute waits for its read only,
    so the caller can work on the first results while the judgments are still read.

    Each worker opens its own connection to the same file, so each read sees the store as of
    its own start (as sequential reads would; the frame leaves out rows that refer to a row
    another read did not see). An in-memory store, or a connection inside a transaction whose
    writes other connections cannot see, is read on the caller's connection instead."""

    def __init__(self, db: Database, worlds: list[str] | None) -> None:
        super().__init__({})
        self._jobs: list[tuple[str, Callable[[Database], object]]] = [
            ("judgments", _judgments),  # the longest first
            ("items", items),  # then in the order the report takes them
            ("responses", response_columns),
            ("labels", label_rows),
            ("adjudications", lambda c: label_rows(c, decisions=True)),
            ("failed_responses", failed_responses),
            ("corpus", lambda c: corpus_counts(c, worlds)),
            # Each suite's own read (its descriptor's `Report.read`), in registration order.
            *((suite_read(name), partial(load(ref), worlds=worlds))
              for name, ref in _suite_reads()),
            ("human_facets", lambda c: report_facets.human_votes(c, worlds)),
            ("provenance_runs", lambda c: provenance.provenance_runs(c, worlds)),
            ("provenance_extras", lambda c: provenance.provenance_extras(c, worlds)),
        ]
        self._futures: dict[str, Future[object]] = {name: Future() for name, _ in self._jobs}
        path = db.execute("PRAGMA database_list").fetchone()[2]
        if not path or db.conn.in_transaction:
            self._threads: list[threading.Thread] = []
            self._run(db)  # everything now, on the caller's connection
            return
        self._threads = [threading.Thread(target=self._work, args=(path,), daemon=True)
                         for _ in range(WORKERS)]
        for thread in self._threads:
            thread.start()

    def _work(self, path: str) -> None:
        try:
            conn = connect(path)
        except BaseException as exc:  # noqa: BLE001 - re-raised to the reader
            self._run(None, exc)
            return
        try:
            self._run(conn)
        finally:
            conn.close()

    def _run(self, conn: Database | None, failed: BaseException | None = None) -> None:
        """Run queued jobs until none is left (a worker that could not connect fails them)."""
        while True:
            try:
                name, job = self._jobs.pop(0)  # list.pop is atomic: each job runs once
            except IndexError:
                return
            try:
                if conn is None:
                    raise failed or RuntimeError("no connection")
                self._futures[name].set_result(job(conn))
            except BaseException as exc:  # noqa: BLE001 - re-raised to the reader
                self._futures[name].set_exception(exc)

    def value(self, name: str) -> Any:
        return self._futures[name].result()

    def close(self) -> None:
        """Wait until every worker has closed its connection. A connection still open after
        the report returns would keep the store's -wal file alive past the command."""
        for thread in self._threads:
            thread.join()


def _judgments(db: Database) -> JudgmentCodes:
    with db.atomic():  # the settings coded are exactly those the judgments read sees
        settings = judge_settings(db)
        codes, facets = judgment_codes(db, settings)
    return JudgmentCodes(settings, codes, facets)


# ------------------------------------------------------------------ labels with their ids


def current_labels(db: Database, worlds: list[str] | None,
                   decisions: bool = False) -> list[tuple[str, str, int]]:
    """(response, annotator, error) of every current label in scope, or of every current
    adjudication when `decisions`."""
    where, params = world_scope(worlds, "i.world_id")
    return all_rows(
        db,
        f"SELECT e.subject, e.annotator, {ERROR} FROM annotations e "
        "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
        f"WHERE e.suite = 'copal' AND {CURRENT_DECISION if decisions else CURRENT} "
        f"AND {ERROR} IS NOT NULL{where} ORDER BY e.subject, e.annotator",
        params,
    )


# ------------------------------------------------------------------ corpus profile


def corpus_counts(db: Database, worlds: list[str] | None) -> CorpusCounts:
    """Grouped counts of the small tables for the corpus profile (items, responses and
    judgments are counted from the arrays of the bulk reads), each list sorted by its key."""
    w_where, w_params = world_scope(worlds, "world_id")
    id_where, id_params = world_scope(worlds, "id")
    q: dict[str, tuple[str, tuple[Any, ...]]] = {
        "worlds": (f"SELECT id, COUNT(*) FROM worlds WHERE 1 = 1{id_where} GROUP BY id "
                   "ORDER BY id", id_params),
        "policies_by_kind": (f"SELECT kind, COUNT(*) FROM policies WHERE 1 = 1{w_where} "
                             "GROUP BY kind ORDER BY kind", w_params),
        "clauses_by_effect": (f"SELECT COALESCE(effect, 'none'), COUNT(*) FROM clauses "
                              f"WHERE 1 = 1{w_where} GROUP BY 1 ORDER BY 1", w_params),
        "compositions_by_pattern": (
            f"SELECT pattern, COUNT(*) FROM compositions WHERE status = 'confirmed'{w_where} "
            "GROUP BY pattern ORDER BY pattern", w_params),
        "compositions_by_status": (f"SELECT status, COUNT(*) FROM compositions "
                                   f"WHERE 1 = 1{w_where} GROUP BY status ORDER BY status",
                                   w_params),
    }
    return CorpusCounts(**{key: [(str(k), int(n)) for k, n in all_rows(db, sql, params)]
                           for key, (sql, params) in q.items()})
