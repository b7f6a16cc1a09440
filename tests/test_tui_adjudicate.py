"""The adjudication screen through the Pilot, asserting the adjudicator's events in the annotation
log (and the current decisions) for deciding, `c`, undo, notes, skip, flag, filter and leases."""

from __future__ import annotations

import pytest

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.adjudicate import AdjudicateScreen
from copal_tui.tui.settings import Settings
from store.annotation import adjudication
from store.db import connect
from tests.tui_label_support import (
    build_db,
    current_labels,
    label_events,
    plain,
    required_ids,
    settle,
)

# Arrow presses before a walk over the candidates gives up (more than the store holds).
MOVES = 200


@pytest.fixture
def db(tmp_path):
    return build_db(tmp_path)


def app_for(db, who="lead2"):
    return make_app(db, mode="adjudicate", annotator=who, settings=Settings())


def decisions(db, who="lead2"):
    """The adjudicator's decisions and undos (a decision is a label of role adjudicator)."""
    return label_events(db, who, role="adjudicator")


def current(db, rid):
    out = current_labels(db, "subject = ?", (rid,), role="adjudicator")
    return [{**r, "adjudicator": r["annotator"]} for r in out]


def test_candidates_are_disagreements_between_annotators_or_with_the_judge(tmp_path):
    plain = build_db(tmp_path / "a", judge=False)
    judged = build_db(tmp_path / "b", judge=True)
    for path in (plain, judged):
        conn = connect(path)
        labels = current_labels(path)
        by_response: dict[str, list] = {}
        for lab in labels:
            by_response.setdefault(lab["response_id"], []).append(
                (lab["error"], tuple(sorted(lab["observed"]))))
        disagree = {rid for rid, marks in by_response.items() if len(set(marks)) > 1}
        found, after = set(), ""
        while (row := adjudication.adjudication_step(conn, after=after, pending=False)) is not None:
            found.add(row.response_id)
            after = row.response_id
        if path == plain:
            assert found == disagree and disagree
        else:
            # The test judge marks nothing: it disagrees wherever annotators agreed on e=0.
            agreed_ok = {rid for rid, marks in by_response.items()
                         if len(set(marks)) == 1 and marks[0][0] == 0}
            assert found == disagree | agreed_ok
        counts = adjudication.adjudication_counts(conn)
        assert counts.total == len(found)
        # The showcase adjudications decide every annotator disagreement; the judge's add more.
        assert counts.decided == len(disagree) < len(found) or path == plain
        conn.conn.close()


async def test_decide_with_marks_then_with_c(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen)
        first = screen.rid
        assert first is not None and current(db, first) == []  # undecided comes first
        assert [c.header for c in screen.matrix.columns][:2] == ["ana", "ben"]
        before = screen.status_text
        await pilot.press("1", "enter")
        await pilot.pause()
        second = screen.rid
        assert second not in (None, first) and current(db, second) == []
        await pilot.press("c")
        await pilot.pause()
        assert screen.status_text != before
    made = decisions(db)
    assert [(d["response_id"], d["action"]) for d in made] == [
        (first, "label"), (second, "label")]
    item1 = made[0]["observed"]
    assert len(item1) == 1 and made[0]["content_sha256"]
    assert made[1]["observed"] == required_ids(db, second) and made[1]["error"] == 0
    assert current(db, first)[0]["adjudicator"] == "lead2"


async def test_undo_retracts_the_decision(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first = app.screen.rid
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        assert app.screen.rid == first
        assert app.screen.marks.observed == required_ids(db, first)
    assert [d["action"] for d in decisions(db)] == ["label", "undo"]
    assert current(db, first) == []


async def test_note_goes_with_the_decision_and_flag_and_skip(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first = app.screen.rid
        await pilot.press("f", "1")  # contract defect
        await pilot.pause()
        assert "lead2: flagged contract defect" in plain(app.screen.remarks.content)
        await pilot.press("s")
        await pilot.pause()
        second = app.screen.rid
        assert second != first
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"R1 is implied", "enter")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
    made = decisions(db)
    assert [(d["response_id"], d["note"]) for d in made] == [(second, "R1 is implied")]
    flags = [(e["response_id"], e["flag"]) for e in label_events(db, "lead2")]
    assert flags == [(first, "contract defect")]
    assert current(db, first) == []  # skipping decides nothing


async def test_filter_narrows_the_candidates(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.rid.startswith("harbor-clinics")
        await pilot.press("slash")
        await pilot.pause()
        # Typed into the filter, not taken as keys (n would open the note prompt, c decide).
        await pilot.press(*"meridian-bank", "enter")
        await pilot.pause()
        assert isinstance(app.screen, AdjudicateScreen)
        assert app.screen.rid.startswith("meridian-bank")
        assert "filter 'meridian-bank'" in app.screen.status_text
        await pilot.press("slash")
        await pilot.press(*"no such thing", "enter")
        await pilot.pause()
        assert app.screen.rid is None
    assert decisions(db) == []


async def test_left_and_right_browse_decided_candidates_too(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first = app.screen.rid
        await pilot.press("left")  # the first pending one is not the first candidate
        seen = [app.screen.rid]
        for _ in range(MOVES):  # bounded: a screen that never stops fails, not hangs
            await pilot.press("left")
            if app.screen.rid == seen[-1]:
                break
            seen.append(app.screen.rid)
        else:
            raise AssertionError("left never reached the first candidate")
        assert first not in seen
        assert any(current(db, rid) for rid in seen)  # showcase adjudications are decided
        # Re-decide a decided one: a new row supersedes the old.
        decided = next(rid for rid in seen if current(db, rid))
        for _ in range(MOVES):
            if app.screen.rid == decided:
                break
            await pilot.press("right")
        assert app.screen.rid == decided
        old = current(db, decided)[0]
        await pilot.press("c")
        await pilot.pause()
    new = current(db, decided)[0]
    assert new["id"] > old["id"] and new["adjudicator"] == "lead2" and new["error"] == 0


async def test_two_adjudicators_are_not_handed_the_same_response(db):
    a, b = app_for(db, "lead2"), app_for(db, "lead3")
    async with a.run_test(size=(80, 24)) as pa, b.run_test(size=(80, 24)) as pb:
        await settle(pa)
        await settle(pb)
        assert a.screen.rid is not None and b.screen.rid is not None
        assert a.screen.rid != b.screen.rid
        first_b = b.screen.rid
        await pa.press("c")
        await pa.pause()
        assert a.screen.rid != first_b  # skips the one lead3 holds
    assert {d["response_id"] for d in decisions(db, "lead2")}.isdisjoint({first_b})
