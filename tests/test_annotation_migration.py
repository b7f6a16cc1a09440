"""Migration m010 on a store written at the schema before it (m009): every label, undo, skip,
note, flag, adjudication, COMPASS label and dialogue review of the three suites is carried into
the annotation log without loss (ids, order, timestamps, annotators, payloads, hashes), the old
tables and views are gone, exported label records are the ones the old views give, the
report's label reads are the ones the old SQL gives, and the whole `copal report --json` equals
that of the same store written by today's code.

The old store is built the old way, with SQL into the old tables: the content (worlds, items,
responses, judgments, COMPASS and dialogue data) is copied from databases the test suite's
builders make, the COPAL labels and adjudications come from the sample worlds' records (their
error and direction computed by the domain's contract rule, as the importer did), and the
other events are written as the old code wrote them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlite_utils import Database as SUDatabase

from copal_tui.cli import main
from copal_tui.domain.annotation.payloads import CompassLabel, DialogueReview, Remark
from copal_tui.domain.contract import content_sha256, evaluate, item_kinds
from copal_tui.resources import sample_worlds_dir
from copal_tui.services.annotation import adjudication
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from store.annotation import dialogue_reviews
from store.db import connect
from store.migrations.apply import MIGRATIONS
from store.report import compass
from store.report import reads as report_reads
from tests.compass_tui_support import build_compass_db
from tests.db_support import query_dicts
from tests.dialogue_tui_support import MISTAKES, build_dialogue_db
from tests.tui_label_support import build_db

CONTENT = ("worlds", "policies", "clauses", "compositions", "items", "responses", "judgments",
           "compass_queries", "compass_responses", "compass_judgments", "dialogues",
           "dialogue_guidelines", "dialogue_turns", "dialogue_attempts", "dialogue_predictions")
OLD_TABLES = ("label_events", "adjudications", "compass_label_events",
              "dialogue_review_events", "queue_order", "queue_leases")
OLD_VIEWS = ("current_labels", "current_adjudications", "current_compass_labels",
             "current_dialogue_reviews")
R1, R2, R3 = "harbor-clinics:I01:a", "harbor-clinics:I02:b", "meridian-bank:I03:c"
KEYS = [k for k, _ in MISTAKES]


def cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def copy_content(target: Path, sources: list[Path]) -> None:
    """Copy the content tables of `sources` into `target`, in order."""
    conn = sqlite3.connect(target)  # foreign keys off: rows arrive in table order
    for source in sources:
        conn.execute("ATTACH DATABASE ? AS src", (str(source),))
        for table in CONTENT:
            # policies.pk (an INTEGER PRIMARY KEY) is numbered anew: the sources overlap.
            cols = ", ".join(r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")
                             if r[1] != "pk")
            conn.execute(f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM src.{table} "
                         "ORDER BY rowid")
        conn.commit()
        conn.execute("DETACH DATABASE src")
    conn.close()


def sample_records() -> list[dict[str, Any]]:
    out = []
    for name in ("harbor_clinics.jsonl", "meridian_bank.jsonl"):
        for line in (sample_worlds_dir() / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["type"] in ("label", "adjudication"):
                out.append(record)
    return out


def old_store(path: Path, sources: list[Path]) -> None:
    """A store at m009 with the events of every suite in the old tables."""
    db = connect(path, create=True)
    MIGRATIONS.apply(SUDatabase(db.conn), stop_before="m010_annotation_log")
    db.close()
    copy_content(path, sources)
    conn = sqlite3.connect(path)

    def marks(rid: str, observed: list[str]) -> tuple[int, str, str]:
        """(error, direction, content hash) of marks, by the domain's contract rule."""
        query, required, forbidden, text = conn.execute(
            "SELECT i.query, i.required, i.forbidden, s.text FROM responses s JOIN items i "
            "ON i.id = s.item_id WHERE s.id = ?", (rid,)).fetchone()
        req, forb = json.loads(required), json.loads(forbidden)
        verdict = evaluate([c["id"] for c in req], [c["id"] for c in forb], observed,
                           item_kinds(req))
        return (verdict.error, verdict.direction.value,
                content_sha256(query, req, forb, text or ""))

    def copal(table: str, rid: str, who: str, action: str, observed: list[str] | None,
              note: str | None, created_at: str, facet: str | None = None) -> None:
        error, direction, sha = marks(rid, observed) if observed is not None else (None,) * 3
        conn.execute(
            f"INSERT INTO {table} (response_id, "
            f"{'annotator' if table == 'label_events' else 'adjudicator'}, action, observed, "
            "error, direction, facet, note, content_sha256, created_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)",
            (rid, who, action, None if observed is None else json.dumps(observed), error,
             direction, facet, note, sha, created_at))

    for r in sample_records():
        label = r["type"] == "label"
        copal("label_events" if label else "adjudications", r["response_id"],
              r.get("annotator") or r.get("adjudicator"), "label" if label else "decide",
              r["observed"], r["note"], r["created_at"], r["facet"])
    copal("label_events", R1, "cleo", "label", [], None, "t1")
    copal("label_events", R1, "cleo", "undo", None, None, "t2")
    copal("label_events", R2, "cleo", "label", ["R1"], None, "t3")
    # The rest as the old queue wrote them: a skip, a note, flags (one by an adjudicator),
    # a decision and its undo, a lease, queue places, COMPASS labels and dialogue reviews.
    conn.executescript(f"""
        INSERT INTO label_events (response_id, annotator, action, note, flag, created_at) VALUES
            ('{R3}', 'cleo', 'skip', NULL, NULL, 't4'),
            ('{R1}', 'cleo', 'note', 'odd ''wording'' é', NULL, 't5'),
            ('{R2}', 'cleo', 'flag', 'unclear', 'ambiguous', 't6'),
            ('{R3}', 'lead2', 'flag', NULL, 'contract defect', 't7');
        INSERT INTO queue_order (response_id, item_id, position, stratum, created_at)
            SELECT id, item_id, ROW_NUMBER() OVER (ORDER BY id), 'p|m', 't0' FROM responses;
        INSERT INTO queue_leases (queue, response_id, slot, annotator, leased_at, expires_at)
            VALUES ('label', '{R3}', 0, 'cleo', 't4', '2999-01-01T00:00:00.000000Z');
        INSERT INTO compass_label_events (response_id, annotator, action, refused, compliant,
            failure_mode, note, content_sha256, created_at) VALUES
            ('r1', 'ana', 'label', 1, 1, NULL, NULL, 'sha-d', 'c1'),
            ('r1', 'ben', 'label', 0, 0, 'direct_violation', 'names a rival', 'sha-e', 'c2'),
            ('r2', 'ana', 'skip', NULL, NULL, NULL, NULL, NULL, 'c3'),
            ('r3', 'ana', 'label', 0, 1, NULL, NULL, 'sha-f', 'c4'),
            ('r3', 'ana', 'undo', NULL, NULL, NULL, NULL, NULL, 'c5');
    """)
    copal("adjudications", R2, "lead2", "decide", ["R1"], "kept", "t8")
    copal("adjudications", R2, "lead2", "undo", None, None, "t9")
    reviews = [(KEYS[0], "ana", "label", "scope_misattribution", "phase two"),
               (KEYS[0], "ben", "label", "other", None), (KEYS[1], "ana", "skip", None, None),
               (KEYS[3], "ana", "label", "overly_strict", None),
               (KEYS[3], "ana", "undo", None, None)]
    conn.executemany("INSERT INTO dialogue_review_events (dialogue_id, judge, attempt, "
                     "turn_index, reviewer, action, error_type, note, created_at) "
                     "VALUES (?,?,?,?,?,?,?,?,'d')",
                     [(*key, who, action, et, note) for key, who, action, et, note in reviews])
    conn.commit()
    conn.close()


def native_store(path: Path, sources: list[Path]) -> None:
    """The same store written by today's code: the sample labels imported (with the content),
    the other events through the queue and adjudication services."""
    cli(path, "init")
    copy_content(path, sources)
    cli(path, "import", *(str(sample_worlds_dir() / n) for n in (
        "harbor_clinics.jsonl", "meridian_bank.jsonl")))
    db = connect(path)
    cleo, lead2 = (AnnotationQueue(db, "copal", who) for who in ("cleo", "lead2"))
    cleo.submit(R1, copal_label(db, R1, []))
    cleo.undo()
    cleo.submit(R2, copal_label(db, R2, ["R1"]))
    cleo.skip(R3)
    cleo.remark(R1, Remark(note="odd 'wording' é"))
    cleo.remark(R2, Remark(flag="ambiguous", note="unclear"))
    lead2.remark(R3, Remark(flag="contract defect"))
    adjudication.decide(db, "copal", R2, "lead2", copal_label(db, R2, ["R1"], note="kept"))
    adjudication.undo_adjudication(db, "lead2")
    ana, ben = (AnnotationQueue(db, "compass", who, overlap=5) for who in ("ana", "ben"))
    ana.submit("r1", CompassLabel(refused=True, compliant=True))
    ben.submit("r1", CompassLabel(refused=False, compliant=False,
                                  failure_mode="direct_violation", note="names a rival"))
    ana.skip("r2")
    ana.submit("r3", CompassLabel(refused=False, compliant=True))
    ana.undo()
    rev, rev2 = (AnnotationQueue(db, "dialogue", who, overlap=5) for who in ("ana", "ben"))
    subject = dialogue_reviews.subject_of
    rev.submit(subject(KEYS[0]), DialogueReview(error_type="scope_misattribution",
                                                note="phase two"))
    rev2.submit(subject(KEYS[0]), DialogueReview(error_type="other"))
    rev.skip(subject(KEYS[1]))
    rev.submit(subject(KEYS[3]), DialogueReview(error_type="overly_strict"))
    rev.undo()
    db.close()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("m010")
    (tmp / "copal").mkdir()
    sources = [build_db(tmp / "copal"), build_compass_db(tmp), build_dialogue_db(tmp)]
    old, native = tmp / "old.db", tmp / "native.db"
    old_store(old, sources)
    native_store(native, sources)
    before = {t: query_dicts(old, f"SELECT * FROM {t} ORDER BY rowid") for t in OLD_TABLES}
    views = {v: query_dicts(old, f"SELECT * FROM {v} ORDER BY id") for v in OLD_VIEWS}
    reads = old_report_reads(old)
    assert "m010_annotation_log" in cli(old, "migrate")
    return {"old": old, "native": native, "before": before, "views": views, "reads": reads}


def old_report_reads(db: Path) -> dict[str, list[tuple]]:
    """The label reads of the report, with the SQL the code ran before m010."""
    def q(sql: str) -> list[tuple]:
        return [tuple(r.values()) for r in query_dicts(db, sql)]

    return {
        "labels": q("SELECT r.rowid, l.annotator, l.error FROM current_labels l JOIN responses r "
                    "ON r.id = l.response_id WHERE l.error IS NOT NULL "
                    "ORDER BY r.rowid, l.annotator"),
        "adjudications": q("SELECT r.rowid, x.adjudicator, x.error FROM current_adjudications x "
                           "JOIN responses r ON r.id = x.response_id WHERE x.error IS NOT NULL "
                           "ORDER BY r.rowid"),
        "compass": q("SELECT l.response_id, q.query_type, l.annotator, l.refused, l.compliant "
                     "FROM current_compass_labels l JOIN compass_responses r ON r.id = "
                     "l.response_id JOIN compass_queries q ON q.id = r.query_id WHERE "
                     "q.status = 'kept' AND r.failure IS NULL AND r.text IS NOT NULL "
                     "ORDER BY l.response_id, l.annotator"),
        "reviews": q("SELECT judge, turn_index, error_type FROM current_dialogue_reviews "
                     "ORDER BY id"),
    }


# ------------------------------------------------------------------ the tests


def payload(row: dict[str, Any]) -> Any:
    return None if row["payload"] is None else json.loads(row["payload"])


def carried(stores: dict[str, Any], table: str) -> list[dict[str, Any]]:
    """The log's events that m010 copied from `table`, in the old table's order."""
    return query_dicts(stores["old"], "SELECT o.source_id, a.* FROM annotation_origins o JOIN "
                       "annotations a ON a.id = o.id WHERE o.source = ? ORDER BY o.source_id",
                       (table,))


def test_old_tables_and_views_are_gone(stores):
    names = {r["name"] for r in query_dicts(stores["old"], "SELECT name FROM sqlite_master")}
    assert not names & {*OLD_TABLES, *OLD_VIEWS}
    assert {"annotations", "current_annotations", "annotation_leases", "campaigns"} <= names


def test_every_copal_event_is_carried_with_its_id_and_columns(stores):
    old, new = stores["before"]["label_events"], carried(stores, "label_events")
    assert [e["id"] for e in new] == [o["id"] for o in old]  # label events keep their ids
    for o, e in zip(old, new, strict=True):
        assert (e["suite"], e["subject"], e["annotator"], e["role"], e["action"],
                e["content_sha256"], e["created_at"]) == (
            "copal", o["response_id"], o["annotator"], "annotator", o["action"],
            o["content_sha256"], o["created_at"])
        if o["action"] == "label":
            assert payload(e) == {"observed": json.loads(o["observed"]), "error": o["error"],
                                  "direction": o["direction"], "facet": o["facet"],
                                  "note": o["note"]}
        elif o["action"] in ("note", "flag"):
            assert payload(e) == {"note": o["note"], "flag": o["flag"]}
        else:
            assert payload(e) is None
    assert {o["action"] for o in old} == {"label", "undo", "skip", "note", "flag"}


def test_adjudications_become_decisions_after_the_label_events(stores):
    old, new = stores["before"]["adjudications"], carried(stores, "adjudications")
    last_label = max(o["id"] for o in stores["before"]["label_events"])
    ids = [e["id"] for e in new]
    assert ids == sorted(ids) and ids[0] > last_label and len(ids) == len(old)
    for o, e in zip(old, new, strict=True):
        assert (e["subject"], e["annotator"], e["role"], e["created_at"], e["content_sha256"]) \
            == (o["response_id"], o["adjudicator"], "adjudicator", o["created_at"],
                o["content_sha256"])
        assert e["action"] == {"decide": "label", "undo": "undo"}[o["action"]]
        assert payload(e) == (None if o["action"] == "undo" else {
            "observed": json.loads(o["observed"]), "error": o["error"],
            "direction": o["direction"], "facet": o["facet"], "note": o["note"]})


def test_compass_labels_and_dialogue_reviews_are_carried(stores):
    old, new = stores["before"]["compass_label_events"], carried(stores, "compass_label_events")
    assert len(new) == len(old) == 5
    for o, e in zip(old, new, strict=True):
        assert (e["suite"], e["subject"], e["annotator"], e["action"], e["content_sha256"],
                e["created_at"]) == ("compass", o["response_id"], o["annotator"], o["action"],
                                     o["content_sha256"], o["created_at"])
        assert payload(e) == (None if o["action"] != "label" else {
            "refused": bool(o["refused"]), "compliant": bool(o["compliant"]),
            "failure_mode": o["failure_mode"], "note": o["note"]})
    old, new = stores["before"]["dialogue_review_events"], carried(
        stores, "dialogue_review_events")
    assert len(new) == len(old) == 5
    for o, e in zip(old, new, strict=True):
        key = [o["dialogue_id"], o["judge"], o["attempt"], o["turn_index"]]
        assert (e["suite"], json.loads(e["subject"]), e["annotator"], e["action"],
                e["created_at"]) == ("dialogue", key, o["reviewer"], o["action"],
                                     o["created_at"])
        assert payload(e) == (None if o["action"] != "label" else {
            "error_type": o["error_type"], "note": o["note"]})
    ids = [e["id"] for t in ("adjudications", "compass_label_events", "dialogue_review_events")
           for e in carried(stores, t)]
    assert ids == sorted(ids)  # each table after the one before, in its own order


def test_the_current_view_keeps_the_old_views_rows(stores):
    views = stores["views"]
    now = query_dicts(stores["old"], "SELECT o.source, o.source_id FROM current_annotations a "
                      "JOIN annotation_origins o ON o.id = a.id")
    got = {(r["source"], r["source_id"]) for r in now}
    expected = {(table, r["id"]) for view, table in (
        ("current_labels", "label_events"), ("current_adjudications", "adjudications"),
        ("current_compass_labels", "compass_label_events"),
        ("current_dialogue_reviews", "dialogue_review_events")) for r in views[view]}
    assert got == expected and len(now) == len(expected)


def test_exported_label_records_are_the_old_views(stores, tmp_path):
    out = tmp_path / "store.jsonl"
    cli(stores["old"], "export", "--format", "jsonl", "--out", str(out))
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    labels = [r for r in records if r["type"] in ("label", "adjudication")]
    views = stores["views"]
    expected = [{"type": "label", "response_id": r["response_id"], "annotator": r["annotator"],
                 "observed": json.loads(r["observed"]), "error": r["error"],
                 "facet": r["facet"], "note": r["note"], "created_at": r["created_at"]}
                for r in sorted(views["current_labels"],
                                key=lambda r: (r["response_id"], r["annotator"]))]
    expected += [{"type": "adjudication", "response_id": r["response_id"],
                  "adjudicator": r["adjudicator"], "observed": json.loads(r["observed"]),
                  "error": r["error"], "facet": r["facet"], "note": r["note"],
                  "created_at": r["created_at"]}
                 for r in sorted(views["current_adjudications"], key=lambda r: r["response_id"])]
    assert labels == expected and len(expected) > 150


def test_the_report_reads_what_the_old_sql_read(stores):
    db, reads = connect(stores["old"]), stores["reads"]
    try:
        assert report_reads.label_rows(db) == reads["labels"]
        assert report_reads.label_rows(db, decisions=True) == reads["adjudications"]
        assert compass.label_rows(db, None) == reads["compass"]
        counted = {(r.judge, r.error_type): r.count
                   for r in dialogue_reviews.error_type_rows(db, totals=False) if r.count}
        assert counted == {(judge, et): 1 for judge, _turn, et in reads["reviews"]}
    finally:
        db.close()


def test_the_report_equals_that_of_the_store_written_today(stores):
    migrated = cli(stores["old"], "report", "--json", "--bootstrap", "50")
    native = cli(stores["native"], "report", "--json", "--bootstrap", "50")
    assert migrated == native
    doc = json.loads(migrated)
    assert doc["reference_labels"]["adjudicated"] > 0 and doc["pas_judge_validity"]


def test_the_queue_goes_on_where_it_was(stores):
    db = stores["old"]
    placed = query_dicts(db, "SELECT subject, position FROM campaign_subjects "
                         "WHERE campaign = 'default:copal' ORDER BY position")
    old = {r["response_id"]: r["position"] for r in stores["before"]["queue_order"]}
    assert placed and all(old[r["subject"]] == r["position"] for r in placed)
    starts = {r["annotator"] for r in query_dicts(db, "SELECT annotator FROM campaign_starts")}
    assert {"ana", "ben", "cleo"} <= starts
    [lease] = query_dicts(db, "SELECT suite, subject, role, slot, annotator FROM annotation_leases")
    assert lease == {"suite": "copal", "subject": R3, "role": "annotator", "slot": 0,
                     "annotator": "cleo"}
