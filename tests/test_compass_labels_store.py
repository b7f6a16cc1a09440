"""The COMPASS queue without the UI (copal_tui.services.annotation.queue over
store/annotation/compass_labels.py and the annotation log): the queue's order and "done", undo
reopening a response, current labels agreeing with the log's view, an unknown response refused,
and store/browse/compass.py's filters."""

from __future__ import annotations

import pytest

from copal_tui.domain.annotation.payloads import CompassLabel
from copal_tui.services.annotation.queue import AnnotationQueue
from store.browse import compass
from store.browse.lists import FilterError, PageRequest
from store.db import StoreError, connect
from tests.compass_tui_support import W, build_compass_db


@pytest.fixture
def db(tmp_path):
    conn = connect(build_compass_db(tmp_path))
    yield conn
    conn.close()


def queue(db, who="ana"):
    # Overlap 5: these tests are about order and "done", not about sharing subjects.
    q = AnnotationQueue(db, "compass", who, overlap=5)
    q.prepare()
    return q


def label(q, rid, refused=True, compliant=True, mode=None):
    return q.submit(rid, CompassLabel(refused=refused, compliant=compliant, failure_mode=mode))


def test_queue_holds_usable_responses_of_kept_queries_in_id_order(db):
    q = queue(db)
    assert q.progress().total == 6
    assert q.candidate() == "r1"
    assert q.neighbour("r1", forward=True) == "r2"
    assert q.neighbour("r1", forward=False) is None
    assert q.neighbour(None, forward=False) == "r6"


def test_done_is_labelled_or_skipped_and_undo_reopens(db):
    ana = queue(db)
    label(ana, "r1")
    ana.skip("r2")
    assert ana.candidate() == "r3"
    assert queue(db, "ben").candidate() == "r1"  # per annotator
    label(ana, "r3", refused=False)
    undone = ana.undo()
    assert undone is not None and undone.subject == "r3" and undone.get("refused") is False
    assert ana.candidate() == "r3"
    assert ana.candidate(after=ana.position("r3") or 0) == "r4"
    assert ana.mine() == 1
    # The next undo retracts r1 (the newest label still current), not r3 again.
    assert ana.undo().subject == "r1"  # type: ignore[union-attr]
    assert ana.undo() is None
    assert ana.candidate() == "r1"


def test_current_labels_agree_with_the_view(db):
    ana, ben = queue(db), queue(db, "ben")
    label(ana, "r1", refused=False)
    label(ana, "r1", refused=True)  # relabel: the later label is current
    label(ben, "r1", compliant=False)
    ben.skip("r1")  # a skip does not retract a label
    label(ana, "r2")
    ana.undo()
    mine = compass.current_labels(db, "r1")
    view = [r["id"] for r in db.execute(
        "SELECT id FROM current_annotations WHERE suite = 'compass' AND subject = 'r1' "
        "ORDER BY annotator")]
    assert [m.id for m in mine] == view
    assert [(r.annotator, r.get("refused"), r.get("compliant")) for r in mine] == [
        ("ana", True, True), ("ben", True, False)]
    assert ana.current("r2") is None


def test_unknown_response_is_refused(db):
    with pytest.raises(StoreError, match="unknown COMPASS response"):
        label(queue(db), "nope")
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0


def test_query_filters_are_parameters_and_wrong_keys_say_what_is_known(db):
    page = compass.queries_page(
        db, W, PageRequest(search="%", filters={"type": "denied_%"}))
    assert page.total == 0  # LIKE wildcards in user input are literal
    page = compass.queries_page(db, W, PageRequest(filters={"strategy": "-"}))
    assert [r["id"] for r in page.rows] == ["q1", "q2", "q3", "q7"]  # no strategy
    with pytest.raises(FilterError, match="this list knows: answered, form, parent"):
        compass.queries_page(db, W, PageRequest(filters={"model": "x"}))
    with pytest.raises(FilterError, match="answered"):
        compass.queries_page(db, W, PageRequest(filters={"answered": "maybe"}))


def test_store_modules_load_no_ui_or_llm():
    import subprocess
    import sys

    code = ("import sys, store.browse.compass, store.annotation.compass_labels\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm',"
            " 'copal_tui')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
