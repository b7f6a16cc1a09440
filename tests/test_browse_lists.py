"""store/browse/lists.py and store/browse/item.py: pages, totals, filters, escaping, undo,
per-world runs, the item view; and that a world's list pages through its index (no full scan)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from copal_tui.domain.annotation.payloads import Remark
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from store.browse import item as item_sql
from store.browse import lists as sql
from store.db import Database, connect
from store.pipeline import runs
from tests import test_tui_browse_data as data
from tests.test_tui_browse_data import EVIL_ID, I01, W

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
browse_db = data.browse_db
browse_template = data.browse_template


@pytest.fixture
def db(browse_db: Path) -> Iterator[Database]:
    conn = connect(browse_db)
    yield conn
    conn.conn.close()


def ids(db: Database, query: str, params: tuple = ()) -> list[str]:
    return [r[0] for r in db.execute(query, params)]


def test_pages_concatenate_to_the_whole_list(db: Database) -> None:
    everything = ids(db, "SELECT id FROM items WHERE world_id = ? ORDER BY rowid", (W,))
    seen: list[str] = []
    for offset in range(0, len(everything) + 10, 10):
        page = sql.items_page(db, W, sql.PageRequest(offset=offset, limit=10))
        assert page.total == len(everything)
        assert len(page.rows) <= 10
        seen += [r["id"] for r in page.rows]
    assert seen == everything


def test_world_counts_match_independent_queries(db: Database) -> None:
    row = sql.world_summary(db, W)
    assert row is not None
    assert row.items == len(ids(db, "SELECT id FROM items WHERE world_id = ?", (W,)))
    assert row.selected == len(ids(db, "SELECT id FROM items WHERE world_id = ? AND "
                                          "selected = 1", (W,)))
    stats = sql.world_stats(db, [W])[W]
    assert stats["responses"] == len(ids(db, "SELECT r.id FROM responses r JOIN items i ON "
                                             "i.id = r.item_id WHERE i.world_id = ?", (W,)))
    labelled = ids(db, "SELECT DISTINCT l.subject FROM current_annotations l JOIN responses r "
                       "ON r.id = l.subject JOIN items i ON i.id = r.item_id "
                       "WHERE l.suite = 'copal' AND l.role = 'annotator' AND i.world_id = ?",
                   (W,))
    assert stats["labelled"] == len(labelled)
    human = db.execute("SELECT AVG(json_extract(l.payload, '$.error')) FROM current_annotations "
                       "l JOIN responses r ON r.id = l.subject JOIN items i ON i.id = r.item_id "
                       "WHERE l.suite = 'copal' AND l.role = 'annotator' AND i.world_id = ?",
                       (W,)).fetchone()[0]
    assert stats["human_err"] == pytest.approx(human)
    judge = db.execute("SELECT AVG(j.error) FROM judgments j JOIN responses r ON r.id = "
                       "j.response_id JOIN items i ON i.id = r.item_id WHERE i.world_id = ? "
                       "AND j.mode = 'contract'", (W,)).fetchone()[0]
    assert stats["judge_err"] == pytest.approx(judge)


def test_undo_removes_a_response_from_the_labelled_count(db: Database) -> None:
    before = sql.world_stats(db, [W])[W]["labelled"]
    rid = EVIL_ID  # nobody has labelled it
    zed = AnnotationQueue(db, "copal", "zed")
    zed.submit(rid, copal_label(db, rid, []))
    assert sql.world_stats(db, [W])[W]["labelled"] == before + 1
    item = next(r for r in sql.items_page(db, W, sql.PageRequest(search="I02")).rows)
    assert item["labelled"] == 4  # a, b, c by ana and ben, z by zed
    zed.undo()
    assert sql.world_stats(db, [W])[W]["labelled"] == before


def test_filters_validate_keys_and_values(db: Database) -> None:
    with pytest.raises(sql.FilterError, match="unknown filter 'colour'.*facet"):
        sql.items_page(db, W, sql.PageRequest(filters={"colour": "red"}))
    with pytest.raises(sql.FilterError, match="selected: expects yes or no"):
        sql.items_page(db, W, sql.PageRequest(filters={"selected": "maybe"}))
    page = sql.items_page(db, W, sql.PageRequest(filters={"erred": "yes"}))
    assert [r["id"] for r in page.rows] == ids(
        db, "SELECT DISTINCT i.id FROM items i JOIN responses r ON r.item_id = i.id JOIN "
            "judgments j ON j.response_id = r.id WHERE i.world_id = ? AND j.error = 1 AND "
            "j.mode = 'contract' ORDER BY i.rowid", (W,))
    clauses = sql.clauses_page(db, W, sql.PageRequest(filters={"effect": "withhold"}))
    assert {r["effect"] for r in clauses.rows} == {"WITHHOLD"}


def test_user_text_is_a_parameter_never_sql(db: Database) -> None:
    for text in ("%", "_", "\\", "'; DROP TABLE items; --", '" OR 1=1 --'):
        assert sql.items_page(db, W, sql.PageRequest(search=text)).total == 0
        assert sql.items_page(db, W, sql.PageRequest(filters={"facet": text})).total == 0
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] > 0
    # Words are ANDed, each matched anywhere in the searchable columns.
    page = sql.items_page(db, W, sql.PageRequest(search="strep throat"))
    assert I01 in [r["id"] for r in page.rows]


def test_runs_of_a_world_are_those_that_named_it_or_every_world(db: Database) -> None:
    runs.start(db, "r-all", "judge", {"options": {"worlds": None}})
    runs.start(db, "r-bank", "respond", {"options": {"worlds": ["meridian-bank"]}})
    runs.start(db, "r-both", "ground", {"options": {"worlds": ["meridian-bank", W]}})
    assert {r["id"] for r in sql.runs_page(db, W, sql.PageRequest()).rows} == {"r-all", "r-both"}
    assert sql.runs_page(db, None, sql.PageRequest()).total == 3
    only = sql.runs_page(db, W, sql.PageRequest(filters={"stage": "ground"}))
    assert [r["id"] for r in only.rows] == ["r-both"]
    run = sql.run_manifest(db, "r-bank")
    assert run is not None and run.manifest == {"options": {"worlds": ["meridian-bank"]}}


def test_item_view_and_responses(db: Database) -> None:
    view = item_sql.item_view(db, I01)
    assert view is not None
    assert [c.id for c in view.clauses] == [f"{W}:C09", f"{W}:C10"]
    assert [p.id for p in view.projections] == [f"{I01}:p1", f"{I01}:p2"]
    proj = item_sql.item_view(db, f"{I01}:p2")
    assert proj is not None and [c.id for c in proj.clauses] == [f"{W}:C10"]
    assert proj.parent is not None and proj.parent.id == I01
    AnnotationQueue(db, "copal", "ana").remark(f"{I01}:a", Remark(flag="ambiguous"))
    responses = {r.id: r for r in item_sql.item_responses(db, I01)}
    a = responses[f"{I01}:a"]
    assert {lab.annotator: lab.get("observed") for lab in a.labels} == {
        "ana": ["R1"], "ben": ["R1", "F1"]}
    assert a.adjudication is not None and a.adjudication.get("observed") == ["R1"]
    assert a.remarks[-1].get("flag") == "ambiguous"
    evidence = a.judgments[("test/judge-a", "contract")].evidence
    assert evidence is not None and evidence["F1"].startswith("White")
    errors = item_sql.projection_errors(db, [I01, f"{I01}:p1", f"{I01}:p2"], "test/judge-a",
                                        "contract")
    assert errors[(I01, "sample/assistant-a")] == 1
    assert errors[(f"{I01}:p1", "sample/assistant-a")] == 0
    assert item_sql.item_view(db, "missing") is None


def test_pages_read_through_indexes_only(db: Database) -> None:
    # What keeps a 100,000-response database as quick as a small one, without timing anything:
    # every statement a page or the item view runs searches an index; none scans a whole
    # table of rows, sorts a world's rows, or walks every label event.
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    try:
        sql.worlds_page(db, sql.PageRequest())
        sql.world_stats(db, [W])
        sql.items_page(db, W, sql.PageRequest(filters={"labelled": "yes", "erred": "no"}))
        sql.clauses_page(db, W, sql.PageRequest())
        sql.compositions_page(db, W, sql.PageRequest())
        sql.policies_page(db, W, sql.PageRequest())
        item_sql.item_view(db, I01)
        item_sql.item_responses(db, I01)
        item_sql.projection_errors(db, [I01, f"{I01}:p1"], "test/judge-a", "contract")
    finally:
        db.conn.set_trace_callback(None)
    assert statements
    # Indexes on a column with a handful of values: driving a lookup from them visits a large
    # share of the table (every judgment of a judge, every erring judgment, every label).
    unselective = ("idx_judgments_error", "idx_judgments_judge_mode")
    for statement in statements:
        plan = [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + statement)]
        for big in ("items", "responses", "judgments", "annotations"):
            assert not any(step.startswith(f"SCAN {big}") for step in plan), (statement, plan)
        assert not any(i in step for step in plan for i in unselective), (statement, plan)
        if "FROM items WHERE world_id" in statement and "LIMIT" in statement:
            assert any("idx_items_world" in step for step in plan), plan
