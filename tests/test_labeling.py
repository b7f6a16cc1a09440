"""COPAL labels written the way the label screen writes them (the annotation queue): events of
the log, append-only, the latest label wins, undo appends, and each label keeps the hash of the
content it was given on."""

from __future__ import annotations

import json

import pytest

from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from store.annotation import annotations as log
from store.annotation.annotations import Annotation
from store.db import Database, connect


@pytest.fixture
def db(cli, initialised, samples):
    cli("import", str(samples / "harbor_clinics.yaml"), str(samples / "harbor_clinics.jsonl"))
    return connect(initialised)


def _response(db: Database) -> str:
    return db.execute("SELECT id FROM responses ORDER BY id LIMIT 1").fetchone()[0]


def _label(db: Database, rid: str, annotator: str, observed: list[str]) -> Annotation:
    return AnnotationQueue(db, "copal", annotator).submit(rid, copal_label(db, rid, observed))


def test_latest_label_wins_and_undo_retracts(db):
    rid = _response(db)
    before = log.count(db)
    required = json.loads(db.execute(
        "SELECT i.required FROM items i JOIN responses r ON r.item_id = i.id WHERE r.id = ?",
        (rid,)).fetchone()[0])
    req = [c["id"] for c in required]
    assert req  # the response has required items, so marking none of them is an error
    first = _label(db, rid, "carl", [])
    assert (first.get("error"), first.get("direction")) == (1, "over_enforcement")
    second = _label(db, rid, "carl", req)
    current = log.current(db, "copal", rid, "carl")
    assert current is not None and current.id == second.id and current.get("observed") == req
    assert second.id > first.id
    undone = AnnotationQueue(db, "copal", "carl").undo()
    assert undone is not None and (undone.subject, undone.id) == (rid, second.id)
    assert log.current(db, "copal", rid, "carl") is None
    # Nothing was edited in place: three events appended.
    assert log.count(db) == before + 3


def test_a_label_keeps_the_hash_of_the_content_it_was_given_on(db):
    rid = _response(db)
    carl = _label(db, rid, "carl", [])
    dana = _label(db, rid, "dana", [])
    assert carl.content_sha256 and carl.content_sha256 == dana.content_sha256
    db.execute("UPDATE responses SET text = text || ' (edited)' WHERE id = ?", (rid,))
    erin = _label(db, rid, "erin", [])
    assert erin.content_sha256 and erin.content_sha256 != carl.content_sha256
    # The earlier label still says what it was given on, so it reads as given on other text.
    kept = log.current(db, "copal", rid, "carl")
    assert kept is not None and kept.content_sha256 == carl.content_sha256
