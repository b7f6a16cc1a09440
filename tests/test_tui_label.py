"""The label queue through the Textual Pilot, asserting database rows for every flow:
item marks, enter, c, undo, skip, note, flag, left/right, resume, blind mode, keys, keymap."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.help import HelpScreen
from copal_tui.tui.screens.label_queue import LabelQueueScreen
from copal_tui.tui.settings import Settings
from tests.tui_label_support import (
    build_db,
    label_events,
    plain,
    required_ids,
    rows,
    settle,
)
from tests.tui_label_support import current_labels as support_current


@pytest.fixture
def db(tmp_path):
    return build_db(tmp_path)


def app_for(db, annotator="cleo", size=(80, 24), **settings):
    settings.setdefault("overlap", 3)  # ana and ben already fill two slots of every response
    return make_app(db, mode="label", annotator=annotator, settings=Settings(**settings))


def current_labels(db, annotator):
    return support_current(db, "annotator = ?", (annotator,))


async def test_marks_show_the_derived_verdict_and_enter_submits_them(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LabelQueueScreen)
        first = screen.rid
        assert first is not None and "0/72 labelled" in screen.status_text
        items = screen.marks.items
        # Nothing marked: every required item is missing.
        assert screen.marks.verdict.error == 1
        for item in items:
            if item.required:
                await pilot.press(str(item.number))
        assert screen.marks.verdict.error == 0
        forbidden = [i for i in items if not i.required]
        await pilot.press(str(forbidden[0].number))
        assert screen.marks.verdict.direction.value == "under_enforcement"
        expected = screen.marks.observed
        await pilot.press("enter")
        await pilot.pause()
        assert screen.rid != first
        assert "1/72 labelled" in screen.status_text
    events = label_events(db, "cleo")
    assert [(e["response_id"], e["action"], e["observed"], e["error"], e["direction"])
            for e in events] == [(first, "label", expected, 1, "under_enforcement")]
    assert events[0]["content_sha256"]


async def test_c_submits_correct_and_moves_on(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.rid
        await pilot.press("c")
        await pilot.pause()
        second = app.screen.rid
        await pilot.press("c")
        await pilot.pause()
        assert len({first, second, app.screen.rid}) == 3
    labels = {lab["response_id"]: lab for lab in current_labels(db, "cleo")}
    assert set(labels) == {first, second}
    for rid, lab in labels.items():
        assert lab["error"] == 0 and lab["direction"] == "none"
        assert sorted(lab["observed"]) == sorted(required_ids(db, rid))


async def test_undo_retracts_the_last_label_and_returns_to_it(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.rid
        await pilot.press("1", "enter")
        await pilot.pause()
        assert app.screen.rid != first
        await pilot.press("u")
        await pilot.pause()
        # Back on the undone response, with the retracted marks ready to fix.
        assert app.screen.rid == first
        assert app.screen.marks.observed == [app.screen.marks.items[0].id]
        assert "0/72 labelled" in app.screen.status_text
        await pilot.press("u")  # nothing left to undo: no new row
        await pilot.pause()
    actions = [(e["response_id"], e["action"]) for e in label_events(db, "cleo")]
    assert actions == [(first, "label"), (first, "undo")]
    assert current_labels(db, "cleo") == []


async def test_skip_note_and_flag_are_recorded(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.rid
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"odd [b]wording[/b]", "enter")
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("3")  # ambiguous
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("ctrl+g")  # cancelled: no row
        await pilot.pause()
        assert app.screen.rid == first
        await pilot.press("s")
        await pilot.pause()
        assert app.screen.rid not in (None, first)
    events = label_events(db, "cleo")
    assert [(e["action"], e["note"], e["flag"]) for e in events] == [
        ("note", "odd [b]wording[/b]", None), ("flag", None, "ambiguous"), ("skip", None, None)]
    assert {e["response_id"] for e in events} == {first}
    # The skipped response's slot was given back.
    assert rows(db, "SELECT * FROM annotation_leases WHERE subject = ? AND annotator = 'cleo' "
                "AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", (first,)) == []


async def test_left_and_right_move_between_my_responses_and_relabel(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.rid
        await pilot.press("c")
        await pilot.pause()
        second = app.screen.rid
        await pilot.press("c")
        await pilot.pause()
        third = app.screen.rid
        await pilot.press("left")
        assert app.screen.rid == second
        await pilot.press("left")
        assert app.screen.rid == first
        await pilot.press("left")  # nothing earlier: stays
        assert app.screen.rid == first
        await pilot.press("right")
        assert app.screen.rid == second
        # Relabel the second: the marks shown are my label's; enter moves forward again.
        assert app.screen.marks.observed == required_ids(db, second)
        await pilot.press("1", "enter")
        await pilot.pause()
        assert app.screen.rid == third
        await pilot.press("right")  # the newest: stays
        assert app.screen.rid == third
    events = label_events(db, "cleo")
    assert [e["response_id"] for e in events] == [first, second, second]
    latest = {lab["response_id"]: lab for lab in current_labels(db, "cleo")}
    assert latest[second]["error"] == 1


async def test_resume_where_the_annotator_left(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        left_on = app.screen.rid
        # The process dies without quitting: the lease stays and brings us back.
        app.exit()
    app2 = app_for(db)
    async with app2.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app2.screen.rid == left_on
        assert "2/72 labelled" in app2.screen.status_text
        await pilot.press("q")  # quitting gives the slot back ...
        await pilot.pause()
    assert rows(db, "SELECT * FROM annotation_leases WHERE annotator = 'cleo' AND subject = ? "
                "AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", (left_on,)) == []
    app3 = app_for(db)
    async with app3.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app3.screen.rid == left_on  # ... and it is still the first one open to us
    assert len(current_labels(db, "cleo")) == 2


async def test_overlap_full_queue_says_so(db):
    # Default overlap 2: ana and ben have labelled everything, nothing is left for cleo.
    app = app_for(db, overlap=2)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.rid is None
        assert "0/72 labelled" in app.screen.status_text
        await pilot.press("c", "enter", "s")
        await pilot.pause()
    assert label_events(db, "cleo") == []


async def test_blind_until_submitted_then_labels_and_judge_are_shown(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.matrix.columns == ()  # blind: no judge, no other annotator
        first = app.screen.rid
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.matrix.columns == ()
        await pilot.press("left")
        assert app.screen.rid == first
        headers = [c.header for c in app.screen.matrix.columns]
        assert headers == ["ana", "ben", "cleo", "J1"]


async def test_not_blind_when_configured(db):
    app = app_for(db, blind=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert [c.header for c in app.screen.matrix.columns] == ["ana", "ben", "J1"]


async def test_question_mark_shows_the_keys_and_keymap_remaps(db):
    app = app_for(db, keymap={"label.correct": "x"})
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        first = app.screen.rid
        await pilot.press("x")
        await pilot.pause()
        assert app.screen.rid != first
    assert [e["action"] for e in label_events(db, "cleo")] == ["label"]


async def test_cursor_keys_toggle_items_beyond_the_digits(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        items = app.screen.marks.items
        await pilot.press("j", "space")
        assert app.screen.marks.observed == [items[1 % len(items)].id]
        await pilot.press("k", "space")
        assert app.screen.marks.observed == [i.id for i in items[:2]][: len(items)]


async def test_hostile_response_text_is_shown_literally(tmp_path):
    db = build_db(tmp_path, extra_responses=4)
    app = make_app(db, mode="label", annotator="cleo", settings=Settings(overlap=1))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        seen = []
        for _ in range(4):
            seen.append(app.screen.rid)
            text = plain(app.screen.context_pane.query_one("#label-context-body").content)
            if app.screen.rid.endswith(":extra0"):
                assert "[bold red]not markup[/bold red]" in text
                assert "\x1b" not in text and "\u202e" not in text
            await pilot.press("s")
            await pilot.pause()
        assert any(r.endswith(":extra0") for r in seen)


async def test_actions_are_in_the_command_palette(db):
    app = app_for(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.rid
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Label: correct")
        for _ in range(100):  # the palette searches its providers asynchronously
            await pilot.pause(0.02)
            hits = app.screen.query(OptionList)
            if hits and hits.first().option_count:
                break
        await pilot.press("enter")
        for _ in range(50):
            await pilot.pause(0.05)
            if isinstance(app.screen, LabelQueueScreen) and app.screen.rid != first:
                break
        assert app.screen.rid != first
    assert [e["action"] for e in label_events(db, "cleo")] == ["label"]


async def test_opened_from_the_browser_q_goes_back_instead_of_quitting(db):
    app = make_app(db, annotator="cleo", settings=Settings(overlap=3))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        below = app.screen
        app.action_open("label")
        await settle(pilot)
        assert isinstance(app.screen, LabelQueueScreen)
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert app.screen is below and app.is_running
    assert [e["action"] for e in label_events(db, "cleo")] == ["label"]
