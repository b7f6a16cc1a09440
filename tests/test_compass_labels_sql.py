"""store/compass_labels.py and store/compass_browse_sql.py without the UI: the queue's order
and "done", undo reopening a response, current labels agreeing with the m005 view, filters."""

from __future__ import annotations

import pytest

from store import compass_browse_sql, compass_labels
from store.browse_sql import FilterError, PageRequest
from store.db import StoreError, connect
from tests.compass_tui_support import W, build_compass_db


@pytest.fixture
def db(tmp_path):
    conn = connect(build_compass_db(tmp_path))
    yield conn
    conn.close()


def label(db, rid, who="ana", refused=True, compliant=True, mode=None):
    return compass_labels.label(db, rid, who, refused=refused, compliant=compliant,
                                failure_mode=mode, content_sha256="sha")


def test_queue_holds_usable_responses_of_kept_queries_in_id_order(db):
    assert compass_labels.queue_total(db) == 6
    assert compass_labels.next_open(db, "ana") == "r1"
    assert compass_labels.neighbour(db, "r1", forward=True) == "r2"
    assert compass_labels.neighbour(db, "r1", forward=False) is None
    assert compass_labels.last_response(db) == "r6"


def test_done_is_labelled_or_skipped_and_undo_reopens(db):
    label(db, "r1")
    compass_labels.skip(db, "r2", "ana")
    assert compass_labels.next_open(db, "ana") == "r3"
    assert compass_labels.next_open(db, "ben") == "r1"  # per annotator
    label(db, "r3", refused=False)
    undone = compass_labels.undo_last(db, "ana")
    assert undone is not None and undone["response_id"] == "r3" and undone["refused"] == 0
    assert compass_labels.next_open(db, "ana") == "r3"
    assert compass_labels.next_open(db, "ana", after="r3") == "r4"
    assert compass_labels.mine_count(db, "ana") == 1
    # The next undo retracts r1 (the newest label still current), not r3 again.
    assert compass_labels.undo_last(db, "ana")["response_id"] == "r1"  # type: ignore[index]
    assert compass_labels.undo_last(db, "ana") is None
    assert compass_labels.next_open(db, "ana") == "r1"


def test_current_labels_agree_with_the_view(db):
    label(db, "r1", "ana", refused=False)
    label(db, "r1", "ana", refused=True)  # relabel: the later label is current
    label(db, "r1", "ben", compliant=False)
    compass_labels.skip(db, "r1", "ben")  # a skip does not retract a label
    label(db, "r2", "ana")
    compass_labels.undo_last(db, "ana")
    mine = compass_browse_sql.current_labels(db, "r1")
    view = [dict(r) for r in db.execute(
        "SELECT * FROM current_compass_labels WHERE response_id = 'r1' ORDER BY annotator")]
    assert mine == view and [(r["annotator"], r["refused"], r["compliant"]) for r in mine] == [
        ("ana", 1, 1), ("ben", 1, 0)]
    assert compass_labels.current_label(db, "r2", "ana") is None


def test_unknown_response_is_refused(db):
    with pytest.raises(StoreError, match="unknown COMPASS response"):
        label(db, "nope")
    assert db.execute("SELECT COUNT(*) FROM compass_label_events").fetchone()[0] == 0


def test_query_filters_are_parameters_and_wrong_keys_say_what_is_known(db):
    page = compass_browse_sql.queries_page(
        db, W, PageRequest(search="%", filters={"type": "denied_%"}))
    assert page.total == 0  # LIKE wildcards in user input are literal
    page = compass_browse_sql.queries_page(db, W, PageRequest(filters={"strategy": "-"}))
    assert [r["id"] for r in page.rows] == ["q1", "q2", "q3", "q7"]  # no strategy
    with pytest.raises(FilterError, match="this list knows: answered, form, parent"):
        compass_browse_sql.queries_page(db, W, PageRequest(filters={"model": "x"}))
    with pytest.raises(FilterError, match="answered"):
        compass_browse_sql.queries_page(db, W, PageRequest(filters={"answered": "maybe"}))


def test_store_modules_load_no_ui_or_llm():
    import subprocess
    import sys

    code = ("import sys, store.compass_browse_sql, store.compass_labels\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm',"
            " 'copal_tui')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
