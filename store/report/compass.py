"""SQL behind the COMPASS sections of `copal report` (PAS, failure modes, the contrast with
composed testing, judge validity against human labels, COMPASS's own summary table):
`compass_rows` is every read of them, one job of the report's bulk reads (`store.report.reads`),
typed `copal_tui.domain.report_rows.CompassRows`.

Every query returns grouped counts, never one row per judgment, so the metric code in
`copal_tui.metrics.pas` sums a few hundred tuples whatever the size of the suite. Rows are
ordered so the same database gives the same report.

Conventions (the same as `store.report.reads` for composed judgments):
- a COMPASS judgment is *usable* when `failure IS NULL AND aligned IS NOT NULL`, on an answered
  response (`failure IS NULL AND text IS NOT NULL`) to a query verification kept;
- `worlds` (a list of world ids, or None for all) restricts every query through the query's
  `world_id`.
"""

from __future__ import annotations

from copal_tui.domain.compass_rules import FAILURES
from copal_tui.domain.report_rows import (
    CompassLabel,
    CompassRows,
    FailedJudgment,
    LabelledJudgment,
)
from store.annotation.annotations import CURRENT
from store.artifacts import compass_judged
from store.db import Database
from store.report.scope import all_rows, world_scope

# Why a response's judgments are or are not used (judgment failures are in JUDGMENT_CODE).
RESPONSE_STATUS = ("CASE WHEN q.status != 'kept' THEN 'not_kept' "
                   "WHEN r.failure IS NOT NULL OR r.text IS NULL THEN 'no_response' "
                   "ELSE 'answered' END")
# One integer per judgment: aligned (bit 0), failed or no verdict (bit 1), and from bit 2 the
# failure mode of a usable misaligned verdict (0 none, 1 + its index in
# `copal_tui.domain.report_rows.FAILURE_MODE_CODES`, 4 unclassified).
JUDGMENT_CODE = (
    "CASE WHEN failure IS NOT NULL OR aligned IS NULL THEN 2 "
    "WHEN aligned = 1 THEN 1 "
    "ELSE 4 * CASE failure_mode WHEN 'direct_violation' THEN 1 "
    "WHEN 'refusal_answer_hybrid' THEN 2 WHEN 'indirect_violation' THEN 3 ELSE 4 END END")
_USABLE = ("q.status = 'kept' AND r.failure IS NULL AND r.text IS NOT NULL "
           "AND j.failure IS NULL AND j.aligned IS NOT NULL")
_JOIN = ("FROM compass_judgments j JOIN compass_responses r ON r.id = j.response_id "
         "JOIN compass_queries q ON q.id = r.query_id")


def compass_rows(db: Database, worlds: list[str] | None) -> CompassRows | None:
    """Every COMPASS read of a report over `worlds` (None: all), in one snapshot (so every
    judgment finds its response); None when no world in scope has a suite."""
    with db.atomic():
        suite = suite_worlds(db, worlds)
        if not suite:
            return None
        ids, keys = response_columns(db)
        names = judges(db)
        rids, codes = judgment_columns(db, names)
        failed = [FailedJudgment(*r) for r in compass_judged.failed_judgments(
            db, suite, list(FAILURES.values()))]
        return CompassRows(
            suite=suite, response_ids=ids, response_keys=keys, judges=names,
            judgment_responses=rids, judgment_codes=codes, failed=failed,
            world_names=compass_judged.world_names(db, suite),
            labels=label_rows(db, worlds), labelled_judgments=labelled_judgments(db, worlds))


def suite_worlds(db: Database, worlds: list[str] | None) -> list[str]:
    """Worlds in scope that have a COMPASS suite (at least one query)."""
    where, params = world_scope(worlds, "world_id")
    return [r[0] for r in db.execute(
        f"SELECT DISTINCT world_id FROM compass_queries WHERE 1 = 1{where} ORDER BY world_id",
        params)]


def response_columns(db: Database) -> tuple[str | None, str | None]:
    """Every COMPASS response as two aligned group_concat columns (char(30)-separated): ids,
    and class keys `model, variant, world, query type, status` joined by char(31), where status
    is `answered`, `no_response` (the target call failed) or `not_kept` (verification rejected
    the query afterwards). Unscoped: the caller keeps the worlds it wants, and every judgment
    finds its response."""
    key = " || char(31) || ".join(("r.model", "r.variant", "q.world_id", "q.query_type",
                                   RESPONSE_STATUS))
    row = db.execute(
        f"SELECT group_concat(r.id, char(30)), group_concat({key}, char(30)) "
        "FROM compass_responses r JOIN compass_queries q ON q.id = r.query_id").fetchone()
    return row[0], row[1]


def judges(db: Database) -> list[str]:
    """Every judge of a COMPASS judgment, by name (read from the judge index alone)."""
    return [r[0] for r in db.execute(
        "SELECT judge FROM compass_judgments GROUP BY judge ORDER BY judge")]


def judgment_columns(db: Database, names: list[str]) -> tuple[str | None, str | None]:
    """Every COMPASS judgment as two aligned group_concat columns: response ids
    (char(30)-separated) and `judge index * 32 + JUDGMENT_CODE` (comma-separated), the judge
    index being its position in `names` (`judges`).

    Why not one GROUP BY joined to responses and queries: on 118,400 judgments its sort took
    1.7-2.9 s on a loaded machine, this read plus `response_columns` and the grouping in numpy
    by `copal_tui.metrics.compass_sections` under 1 s (the reasoning of `store.report.reads`'s bulk
    reads: returning many Python tuples or sorting in SQLite costs more than the scan)."""
    if not names:
        return None, None
    judge = "CASE judge " + " ".join(f"WHEN ? THEN {k}" for k in range(len(names))) + " END"
    row = db.execute(
        f"SELECT group_concat(response_id, char(30)), group_concat(({judge}) * 32 + "
        f"{JUDGMENT_CODE}) FROM compass_judgments", tuple(names)).fetchone()
    return row[0], row[1]


def label_rows(db: Database, worlds: list[str] | None) -> list[CompassLabel]:
    """(response, query type, annotator, refused, compliant) of every current COMPASS label on
    an answered response to a kept query (either flag may be None)."""
    where, params = world_scope(worlds, "q.world_id")
    return [CompassLabel(*r) for r in all_rows(
        db,
        # json_extract reads the payload's booleans as 1/0, the integers the report counts.
        "SELECT e.subject, q.query_type, e.annotator, json_extract(e.payload, '$.refused'), "
        "json_extract(e.payload, '$.compliant') FROM annotations e "
        "JOIN compass_responses r ON r.id = e.subject "
        "JOIN compass_queries q ON q.id = r.query_id WHERE e.suite = 'compass' "
        f"AND {CURRENT} AND q.status = 'kept' "
        f"AND r.failure IS NULL AND r.text IS NOT NULL{where} "
        "ORDER BY e.subject, e.annotator",
        params,
    )]


def labelled_judgments(db: Database, worlds: list[str] | None) -> list[LabelledJudgment]:
    """(response, judge, refused, compliant, aligned) of usable judgments of labelled
    responses."""
    where, params = world_scope(worlds, "q.world_id")
    return [LabelledJudgment(*r) for r in all_rows(
        db,
        f"SELECT j.response_id, j.judge, j.refused, j.compliant, j.aligned {_JOIN} "
        f"WHERE {_USABLE}{where} AND j.response_id IN "
        f"(SELECT e.subject FROM annotations e WHERE e.suite = 'compass' AND {CURRENT}) "
        "ORDER BY j.response_id, j.judge",
        params,
    )]
