"""Importing a deployed chatbot's log: every text de-identified before it is written (no
planted identifier anywhere in the database file's bytes), duplicates counted and skipped by a
keyed hash of the pair as read, a bad record anywhere leaving the store as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.interchange.errors import ImportFailure
from copal_tui.services.traffic import import_log
from store.db import StoreError, connect
from tests.db_support import query_rows

# Synthetic identifiers in reserved ranges, each distinctive enough to search the bytes for.
PLANTED = ["zora.quill@example.com", "+44 20 7946 0812", "4111 1111 1111 1111",
           "GB82 WEST 1234 5698 7654 32", "203.0.113.77", "order #QX-778812"]


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "t.db"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    return db


def _log(tmp_path: Path, records: list[dict[str, str]], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_no_planted_identifier_reaches_the_database_file(tmp_path: Path):
    db = _store(tmp_path)
    records = [{"query": f"Hi, I'm writing about {value}, can you help?",
                "response": f"Thanks, I have noted {value}."} for value in PLANTED]
    summary = import_log(connect(db), _log(tmp_path, records), source="web")
    assert (summary.pairs, summary.stored, summary.duplicates) == (6, 6, 0)
    assert set(summary.redactions) >= {"EMAIL", "PHONE", "CARD", "IBAN", "IP", "ORDER"}
    rows = query_rows(db, "SELECT query, response, redactions FROM traffic_pairs ORDER BY line")
    assert "<EMAIL_1>" in rows[0][0] and "<EMAIL_1>" in rows[0][1]  # numbered within the pair
    connect(db).conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("t.db*"))
    for value in PLANTED:
        for form in {value, value.replace(" ", "")}:
            assert form.encode() not in raw, form


def test_duplicates_are_counted_and_the_same_log_is_not_imported_twice(tmp_path: Path):
    db = _store(tmp_path)
    same = {"query": "Where is my parcel?", "response": "It is on its way."}
    other = {"query": "Where is my parcel?", "response": "It was delivered."}
    log = _log(tmp_path, [same, other, same])
    summary = import_log(connect(db), log, source="web")
    assert (summary.records, summary.stored, summary.duplicates) == (3, 2, 1)
    repeated = import_log(connect(db), log, source="web")  # an import of its own, storing nothing
    assert (repeated.stored, repeated.duplicates) == (0, 3)
    again = import_log(connect(db), _log(tmp_path, [same, other], "copy.jsonl"), source="app")
    assert (again.stored, again.duplicates) == (0, 2)
    # Two customers' questions identical only after de-identification stay two pairs.
    a = {"query": "My email is a.one@example.com", "response": "Noted."}
    b = {"query": "My email is b.two@example.com", "response": "Noted."}
    kept = import_log(connect(db), _log(tmp_path, [a, b], "two.jsonl"), source="web")
    assert kept.stored == 2
    assert query_rows(db, "SELECT COUNT(DISTINCT query) FROM traffic_pairs WHERE import_id = ?",
                      (kept.import_id,))[0][0] == 1


def test_a_bad_record_anywhere_stores_nothing(tmp_path: Path):
    db = _store(tmp_path)
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"query": "zora.quill@example.com", "response": "ok"})
    path.write_text("\n".join([good] * 2500 + ['{"query": "x"}']) + "\n", encoding="utf-8")
    with pytest.raises(ImportFailure, match=r"bad.jsonl:2501: response: missing field"):
        import_log(connect(db), path, source="web")
    assert query_rows(db, "SELECT COUNT(*) FROM traffic_pairs")[0][0] == 0
    assert query_rows(db, "SELECT COUNT(*) FROM traffic_imports")[0][0] == 0


def test_an_unknown_world_or_no_source_is_refused(tmp_path: Path):
    db = _store(tmp_path)
    log = _log(tmp_path, [{"query": "q", "response": "r"}])
    with pytest.raises(StoreError, match="no world 'nosuch'"):
        import_log(connect(db), log, source="web", world="nosuch")
    with pytest.raises(StoreError, match="source name"):
        import_log(connect(db), log, source="  ")
