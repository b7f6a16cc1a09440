"""COPAL label events in the annotation log: append-only, latest wins, undo appends, stale labels
are detected."""

from __future__ import annotations

import json

import pytest

from copal_tui import labeling
from store.annotation import annotations as log
from store.db import StoreError, connect


@pytest.fixture
def db(cli, initialised, samples):
    cli("import", str(samples / "harbor_clinics.yaml"), str(samples / "harbor_clinics.jsonl"))
    return connect(initialised)


def _response(db):
    return db.execute("SELECT id FROM responses ORDER BY id LIMIT 1").fetchone()[0]


def test_latest_label_wins_and_undo_retracts(db):
    rid = _response(db)
    before = log.count(db)
    required = json.loads(db.execute(
        "SELECT i.required FROM items i JOIN responses r ON r.item_id = i.id WHERE r.id = ?",
        (rid,)).fetchone()[0])
    req = [c["id"] for c in required]
    first = labeling.submit(db, rid, "carl", [])
    assert first.error == 1 and first.direction == "over_enforcement"
    second = labeling.submit(db, rid, "carl", req)
    assert log.current(db, "copal", rid, "carl").get("observed") == req
    assert second.event_id > first.event_id
    assert labeling.undo_last(db, "carl") == rid
    assert log.current(db, "copal", rid, "carl") is None
    # Nothing was edited in place: three events appended.
    assert log.count(db) == before + 3


def test_marks_outside_the_contract_are_refused(db):
    rid = _response(db)
    with pytest.raises(StoreError, match="not contract items"):
        labeling.submit(db, rid, "carl", ["R99"])
    assert log.current(db, "copal", rid, "carl") is None


def test_label_on_changed_content_is_stale(db):
    rid = _response(db)
    labeling.submit(db, rid, "carl", [])
    assert not [s for s in labeling.stale_labels(db) if s.annotator == "carl"]
    db.execute("UPDATE responses SET text = text || ' (edited)' WHERE id = ?", (rid,))
    stale = [s for s in labeling.stale_labels(db) if s.annotator == "carl"]
    assert [s.response_id for s in stale] == [rid]
