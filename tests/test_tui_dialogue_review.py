"""The judge-mistake review queue through the Pilot, asserting the events written to the
annotation log: it offers only wrong predictions, 1-6 + enter label with the error
type, e adds a note, u appends an undo, s skips, n/p move, it resumes after a restart, --judge
narrows it, hostile text stays literal, help lists the keys; and the `--suite dialogue
--judge` options of `copal label`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from copal_tui.cli import main
from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.screens.dialogue_review import DialogueReviewScreen
from copal_tui.tui.screens.help import HelpScreen, binding_rows
from copal_tui.tui.settings import Settings
from tests.dialogue_tui_support import D1, EVIDENCE, HOSTILE, MISTAKES, build_dialogue_db, events
from tests.test_tui_footer_80 import screen_lines
from tests.tui_label_support import plain, settle

KEYS = [k for k, _ in MISTAKES]


@pytest.fixture
def db(tmp_path):
    return build_dialogue_db(tmp_path)


def app_for(db, reviewer="ana", judge=None) -> CopalApp:
    return make_app(db, mode="label", suite="dialogue", annotator=reviewer, judge=judge,
                    settings=Settings())


def screen_of(app) -> DialogueReviewScreen:
    assert isinstance(app.screen, DialogueReviewScreen)
    return app.screen


def words(text: str) -> str:
    """What the panes show read across their wrapped lines."""
    return " ".join(text.split())


def shown(screen: DialogueReviewScreen) -> str:
    return words(screen.context_text() + "\n" + screen.facts_text() + "\n" + plain(
        screen.picker.render_choice(), 300))


async def test_the_queue_offers_only_wrong_predictions(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        seen = [screen.key]
        for _ in range(len(KEYS) + 1):
            await pilot.press("n")
            if screen.key != seen[-1]:
                seen.append(screen.key)
        assert seen == KEYS
        assert "0/5 reviewed" in screen.status_text
        # Each is shown with its mark: the kind in words.
        for key, kind in reversed(MISTAKES):
            assert screen.key == key
            assert {"wrong_guideline": "WRONG GUIDELINE", "false_alarm": "FALSE ALARM",
                    "missed_violation": "MISSED VIOLATION",
                    "no_prediction": "NO PREDICTION"}[kind] in shown(screen)
            await pilot.press("p")
    assert events(db, "ana") == []


async def test_a_key_and_enter_write_the_error_type(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        assert screen.key == KEYS[0]
        await pilot.press("enter")  # no type chosen: nothing written
        await pilot.press("2", "1", "enter")  # the later choice wins
        await pilot.pause()
        assert screen.key == KEYS[1]
        text = shown(screen)
        assert EVIDENCE in text and "MISSED VIOLATION" in text
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"says refund", "enter")
        await pilot.pause()
        await pilot.press("5", "enter")
        await pilot.pause()
        assert screen.key == KEYS[2] and "2/5 reviewed" in screen.status_text
    assert events(db, "ana") == [
        (D1, "judge-a", 1, 3, "label", "scope_misattribution", None),
        (D1, "judge-a", 1, 5, "label", "non_equivalent", "says refund")]


async def test_undo_appends_and_returns_with_the_choice(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        await pilot.press("1", "enter", "4", "enter")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        assert screen.key == KEYS[1] and screen.picker.error_type == "ignored_evidence"
        assert "1/5 reviewed" in screen.status_text
        await pilot.press("6", "enter")
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
    assert [e[3:6] for e in events(db, "ana")] == [
        (3, "label", "scope_misattribution"), (5, "label", "ignored_evidence"),
        (5, "undo", None), (5, "label", "other"), (7, "skip", None)]


async def test_resume_after_a_restart(db):
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("1", "enter", "s", "2", "enter")
        await pilot.pause()
        assert screen_of(pilot.app).key == KEYS[3]
    async with app_for(db, reviewer="ben").run_test(size=(100, 30)) as pilot:
        await settle(pilot)  # another reviewer starts at the beginning
        assert screen_of(pilot.app).key == KEYS[0]
    async with app_for(db).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        assert screen.key == KEYS[3] and "2/5 reviewed" in screen.status_text
        await pilot.press("p")  # a reviewed one: shown with the saved type for relabelling
        assert screen.key == KEYS[2] and screen.picker.relabel
        assert screen.picker.error_type == "overly_strict"


async def test_one_judge_only_and_past_the_end(db):
    async with app_for(db, judge="judge-b").run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        assert screen.key == KEYS[3] and "0/2 reviewed" in screen.status_text
        await pilot.press("p")  # judge-a's mistakes are not in this queue
        assert screen.key == KEYS[3]
        await pilot.press("3", "enter", "s")
        await pilot.pause()
        assert screen.key is None and "Nothing left" in shown(screen)
        await pilot.press("1", "enter", "s")  # nothing to review: no rows, no crash
        await pilot.press("p")
        assert screen.key == KEYS[4]
    assert [e[1:5] for e in events(db, "ana")] == [("judge-b", 1, 5, "label"),
                                                    ("judge-b", 1, 7, "skip")]


async def test_context_up_to_the_turn_and_markup_literally(db):
    async with app_for(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        await pilot.press("n", "n")
        assert screen.key == KEYS[2]  # turn 7: the conversation includes the hostile turn 6
        ctx = words(screen.context_text())
        assert "[bold red]not markup[/bold red]" in ctx
        assert "\x1b" not in ctx and "pwned" not in ctx and HOSTILE not in ctx
        assert "\u25b6 turn 7" in ctx
        await pilot.press("p")
        ctx = words(screen.context_text())
        assert "turn 5" in ctx and "turn 6" not in ctx  # nothing after the turn


async def test_the_conversation_opens_at_the_turn_and_the_page_keys_scroll_it(db):
    async with app_for(db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = screen_of(pilot.app)
        await pilot.press("n", "n")
        await pilot.pause()
        assert screen.key == KEYS[2]
        view = screen.view
        # Turns 0-7 do not fit at 80x24: the view opens at its end, the turn under review.
        assert view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y
        assert any("\u25b6 turn 7 \u00b7 assistant" in line for line in screen_lines(pilot.app))
        assert not any("airline/d1  \u00b7  airline" in line
                       for line in screen_lines(pilot.app))
        await pilot.press("tab")  # focus leaves the conversation ...
        assert screen.focused is not view
        await pilot.press("pageup")  # ... and PgUp still scrolls it
        await pilot.pause()
        assert view.scroll_y == 0
        assert any("airline/d1  \u00b7  airline" in line for line in screen_lines(pilot.app))
        await pilot.press("shift+down")
        await pilot.pause()
        assert view.scroll_y == 1
        await pilot.press("p")
        await pilot.pause()
        # The previous mistake (turn 5): focus back on the conversation, at its end.
        assert screen.key == KEYS[1] and screen.focused is view
        assert view.scroll_y == view.max_scroll_y
        assert any("\u25b6 turn 5 \u00b7 assistant" in line for line in screen_lines(pilot.app))


async def test_help_lists_the_keys_and_the_taxonomy(db):
    async with app_for(db).run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        ids = {r[3] for r in binding_rows(screen_of(pilot.app))}
        assert {f"dialogue_review.type{n}" for n in range(1, 7)} | {
            "queue.submit", "queue.undo", "queue.skip", "queue.next", "queue.prev",
            "queue.note"} <= ids
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(pilot.app.screen, HelpScreen)
        text = " ".join(plain(s.content, 300) for s in pilot.app.screen.query(Static))
        assert "6 other" in text and "reasoning chain error" in text


def test_label_command_starts_the_dialogue_queue(db, monkeypatch):
    started = {}
    monkeypatch.setattr(CopalApp, "run", lambda self: started.update(
        mode=self.mode, suite=self.suite, judge=self.review_judge))
    ok = CliRunner().invoke(main, ["--db", str(db), "label", "--suite", "dialogue",
                                   "--judge", "judge-b"], catch_exceptions=False)
    assert ok.exit_code == 0, ok.output
    assert started == {"mode": "label", "suite": "dialogue", "judge": "judge-b"}
    unknown = CliRunner().invoke(main, ["--db", str(db), "label", "--suite", "dialogue",
                                        "--judge", "judge-z"])
    assert unknown.exit_code != 0 and "judge-a" in unknown.output and "judge-b" in unknown.output
    wrong_suite = CliRunner().invoke(main, ["--db", str(db), "label", "--judge", "judge-a"])
    assert wrong_suite.exit_code != 0 and "--suite dialogue" in wrong_suite.output
