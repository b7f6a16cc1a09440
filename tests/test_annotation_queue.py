"""The one annotation queue (copal_tui.services.annotation.queue) for COMPASS responses and judge
mistakes, the suites that had neither leases nor overlap before it: overlap, leases (taken,
renewed, expired, given back), resume, undo appending, payloads checked, and a named campaign
walked in full. Expiry is simulated by moving a lease's end into the past, never by waiting."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from copal_tui.domain.annotation.payloads import CompassLabel, DialogueReview
from copal_tui.services.annotation import campaigns
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import Filters
from store.annotation import dialogue_reviews
from store.db import connect
from tests.compass_tui_support import build_compass_db
from tests.dialogue_tui_support import MISTAKES, build_dialogue_db

COMPASS = ["r1", "r2", "r3", "r4", "r5", "r6"]  # the support suite's queue, by response id
MISTAKE_SUBJECTS = [dialogue_reviews.subject_of(k) for k, _ in MISTAKES]


@pytest.fixture(params=["compass", "dialogue"])
def suite(request, tmp_path):
    """(suite, connection, its subjects in queue order, a label's answer) for each suite."""
    if request.param == "compass":
        conn = connect(build_compass_db(tmp_path))
        info = ("compass", conn, COMPASS, CompassLabel(refused=False, compliant=True))
    else:
        conn = connect(build_dialogue_db(tmp_path))
        info = ("dialogue", conn, MISTAKE_SUBJECTS, DialogueReview(error_type="other"))
    yield info
    conn.close()


def queue(suite, who, overlap):
    name, conn, _subjects, _answer = suite
    q = AnnotationQueue(conn, name, who, overlap=overlap)
    q.prepare()
    return q


def live(conn, name):
    return sorted((r["subject"], r["slot"], r["annotator"]) for r in conn.execute(
        "SELECT subject, slot, annotator FROM annotation_leases WHERE suite = ? "
        "AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", (name,)))


def test_overlap_one_hands_two_annotators_different_subjects(suite):
    name, conn, subjects, answer = suite
    a, b = queue(suite, "ann", 1), queue(suite, "bob", 1)
    first, second = a.resume(), b.resume()
    assert (first, second) == (subjects[0], subjects[1])
    assert live(conn, name) == [(subjects[0], 0, "ann"), (subjects[1], 0, "bob")]
    a.submit(first, answer)
    # ann's label keeps her slot: bob is never offered the subject ann labelled.
    b.submit(second, answer)
    assert b.take_next() == subjects[2] and a.take_next() == subjects[3]


def test_overlap_two_shares_a_subject_in_two_slots_then_moves_on(suite):
    name, conn, subjects, answer = suite
    a, b, c = (queue(suite, who, 2) for who in ("ann", "bob", "cid"))
    assert a.resume() == b.resume() == subjects[0]
    assert c.resume() == subjects[1]  # both slots of the first are leased
    assert {slot for _s, slot, _who in live(conn, name) if _s == subjects[0]} == {0, 1}
    a.submit(subjects[0], answer)
    b.skip(subjects[0])  # bob's slot is free again ...
    assert c.take_next() == subjects[0]  # ... and cid takes it
    assert {slot for _s, slot, who in live(conn, name) if _s == subjects[0]} == {0, 1}
    # The first is full (ann's label, cid's lease): the next annotator joins cid's other one.
    assert queue(suite, "dan", 2).resume() == subjects[1]
    # Neither ann (labelled) nor bob (skipped) is offered the first again.
    assert subjects[0] not in (a.take_next(), b.take_next())


def test_an_expired_lease_frees_its_slot(suite):
    name, conn, subjects, _answer = suite
    a, b = queue(suite, "ann", 1), queue(suite, "bob", 1)
    assert a.resume() == subjects[0]
    assert b.take_next() == subjects[1]
    b.release(subjects[1])
    conn.execute("UPDATE annotation_leases SET expires_at = '2000-01-01T00:00:00.000000Z' "
                 "WHERE annotator = 'ann'")  # ann walked away for longer than the lease
    assert b.take_next() == subjects[0]
    assert [s for s, _slot, who in live(conn, name) if who == "bob"] == [subjects[0]]


def test_resume_returns_the_live_unfinished_lease(suite):
    _name, _conn, subjects, answer = suite
    a = queue(suite, "ann", 2)
    a.submit(a.resume(), answer)
    held = a.take_next()
    assert held == subjects[1]
    # A new process for the same annotator comes back to the subject it held.
    assert queue(suite, "ann", 2).resume() == held
    a.release(held)
    assert queue(suite, "ann", 2).resume() == held  # released but still the first open one


def test_undo_appends_and_reopens(suite):
    name, conn, subjects, answer = suite
    a = queue(suite, "ann", 2)
    a.submit(a.resume(), answer)
    a.submit(a.take_next(), answer)
    before = [tuple(r) for r in conn.execute("SELECT * FROM annotations ORDER BY id")]
    undone = a.undo()
    assert undone is not None and undone.subject == subjects[1]
    after = [tuple(r) for r in conn.execute("SELECT * FROM annotations ORDER BY id")]
    assert after[:len(before)] == before  # nothing edited in place
    assert [(r[2], r[5]) for r in after[len(before):]] == [(subjects[1], "undo")]
    assert a.current(subjects[1]) is None and a.mine() == 1
    assert a.candidate() == subjects[1]  # reopened (and our lease on it was renewed)
    assert a.undo().subject == subjects[0] and a.undo() is None
    assert {r[1] for r in after} == {name}


def test_a_payload_that_does_not_fit_is_refused(suite):
    name, conn, subjects, _answer = suite
    # COMPASS's failure modes and the judge-mistake taxonomy are closed lists: the payload
    # model refuses anything else when it is built, so no such label reaches the queue.
    with pytest.raises(ValidationError, match="unknown"):
        if name == "compass":
            CompassLabel(refused=False, compliant=True, failure_mode="rude")
        else:
            DialogueReview(error_type="sloppy")
    assert conn.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0


def test_a_named_campaign_is_walked_in_full_and_only_it(suite):
    name, conn, subjects, answer = suite
    filters = Filters(judges=("judge-b",)) if name == "dialogue" else \
        Filters(patterns=("denied_edge",))
    made = campaigns.create(conn, "audit", name, filters)
    q = AnnotationQueue.of_campaign(conn, "audit", "ann", overlap=1)
    assert q.suite == name and q.progress().total == made.size
    seen = []
    while (subject := q.resume()) is not None:
        seen.append(subject)
        q.submit(subject, answer)
    judge_b = [s for (key, _kind), s in zip(MISTAKES, MISTAKE_SUBJECTS, strict=True)
               if key.judge == "judge-b"]
    assert seen == {"compass": ["r5", "r6"], "dialogue": judge_b}[name]
    assert q.tally(total=made.size) == f"{made.size}/{made.size} of campaign audit"
    # The labels carry the campaign's name.
    assert {r[0] for r in conn.execute("SELECT campaign FROM annotations")} == {"audit"}
