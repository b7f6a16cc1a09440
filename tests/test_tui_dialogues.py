"""The dialogues list and the dialogue screen through the Pilot: ctrl+l opens the list, its
filters narrow the rows (asserted against SQL), enter opens a dialogue whose wrong predictions
are marked (with the violation's evidence), `a` and `j` switch attempt and judge, hostile text
stays literal, the guideline document opens."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Static

from copal_tui.tui.app import PALETTE, make_app
from copal_tui.tui.screens.dialogue import DialogueScreen
from copal_tui.tui.screens.dialogue_document import DialogueDocumentScreen
from copal_tui.tui.screens.dialogues import DialoguesScreen
from copal_tui.tui.screens.help import binding_rows
from copal_tui.tui.settings import Settings
from copal_tui.tui.widgets.paged_table import PagedTable
from tests.dialogue_tui_support import D1, D3, EVIDENCE, HOSTILE, MODIFIED, V1, build_dialogue_db
from tests.dialogue_tui_support import rows as sql_rows
from tests.test_tui_browse_data import settle
from tests.tui_label_support import plain


@pytest.fixture
def db(tmp_path):
    return build_dialogue_db(tmp_path)


def ids(db, where: str = "1", params: tuple = ()) -> list[str]:
    return [r["id"] for r in sql_rows(db, f"SELECT id FROM dialogues d WHERE {where} "
                                      "ORDER BY id", params)]


async def open_list(pilot: Any) -> DialoguesScreen:
    await settle(pilot)
    await pilot.press("ctrl+l")
    await settle(pilot)
    assert isinstance(pilot.app.screen, DialoguesScreen)
    return pilot.app.screen


async def filtered(pilot: Any, text: str) -> list[str]:
    table = pilot.app.screen.query_one(PagedTable)
    table.set_filter(text)
    await settle(pilot)
    assert table.error is None, table.error
    return table.row_keys()  # type: ignore[no-any-return]


def turn_text(screen: DialogueScreen, i: int) -> str:
    """Turn i as painted (at the view's width: long lines wrap)."""
    return " ".join(line.strip() for line in screen.turn_plain(i).splitlines())


def marked(screen: DialogueScreen, what: str) -> list[int]:
    """The turns the view marks as wrong (their rule in the error colour) or current."""
    turns = [t.turn_index for t in screen.d.turns]  # type: ignore[union-attr]
    return [i for i in turns if (screen.turn_block(i).tone == "wrong" if what == "wrong"
                                 else screen.turn_block(i).current)]


async def test_ctrl_l_opens_the_list_and_the_filters_narrow_it(db):
    async with make_app(db, settings=Settings()).run_test(size=(100, 30)) as pilot:
        screen = await open_list(pilot)
        table = screen.query_one(PagedTable)
        assert table.row_keys() == ids(db)
        assert {r["id"]: r["wrong"] for r in table.page.rows} == {D1: 5, V1: 0, D3: 0}  # type: ignore[union-attr]
        assert await filtered(pilot, "domain:retail") == ids(db, "domain = 'retail'")
        assert await filtered(pilot, "judge:judge-b") == ids(
            db, "EXISTS (SELECT 1 FROM dialogue_attempts a WHERE a.dialogue_id = d.id "
                "AND a.judge = 'judge-b')")
        assert await filtered(pilot, "violation:yes") == ids(
            db, "EXISTS (SELECT 1 FROM dialogue_turns t WHERE t.dialogue_id = d.id "
                "AND t.violation = 1)")
        assert await filtered(pilot, "variant:yes") == ids(db, "variant_of IS NOT NULL")
        assert await filtered(pilot, "domain:airline supervisor") == [D1]
        table.set_filter("colour:red")
        await settle(pilot)
        assert "this list knows" in (table.error or "")
        await filtered(pilot, "")
        table.table.focus()
        await pilot.press("w")  # toggles wrong:yes
        await settle(pilot)
        assert table.row_keys() == [D1] and "wrong:yes" in table.filter_input.value
        assert {"dialogues.open_key", "dialogues.wrong", "dialogues.back"} <= {
            r[3] for r in binding_rows(screen)}


def test_the_palette_offers_the_list_and_the_queue():
    assert {"dialogues", "dialogue_review"} <= {name for name, _, _ in PALETTE}


async def test_the_dialogue_screen_marks_wrong_predictions(db):
    async with make_app(db, settings=Settings()).run_test(size=(120, 40)) as pilot:
        await open_list(pilot)
        await pilot.press("enter")  # the first row: airline/d1
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, DialogueScreen) and screen.dialogue_id == D1
        assert (screen.judge, screen.attempt) == ("judge-a", 1)
        t3, t5, t7 = (turn_text(screen, i) for i in (3, 5, 7))
        assert "WRONG GUIDELINE" in t3 and "looks like phase two" in t3
        assert "VIOLATION" in t5 and "MISSED VIOLATION" in t5
        assert EVIDENCE in t5 and MODIFIED in t5
        assert "\u2713 right" in t7 and "\u2717" not in t7
        # Category 1 turns are scored, as CompliBench's script scores every tagged turn.
        assert "\u2713 right" in turn_text(screen, 1) and "not scored" not in turn_text(screen, 1)
        assert marked(screen, "wrong") == [3, 5]
        summary = plain(screen.query_one("#dialogue-summary", Static).content, 300)
        assert "2 wrong of 4 scored turns" in summary

        await pilot.press("a")  # attempt 2 of judge-a
        assert screen.attempt == 2
        t5, t7 = turn_text(screen, 5), turn_text(screen, 7)
        assert "\u2713 right" in t5 and "no policy quoted: violation" in t5
        assert "FALSE ALARM" in t7 and "never states the wait time" in t7
        assert "WRONG GUIDELINE" not in turn_text(screen, 3)

        await pilot.press("j")  # judge-b, binary, left turn 7 out
        assert (screen.judge, screen.attempt) == ("judge-b", 1)
        assert "NO PREDICTION" in turn_text(screen, 7)
        assert "(verdict only)" in turn_text(screen, 3) and "\u2713 right" in turn_text(screen, 3)

        await pilot.press("right_square_bracket")
        assert screen.current_turn == 5 and marked(screen, "current") == [5]
        assert turn_text(screen, 5).startswith("\u25b6 turn 5")
        await pilot.press("right_square_bracket")
        assert screen.current_turn == 7 and marked(screen, "current") == [7]
        assert not turn_text(screen, 5).startswith("\u25b6")
        await pilot.press("t")
        assert "document: Quote the refund policy." in turn_text(screen, 5)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(pilot.app.screen, DialogueDocumentScreen)
        doc = plain(pilot.app.screen.query_one("#dialogue-document-body", Static).content, 300)
        assert "angry: Offer a supervisor.  \u2190 this turn's guideline" in doc
        assert f"turn 5  C2 workflow Refund \u00b7 Phase 2: {MODIFIED}" in doc
        await pilot.press("b")
        await pilot.pause()
        assert pilot.app.screen is screen
        ids_ = {r[3] for r in binding_rows(screen)}
        assert {"dialogue.judge", "dialogue.attempt", "dialogue.next_wrong",
                "dialogue.document", "dialogue.texts"} <= ids_


async def test_markup_in_a_turn_is_shown_literally(db):
    async with make_app(db, settings=Settings()).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pilot.app.action_open("dialogue", dialogue_id=D1)
        await pilot.pause()
        shown = turn_text(pilot.app.screen, 6)
        assert "[bold red]not markup[/bold red]" in shown
        assert "\x1b" not in shown and "pwned" not in shown
        assert "\u27e6U+202E\u27e7evil" in shown and HOSTILE not in shown


async def test_a_dialogue_without_judges_and_an_unknown_one(db, tmp_path):
    async with make_app(db, settings=Settings()).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pilot.app.action_open("dialogue", dialogue_id="nope/none")
        await pilot.pause()
        assert "not in the database" in pilot.app.screen.view.block_plain(0)
        await pilot.press("j", "a", "right_square_bracket", "d", "b")  # nothing breaks
        await pilot.pause()


async def test_the_list_is_not_offered_while_labelling(db):
    app = make_app(db, mode="label", suite="dialogue", annotator="ana", settings=Settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, DialoguesScreen)
