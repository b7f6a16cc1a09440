"""All SQL behind `copal report` and `copal export`.

Speed is the point (the target: a full report over 100,000 responses and 300,000 judgments in
under a second). The big tables are read once each, in bulk (`items`, `response_columns`,
`judgment_codes`), and grouped in numpy by `copal_tui.metrics.frame`, because one GROUP BY query
per report section re-reads and re-sorts the judgments each time (the measurements are in
BENCHMARKS.md, "Report reads"). Small tables (worlds, policies, clauses, compositions,
labels) are still aggregated here. Every query is ordered so the same database gives the same
rows. The two largest reads are answered from indexes, never the tables' long rows: the
judgments from `idx_judgments_report`, the unanswered responses from the partial
`idx_responses_unanswered` (migration m012); and they return integers, not names, where
numpy would otherwise look a million names up one by one (a response's item and model, a
judgment's setting).

Conventions:
- a judgment is *usable* when `failure IS NULL AND error IS NOT NULL`; the others are counted
  as failed, never used;
- the target model is `responses.model`, suffixed `#variant` when the variant is not 'base',
  so two system-prompt variants of one model are two rows, never silently pooled;
- `worlds` (a list of world ids, or None for all) restricts a query through `world_id`;
- text columns of the group_concat reads are separated by char(30) (record separator), and a
  NULL that has to keep its place is written as NULL_MARK, char(31) (unit separator).

`BulkReads` runs the reads a report needs at once, in threads with their own connections.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.db import Database, connect
from store.report import facets as report_facets
from store.report import provenance
from store.report.coded import FACETS as FACETS
from store.report.coded import OTHER_FACET as OTHER_FACET
from store.report.coded import ResponseColumns as ResponseColumns
from store.report.coded import judgment_codes, response_columns
from store.report.scope import all_rows, world_scope

NULL_MARK = "\x1f"
# The target model of a response `r` as one name (the cases' reads filter on it).
MODEL = "CASE WHEN r.variant = 'base' THEN r.model ELSE r.model || '#' || r.variant END"
# A COPAL label's (or decision's) error, from its payload in the annotation log.
_ERROR = "json_extract(e.payload, '$.error')"


# ------------------------------------------------------------------ bulk reads

# Why group_concat: the report reads every judgment once. Returning 100,000s of Python tuples
# costs more than the scan itself; one comma-separated string per column is parsed by numpy in
# C (copal_tui.metrics.frame). All columns of one aggregate query see the rows in the same
# order, so the strings stay aligned. Text columns use the separator char(30) (record
# separator), which no model name contains.


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


# Must equal copal_tui.metrics.contrast.REJECTED_PROJECTION (the store imports no copal_tui).
REJECTED_PROJECTION = "projection_rejected"


def items(db: Database) -> tuple[tuple[str | None, ...], tuple[str | None, str | None]]:
    """Aligned group_concat columns of every item, by id: ids, worlds, patterns, facets,
    methods (char(30)-separated), selected flags, parent ids (char(30)-separated) and active
    clauses (the number of clauses of the item's composition). NULL texts are NULL_MARK.
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
    return tuple(row[:8]), (row[8], row[9])


def failed_responses(db: Database) -> str | None:
    """Rowids of responses without an answer (the call failed or gave no text), from the
    partial index of those rows (m012), not a scan of every response's text."""
    row = db.execute("SELECT group_concat(rowid) FROM responses "
                     "WHERE failure IS NOT NULL OR text IS NULL").fetchone()
    return row[0]


def label_rows(db: Database) -> list[tuple[int, str, int]]:
    """(response rowid, annotator, error) of every current label."""
    return _triples(db, f"SELECT r.rowid AS a, e.annotator AS b, {_ERROR} AS c "
                        "FROM annotations e JOIN responses r ON r.id = e.subject "
                        f"WHERE e.suite = 'copal' AND {CURRENT} AND {_ERROR} IS NOT NULL "
                        "ORDER BY r.rowid, e.annotator")


def adjudication_rows(db: Database) -> list[tuple[int, str, int]]:
    """(response rowid, adjudicator, error) of every current adjudication."""
    return _triples(db, f"SELECT r.rowid AS a, e.annotator AS b, {_ERROR} AS c "
                        "FROM annotations e JOIN responses r ON r.id = e.subject "
                        f"WHERE e.suite = 'copal' AND {CURRENT_DECISION} "
                        f"AND {_ERROR} IS NOT NULL ORDER BY r.rowid")


def _triples(db: Database, sql: str) -> list[tuple[int, str, int]]:
    """The rows of `sql` (integer a, text b, integer c; none NULL), read as three aligned
    group_concat columns rather than row by row (see the note above `BulkReads`)."""
    row = db.execute("SELECT group_concat(a), group_concat(b, char(30)), group_concat(c) "
                     f"FROM ({sql})").fetchone()
    if row[0] is None:
        return []
    return list(zip(map(int, row[0].split(",")), row[1].split("\x1e"),
                    map(int, row[2].split(",")), strict=True))


# ------------------------------------------------------------------ all reads of a report

# Why threads: sqlite3 releases the GIL while a statement steps, so the reads run on separate
# cores and the caller can import numpy meanwhile; read one after the other they were most of
# the report's second. Two workers: the judgments read is about half of the work.
# Every read returns one row (group_concat columns): a statement that returns rows one by one
# takes the GIL back for each, and while the caller imports numpy each of those waits for a
# switch interval (the measurements are in BENCHMARKS.md, "Report reads").
WORKERS = 2


class BulkReads(Mapping[str, Any]):
    """Every read `copal report` makes, started at once; `reads[name]` waits for that one
    only, so the caller can work on the first results while the judgments are still read.

    Each worker opens its own connection to the same file, so each read sees the store as of
    its own start (as the sequential reads did; the frame leaves out rows that refer to a row
    another read did not see). An in-memory store, or a connection inside a transaction whose
    writes other connections cannot see, is read on the caller's connection instead."""

    def __init__(self, db: Database, worlds: list[str] | None) -> None:
        # (names, job): a job gives one value per name. The judgments' read gives two, the
        # judgments and their observed facets, from one pass.
        self._jobs: list[tuple[tuple[str, ...], Callable[[Database], tuple[Any, ...]]]] = [
            (("judgments", "judgment_facets"), _judgments),  # the longest first
            (("items", "item_lengths"), items),  # then in the order the report takes them
            *(((name,), _one(job)) for name, job in (
                ("responses", response_columns),
                ("labels", label_rows),
                ("adjudications", adjudication_rows),
                ("failed", failed_responses),
                ("corpus", lambda c: corpus_counts(c, worlds)),
                ("human_facets", lambda c: _human_facets(c, worlds)),
                ("provenance_runs", lambda c: _provenance_runs(c, worlds)),
                ("provenance_extras", lambda c: _provenance_extras(c, worlds)),
            )),
        ]
        self._done = {name: threading.Event() for names, _job in self._jobs for name in names}
        self._out: dict[str, Any] = {}
        self._errors: dict[str, BaseException] = {}
        self._db: Database | None = db
        path = db.execute("PRAGMA database_list").fetchone()[2]
        if not path or db.conn.in_transaction:
            return
        self._db = None
        self._lock = threading.Lock()
        self._live = WORKERS
        self._threads = [threading.Thread(target=self._work, args=(path,), daemon=True)
                         for _ in range(WORKERS)]
        for thread in self._threads:
            thread.start()

    def _work(self, path: str) -> None:
        try:
            conn = connect(path)
        except BaseException as exc:  # noqa: BLE001 - re-raised to the reader
            self._errors.setdefault("connect", exc)
        else:
            try:
                self._run(conn)
            finally:
                conn.close()
        finally:
            with self._lock:
                self._live -= 1
                last = self._live == 0
            if last:  # nobody is left to run what is still queued: wake its readers
                for done in self._done.values():
                    done.set()

    def _run(self, conn: Database) -> None:
        while True:
            try:
                names, job = self._jobs.pop(0)  # list.pop is atomic: each job runs once
            except IndexError:
                return
            try:
                self._out.update(zip(names, job(conn), strict=True))
            except BaseException as exc:  # noqa: BLE001 - re-raised to the reader
                for name in names:
                    self._errors[name] = exc
            finally:
                for name in names:
                    self._done[name].set()

    def __getitem__(self, name: str) -> Any:
        if self._db is not None:
            self._run(self._db)  # no workers: everything now, on the caller's connection
        self._done[name].wait()
        if name in self._out:
            return self._out[name]
        raise self._errors.get(name) or self._errors["connect"]

    def ready(self, name: str) -> bool:
        """Whether `reads[name]` would return at once (on the caller's connection, every read
        runs when first asked for: never ready before)."""
        return self._db is None and self._done[name].is_set()

    def close(self) -> None:
        """Wait until every worker has closed its connection. A connection still open after
        the report returns would keep the store's -wal file alive past the command."""
        for thread in getattr(self, "_threads", ()):
            thread.join()

    def __iter__(self) -> Iterator[str]:
        return iter(self._done)

    def __len__(self) -> int:
        return len(self._done)

    def results(self) -> dict[str, Any]:
        """Every read, once all are done."""
        return {name: self[name] for name in self}


def _one(job: Callable[[Database], Any]) -> Callable[[Database], tuple[Any]]:
    return lambda conn: (job(conn),)


def _judgments(db: Database) -> tuple[tuple[list[tuple[str, str]], str | None], str | None]:
    with db.atomic():  # the settings coded are exactly those the judgments read sees
        settings = judge_settings(db)
        codes, facets = judgment_codes(db, settings)
    return (settings, codes), facets


# The observed-facet and provenance reads live in their own modules; they run here with the
# others so that they overlap the numpy import too.
def _human_facets(db: Database, worlds: list[str] | None) -> Any:
    return report_facets.human_votes(db, worlds)


def _provenance_runs(db: Database, worlds: list[str] | None) -> Any:
    return provenance.provenance_runs(db, worlds)


def _provenance_extras(db: Database, worlds: list[str] | None) -> Any:
    return provenance.provenance_extras(db, worlds)


# ------------------------------------------------------------------ labels with their ids


def current_labels(db: Database, worlds: list[str] | None) -> list[tuple[str, str, int]]:
    """(response, annotator, error) of every current label in scope."""
    where, params = world_scope(worlds, "i.world_id")
    return all_rows(
        db,
        f"SELECT e.subject, e.annotator, {_ERROR} FROM annotations e "
        "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
        f"WHERE e.suite = 'copal' AND {CURRENT} AND {_ERROR} IS NOT NULL{where} "
        "ORDER BY e.subject, e.annotator",
        params,
    )


def current_adjudications(db: Database, worlds: list[str] | None) -> list[tuple[str, str, int]]:
    where, params = world_scope(worlds, "i.world_id")
    return all_rows(
        db,
        f"SELECT e.subject, e.annotator, {_ERROR} FROM annotations e "
        "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
        f"WHERE e.suite = 'copal' AND {CURRENT_DECISION} AND {_ERROR} IS NOT NULL{where} "
        "ORDER BY e.subject",
        params,
    )


# ------------------------------------------------------------------ corpus profile


def corpus_counts(db: Database, worlds: list[str] | None) -> dict[str, list[tuple[Any, ...]]]:
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
    return {key: all_rows(db, sql, params) for key, (sql, params) in q.items()}
