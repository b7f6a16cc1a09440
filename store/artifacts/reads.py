"""Typed reads: lookups used by import validation, rows for export, counts for `stats`.

Exports iterate in primary-key order so the same database always gives the same bytes. Nothing
here begins a transaction: the caller (a service, an importer, the export) decides what is read
in one snapshot.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from copal_tui.domain.grounding import SOURCES, source_kind
from copal_tui.domain.suites import suite as suite_named
from store.annotation import annotations as log
from store.artifacts.records import (
    AlignedCount,
    ItemContract,
    JudgmentRow,
    ModelErrors,
    ResponseContent,
    ResponseRow,
    Stored,
)
from store.db import Database, scalar
from store.pipeline.rows import ClauseRow, CompositionRow, ItemRow, PolicyRow, WorldRow, columns

T = TypeVar("T")

_WORLD = f"SELECT {columns(WorldRow)} FROM worlds"
_POLICY = f"SELECT {columns(PolicyRow)} FROM policies"
_CLAUSE = f"SELECT {columns(ClauseRow)} FROM clauses"
_COMPOSITION = f"SELECT {columns(CompositionRow)} FROM compositions"
_ITEM = f"SELECT {columns(ItemRow)} FROM items"
_RESPONSE = f"SELECT {columns(ResponseRow)} FROM responses"
_JUDGMENT = f"SELECT {columns(JudgmentRow)} FROM judgments"
_CONTENT = ("SELECT r.id, r.text, i.id, i.query, i.required, i.forbidden "
            "FROM responses r JOIN items i ON i.id = r.item_id")


def _one(db: Database, sql: str, params: tuple[Any, ...], make: Callable[[Any], T]) -> T | None:
    row = db.execute(sql, params).fetchone()
    return None if row is None else make(row)


def world(db: Database, world_id: str) -> WorldRow | None:
    return _one(db, f"{_WORLD} WHERE id = ?", (world_id,), WorldRow.from_row)


def world_ids(db: Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM worlds ORDER BY id")]


def policies(db: Database, world_id: str) -> list[PolicyRow]:
    """The world's policies, in inventory order."""
    return [PolicyRow(*r) for r in db.execute(
        f"{_POLICY} WHERE world_id = ? ORDER BY position", (world_id,))]


def policy(db: Database, world_id: str, policy_id: str) -> PolicyRow | None:
    return _one(db, f"{_POLICY} WHERE world_id = ? AND id = ?", (world_id, policy_id),
                lambda r: PolicyRow(*r))


def clause(db: Database, clause_id: str) -> ClauseRow | None:
    return _one(db, f"{_CLAUSE} WHERE id = ?", (clause_id,), ClauseRow.from_row)


def composition(db: Database, composition_id: str) -> CompositionRow | None:
    return _one(db, f"{_COMPOSITION} WHERE id = ?", (composition_id,), CompositionRow.from_row)


def item(db: Database, item_id: str) -> ItemRow | None:
    return _one(db, f"{_ITEM} WHERE id = ?", (item_id,), ItemRow.from_row)


def response(db: Database, response_id: str) -> ResponseRow | None:
    return _one(db, f"{_RESPONSE} WHERE id = ?", (response_id,), ResponseRow.from_row)


def judgment(db: Database, judgment_id: str) -> JudgmentRow | None:
    return _one(db, f"{_JUDGMENT} WHERE id = ?", (judgment_id,), JudgmentRow.from_row)


def response_content(db: Database, response_id: str) -> ResponseContent | None:
    """What a label is given on: the item's query and contract and the response text."""
    return _one(db, f"{_CONTENT} WHERE r.id = ?", (response_id,), ResponseContent.from_row)


# ------------------------------------------------------------------ export iteration
# In key order, so the same database always exports the same bytes.


def iter_worlds(db: Database) -> Iterator[WorldRow]:
    return map(WorldRow.from_row, db.execute(f"{_WORLD} ORDER BY id"))


def iter_policies(db: Database) -> Iterator[tuple[str, PolicyRow]]:
    """Every policy with its world, world by world in inventory order."""
    for r in db.execute(f"SELECT world_id, {columns(PolicyRow)} FROM policies "
                        "ORDER BY world_id, position"):
        yield r[0], PolicyRow(*r[1:])


def iter_clauses(db: Database) -> Iterator[ClauseRow]:
    return map(ClauseRow.from_row, db.execute(f"{_CLAUSE} ORDER BY id"))


def iter_compositions(db: Database) -> Iterator[CompositionRow]:
    return map(CompositionRow.from_row, db.execute(f"{_COMPOSITION} ORDER BY id"))


def iter_items(db: Database, *, projections: bool) -> Iterator[ItemRow]:
    """Items without a parent, or (`projections`) items with one."""
    where = "IS NOT NULL" if projections else "IS NULL"
    return map(ItemRow.from_row, db.execute(
        f"{_ITEM} WHERE parent_item_id {where} ORDER BY id"))


def iter_answered_responses(db: Database) -> Iterator[ResponseRow]:
    """Responses with a text and no failure (a failed call is pipeline state, not a result)."""
    return map(ResponseRow.from_row, db.tuples(
        f"{_RESPONSE} WHERE failure IS NULL AND text IS NOT NULL ORDER BY id"))


def iter_scored_judgments(db: Database) -> Iterator[JudgmentRow]:
    """Judgments with an error and no failure."""
    return map(JudgmentRow.from_row, db.tuples(
        f"{_JUDGMENT} WHERE failure IS NULL AND error IS NOT NULL ORDER BY id"))


# ------------------------------------------------------------------ counts


def clause_sources(db: Database) -> dict[str, int]:
    """Clauses by where they come from (`domain.grounding.source_kind` of their source
    policies' kinds), every kind of `SOURCES` present."""
    kinds = db.execute(
        "SELECT (SELECT group_concat(DISTINCT p.kind) FROM json_each(c.policy_ids) m "
        "JOIN policies p ON p.world_id = c.world_id AND p.id = m.value) FROM clauses c")
    found = Counter(source_kind(k.split(",") if k else ()) for (k,) in kinds)
    return {kind: found[kind] for kind in SOURCES}


def stats(db: Database) -> dict[str, int]:
    def count(sql: str) -> int:
        return int(scalar(db, sql) or 0)  # type: ignore[call-overload]

    return {
        "worlds": count("SELECT COUNT(*) FROM worlds"),
        "policies": count("SELECT COUNT(*) FROM policies"),
        "clauses": count("SELECT COUNT(*) FROM clauses"),
        # One policy of an inventory is one rule (the paper's 882 rules of 30 worlds); only the
        # worlds that have clauses count, so a world not grounded yet does not lower the ratio.
        "policy_rules": count("SELECT COUNT(*) FROM policies WHERE world_id IN "
                              "(SELECT world_id FROM clauses)"),
        **{f"clauses_{kind}_source": n for kind, n in clause_sources(db).items()},
        "compositions": count("SELECT COUNT(*) FROM compositions"),
        "items": count("SELECT COUNT(*) FROM items"),
        "selected_items": count("SELECT COUNT(*) FROM items WHERE selected = 1"),
        "responses": count("SELECT COUNT(*) FROM responses"),
        "judgments": count("SELECT COUNT(*) FROM judgments"),
        # COPAL's label events and current labels and decisions (the other suites' labels
        # are counted by the report's sections).
        "label_events": log.count(db, "copal", log.ANNOTATOR),
        "labels": log.count_current(db, "copal"),
        "adjudications": log.count_current(db, "copal", log.ADJUDICATOR),
        "runs": count("SELECT COUNT(*) FROM runs"),
        "llm_calls": count("SELECT COUNT(*) FROM llm_calls"),
    }


def error_summary(db: Database, judge: str, mode: str, method: str = "copal"
                  ) -> list[ModelErrors]:
    """Per target model: judged selected items of `method` and how many erred (demo summary)."""
    rows = db.execute(
        "SELECT r.model, COUNT(*), COALESCE(SUM(j.error), 0) "
        "FROM judgments j JOIN responses r ON r.id = j.response_id "
        "JOIN items i ON i.id = r.item_id "
        "WHERE j.judge = ? AND j.mode = ? AND j.error IS NOT NULL AND i.selected = 1 "
        "AND i.method = ? GROUP BY r.model ORDER BY r.model",
        (judge, mode, method),
    )
    return [ModelErrors(*r) for r in rows]


def pas_summary(db: Database, judge: str) -> list[AlignedCount]:
    """Per target model, variant and allowed/denied: judged COMPASS responses and how many are
    aligned (demo summary; the report has the full breakdown with intervals)."""
    rows = db.execute(
        "SELECT r.model AS model, r.variant AS variant, "
        "CASE WHEN q.query_type LIKE 'allowed%' THEN 'allowed' ELSE 'denied' END AS kind, "
        "COUNT(*), COALESCE(SUM(j.aligned), 0) "
        "FROM compass_judgments j JOIN compass_responses r ON r.id = j.response_id "
        "JOIN compass_queries q ON q.id = r.query_id "
        "WHERE j.judge = ? AND j.aligned IS NOT NULL AND j.failure IS NULL "
        "GROUP BY r.model, r.variant, kind ORDER BY r.model, r.variant, kind",
        (judge,),
    )
    return [AlignedCount(*r) for r in rows]


# ------------------------------------------------------------------ bulk lookups (imports)
# An import checks hundreds of thousands of records: one query per chunk of ids, not per record.

_CHUNK = 20_000


def _by_ids(db: Database, sql: str, ids: Iterable[str]) -> Iterator[Any]:
    """Rows of `sql` as plain tuples, whose one parameter is a JSON array of ids, over `ids`
    in chunks (an import asks this of every chunk of records)."""
    todo = list(ids)
    for i in range(0, len(todo), _CHUNK):
        yield from db.tuples(sql, (json.dumps(todo[i:i + _CHUNK]),))


_IDS = "IN (SELECT value FROM json_each(?))"


def max_rowid(db: Database, table: str) -> int:
    """The largest rowid of `table` (0 when empty): rows above it were written since."""
    return int(db.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}").fetchone()[0])


# The stored rows among `ids`, by id, each with its rowid (an importer tells rows it wrote
# itself, above the rowid it began at, from rows stored before). The rowid is selected last,
# so the row type reads the leading columns as they come.

def _stored(db: Database, row_type: type, table: str, ids: Iterable[str],
            make: Callable[[Any], T]) -> dict[str, Stored[T]]:
    sql = f"SELECT {columns(row_type)}, rowid FROM {table} WHERE id {_IDS}"
    return {r[0]: Stored(r[-1], make(r[:-1])) for r in _by_ids(db, sql, ids)}


def items_by_id(db: Database, ids: Iterable[str]) -> dict[str, Stored[ItemRow]]:
    """The stored items among `ids` (as `item` gives them, with their rowid), by id."""
    return _stored(db, ItemRow, "items", ids, ItemRow.from_row)


def responses_by_id(db: Database, ids: Iterable[str]) -> dict[str, Stored[ResponseRow]]:
    return _stored(db, ResponseRow, "responses", ids, ResponseRow.from_row)


def judgments_by_id(db: Database, ids: Iterable[str]) -> dict[str, Stored[JudgmentRow]]:
    return _stored(db, JudgmentRow, "judgments", ids, JudgmentRow.from_row)


def item_worlds(db: Database, ids: Iterable[str]) -> dict[str, str]:
    """The world of each stored item among `ids`."""
    return {r[0]: r[1] for r in _by_ids(
        db, f"SELECT id, world_id FROM items WHERE id {_IDS}", ids)}


def item_contracts(db: Database, ids: Iterable[str]) -> dict[str, ItemContract]:
    """World, query and contract of each stored item among `ids`."""
    return {r[0]: ItemContract.from_row(r) for r in _by_ids(
        db, f"SELECT id, world_id, query, required, forbidden FROM items WHERE id {_IDS}", ids)}


def response_items(db: Database, ids: Iterable[str]) -> dict[str, str]:
    """The item of each stored response among `ids`."""
    return {r[0]: r[1] for r in _by_ids(
        db, f"SELECT id, item_id FROM responses WHERE id {_IDS}", ids)}


def annotated(db: Database, suite: str, subjects: Iterable[str]) -> set[str]:
    """The subjects among `subjects` with any event in the suite's annotation log."""
    return {r[0] for r in _by_ids(
        db, f"SELECT DISTINCT subject FROM annotations WHERE suite = '{_suite(suite)}' "
            f"AND subject {_IDS}", subjects)}


def _suite(suite: str) -> str:
    # Spliced into the SQL as a literal (the one parameter is the ids): only a registered
    # suite's name, which the code defines, ever gets there.
    return suite_named(suite).name


def response_contents(db: Database, ids: Iterable[str]) -> dict[str, ResponseContent]:
    """`response_content` of each stored response among `ids`, by response id."""
    return {r[0]: ResponseContent.from_row(r)
            for r in _by_ids(db, f"{_CONTENT} WHERE r.id {_IDS}", ids)}
