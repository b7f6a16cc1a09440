"""The COPAL queue (copal_tui.services.annotation.queue) without the UI: stratified stable
order of the default campaign, overlap, leases, undo, adjudication events and the migration
that added the queue tables (carried into the annotation log by m010)."""

from __future__ import annotations

import json
from collections import Counter

from sqlite_utils import Database

from copal_tui.domain.annotation.payloads import CopalLabel
from copal_tui.services.annotation import adjudication
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from store.annotation import annotations as log
from store.annotation import queue
from store.db import StoreError, connect
from store.migrations.apply import MIGRATIONS
from tests.tui_label_support import build_db, rows


def _order(db):
    return rows(db, "SELECT subject AS response_id, position, stratum FROM campaign_subjects "
                "WHERE campaign = 'default:copal' ORDER BY position")


def ensure_order(conn, who="a"):
    """Start `who`'s default COPAL queue: places every new response; returns how many."""
    return AnnotationQueue(conn, "copal", who).prepare()


def LabelQueue(conn, who, overlap):  # noqa: N802 - reads as the class it stands for
    return AnnotationQueue(conn, "copal", who, overlap=overlap)


def test_order_is_stratified_by_pattern_and_model_and_stable(tmp_path):
    db = build_db(tmp_path)
    conn = connect(db)
    assert ensure_order(conn) == 72
    assert ensure_order(conn) == 0  # nothing new: no write
    order = _order(db)
    strata = Counter(r["stratum"] for r in order)
    # Round robin: the first len(strata) responses cover every (pattern, model) stratum.
    assert {r["stratum"] for r in order[: len(strata)]} == set(strata)
    patterns = {r["pattern"] for r in rows(db, "SELECT DISTINCT pattern FROM items")}
    assert {s.split("|")[0] for s in strata} == patterns
    # Rebuilding from scratch gives the same order (hashes, not insertion order or time).
    other = build_db(tmp_path / "again")
    conn2 = connect(other)
    ensure_order(conn2)
    assert [r["response_id"] for r in _order(other)] == [r["response_id"] for r in order]
    conn.conn.close()
    conn2.conn.close()


def test_new_responses_are_appended_without_moving_anyone(tmp_path):
    db = build_db(tmp_path)
    conn = connect(db)
    ensure_order(conn)
    before = {r["response_id"]: r["position"] for r in _order(db)}
    conn.execute("INSERT INTO responses (id, item_id, model, variant, text, created_at) "
                 "VALUES ('late', 'harbor-clinics:I01', 'late/bot', 'base', 'hi', 'now')")
    assert ensure_order(conn) == 1
    after = {r["response_id"]: r for r in _order(db)}
    assert {k: after[k]["position"] for k in before} == before
    assert after["late"]["position"] == max(before.values()) + 1
    [item] = rows(db, "SELECT pattern FROM items WHERE id = 'harbor-clinics:I01'")
    assert after["late"]["stratum"] == f"{item['pattern']}|late/bot"
    conn.conn.close()


def test_failed_or_unselected_responses_are_not_queued(tmp_path):
    db = build_db(tmp_path)
    conn = connect(db)
    conn.execute("UPDATE responses SET failure = 'timeout' WHERE id = 'harbor-clinics:I01:a'")
    conn.execute("UPDATE items SET selected = 0 WHERE id = 'harbor-clinics:I02'")
    ensure_order(conn)
    queued = {r["response_id"] for r in _order(db)}
    assert "harbor-clinics:I01:a" not in queued
    assert not any(r.startswith("harbor-clinics:I02:") for r in queued)
    conn.conn.close()


def test_overlap_counts_labels_and_live_leases(tmp_path):
    db = build_db(tmp_path, extra_responses=1)
    conn = connect(db)
    ensure_order(conn)
    extra = "harbor-clinics:I01:extra0"
    a, b, c = (LabelQueue(conn, who, overlap=2) for who in ("a", "b", "c"))
    # Everything else has ana's and ben's labels: with overlap 2 only the extra is open.
    assert a.resume() == extra and b.resume() == extra
    assert c.resume() is None
    live = queue.live_leases(conn, "copal", "annotator", "0")
    assert sorted((r.annotator, r.slot) for r in live) == [("a", 0), ("b", 1)]
    a.submit(extra, copal_label(conn, extra, []))
    b.skip(extra)  # b's slot is free again ...
    assert c.resume() == extra  # ... and c takes it
    assert {r.slot for r in queue.live_leases(conn, "copal", "annotator", "0")
            if r.annotator == "c"} == {1}
    # a labelled and b skipped: neither is offered the response again.
    assert a.take_next() is None and b.take_next() is None
    p = a.progress()
    assert (p.mine, p.total, p.slots) == (1, 73, 146)
    conn.conn.close()


def test_undo_reopens_and_relabel_keeps_the_slot(tmp_path):
    db = build_db(tmp_path, extra_responses=1)
    conn = connect(db)
    ensure_order(conn)
    a = LabelQueue(conn, "a", overlap=1)
    rid = a.resume()
    a.submit(rid, copal_label(conn, rid, []))
    assert a.take_next() is None
    undone = a.undo()
    assert (undone.subject, undone.get("observed")) == (rid, [])
    assert a.resume() == rid  # reopened for us, and our slot was kept
    with __import__("pytest").raises(StoreError, match="not contract items"):
        copal_label(conn, rid, ["R99"])
    # A label built on a contract the response no longer has is checked against the stored
    # one when it is written.
    stale = CopalLabel.from_marks([{"id": "R99"}], [], ["R99"])
    with __import__("pytest").raises(StoreError, match="not contract items"):
        a.submit(rid, stale)
    conn.conn.close()


def test_adjudication_rows_and_undo(tmp_path):
    db = build_db(tmp_path)
    conn = connect(db)
    rid = "harbor-clinics:I01:a"
    before = log.decision(conn, "copal", rid)
    done = adjudication.decide(conn, "copal", rid, "lead2",
                               copal_label(conn, rid, ["R1"], note="ok"))
    assert done.get("error") == 0
    now = log.decision(conn, "copal", rid)
    assert (now.annotator, now.get("observed"), now.get("note")) == ("lead2", ["R1"], "ok")
    undone = adjudication.undo_adjudication(conn, "lead2")
    assert (undone.subject, undone.get("observed")) == (rid, ["R1"])
    assert adjudication.undo_adjudication(conn, "lead2") is None
    # The undo retracts the whole response's reference (an undo is the latest event).
    assert log.decision(conn, "copal", rid) is None and before is not None
    made = rows(db, "SELECT action, payload FROM annotations WHERE annotator = 'lead2' "
                "AND role = 'adjudicator' ORDER BY id")
    assert [(m["action"], m["payload"] and json.loads(m["payload"])["observed"])
            for m in made] == [("label", ["R1"]), ("undo", None)]
    conn.conn.close()


def test_migration_m003_upgrades_an_m002_database_keeping_adjudications(tmp_path):
    db = build_db(tmp_path)
    conn = connect(db)
    count = conn.execute("SELECT COUNT(*) FROM current_annotations "
                         "WHERE role = 'adjudicator'").fetchone()[0]
    names = [m.name for m in MIGRATIONS.applied(Database(conn.conn))]
    assert "m003_label_queue" in names  # the database is at least at m003
    # Replay the upgrade on a fresh m002 database.
    fresh = Database(connect(tmp_path / "old.db", create=True).conn)
    MIGRATIONS.apply(fresh, stop_before="m003_label_queue")
    assert "queue_leases" not in fresh.table_names()
    fresh.execute("PRAGMA foreign_keys = OFF")  # a bare adjudication row, no world around it
    fresh.execute("INSERT INTO adjudications (response_id, adjudicator, observed, error, "
                  "created_at) VALUES ('r', 'old', '[]', 1, 'then')")
    MIGRATIONS.apply(fresh, stop_before="m010_annotation_log")
    kept = fresh.execute("SELECT adjudicator, action FROM current_adjudications").fetchall()
    assert [tuple(r) for r in kept] == [("old", "decide")]
    assert {"queue_order", "queue_leases"} <= set(fresh.table_names())
    assert "action" in fresh["adjudications"].columns_dict
    # m010 carries the decision into the annotation log (and drops the old tables).
    MIGRATIONS.apply(fresh)
    kept = fresh.execute("SELECT annotator, action FROM current_annotations "
                         "WHERE role = 'adjudicator'").fetchall()
    assert [tuple(r) for r in kept] == [("old", "label")]
    assert not {"adjudications", "queue_order", "queue_leases"} & set(fresh.table_names())
    assert count > 0
    fresh.conn.close()
    conn.conn.close()
