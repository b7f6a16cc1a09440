"""Blind labelling cannot be broken: in label mode (every suite) no palette entry, app key or
screen key leads to another screen (adjudication, the dashboard, jobs, the browse screens, the
judge's output); the responding model stays a neutral "Response" unless COPAL_SHOW_MODEL is
set; the COMPASS queue never says which list the intended policy is on; and a note the
annotator wrote is shown again when they come back to the response.

What is on screen is read from `app.export_screenshot()` (the SVG's text), at a size where
every pane fits, so nothing is hidden by scrolling.
"""

from __future__ import annotations

import html
import inspect
import re
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.screen import Screen

from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.screens.compass_label import CompassLabelScreen
from copal_tui.tui.screens.dialogue_document import DialogueDocumentScreen
from copal_tui.tui.screens.dialogue_review import DialogueReviewScreen
from copal_tui.tui.screens.help import HelpScreen
from copal_tui.tui.screens.label_facet import FacetScreen
from copal_tui.tui.screens.label_flag import FlagScreen
from copal_tui.tui.screens.label_note import NoteScreen
from copal_tui.tui.screens.label_queue import LabelQueueScreen
from copal_tui.tui.settings import Settings, SettingsError
from tests import compass_tui_support, dialogue_tui_support
from tests.tui_label_support import build_db, rows, settle

SIZE = (160, 60)
QUEUES: dict[str, type[Screen[Any]]] = {"copal": LabelQueueScreen,
                                        "compass": CompassLabelScreen,
                                        "dialogue": DialogueReviewScreen}
HARMLESS = (HelpScreen, NoteScreen, FlagScreen, FacetScreen, CommandPalette,
            DialogueDocumentScreen)


def build(suite: str, tmp_path: Any) -> Any:
    if suite == "compass":
        return compass_tui_support.build_compass_db(tmp_path)
    if suite == "dialogue":
        return dialogue_tui_support.build_dialogue_db(tmp_path)
    return build_db(tmp_path)


def label_app(db: Any, suite: str = "copal", **settings: Any) -> CopalApp:
    settings.setdefault("overlap", 3)  # ana and ben fill two slots of every COPAL response
    return make_app(db, mode="label", suite=suite, annotator="cleo",
                    settings=Settings(**settings))


def screen_text(app: CopalApp) -> str:
    """Everything the terminal shows, as text (the screenshot's text runs, in order)."""
    svg = app.export_screenshot()
    runs = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(runs)).replace("\xa0", " ")


def assert_only_the_queue(app: CopalApp, queue: type[Screen[Any]]) -> None:
    for screen in app.screen_stack[1:]:
        assert isinstance(screen, (queue, *HARMLESS)), f"{type(screen).__name__} opened"
    assert isinstance(app.screen_stack[1], queue)


async def close_modals(pilot: Any, queue: type[Screen[Any]]) -> None:
    for _ in range(3):
        if isinstance(pilot.app.screen, queue):
            return
        await pilot.press("escape")
        await pilot.pause()
    assert isinstance(pilot.app.screen, queue)


async def palette_hits(app: CopalApp, term: str) -> list[Any]:
    """What the command palette offers for `term`, from every provider it would ask."""
    screen = app.screen
    hits = []
    for source in (*app.COMMANDS, *screen.COMMANDS):
        cls = source if isinstance(source, type) else source()
        provider = cls(screen)
        provider._post_init()
        async for hit in provider._search(term):
            hits.append(hit)
    return hits


@pytest.mark.parametrize("suite", list(QUEUES))
async def test_the_palette_offers_no_other_screen_while_labelling(suite, tmp_path):
    queue = QUEUES[suite]
    app = label_app(build(suite, tmp_path), suite)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for term in ("adjudicate", "dashboard", "jobs", "judge", "browse", "worlds",
                     "dialogues", "label queue", "COMPASS"):
            for hit in await palette_hits(app, term):
                words = f"{hit.text} {hit.help or ''}".lower()
                for name in ("adjudicat", "dashboard", "jobs", "worlds", "browse"):
                    assert name not in words, (term, words)
                if "quit" in words or "screenshot" in words:
                    continue
                done = hit.command()
                if inspect.isawaitable(done):
                    await done
                await pilot.pause()
                assert_only_the_queue(app, queue)
                await close_modals(pilot, queue)
        # Through the palette itself: the "Adjudicate" entry that used to be there.
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Adjudicate", "enter")
        await pilot.pause()
        assert_only_the_queue(app, queue)


@pytest.mark.parametrize("suite", list(QUEUES))
async def test_no_key_leaves_the_label_screen(suite, tmp_path):
    queue = QUEUES[suite]
    app = label_app(build(suite, tmp_path), suite)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app_keys = [key for key, bindings in app._bindings.key_to_bindings.items()
                    for b in bindings if b.action not in ("quit", "app.quit")]
        # The app's own keys the bug went through are all among them.
        assert {"ctrl+d", "ctrl+j", "ctrl+l", "ctrl+w", "ctrl+p"} <= set(app_keys)
        screen_keys = [key for key, active in app.screen.active_bindings.items()
                       if not active.binding.action.endswith("quit_queue")
                       and active.binding.action not in ("quit", "app.quit")]
        for key in dict.fromkeys([*app_keys, *screen_keys]):
            await pilot.press(key)
            await pilot.pause()
            assert_only_the_queue(app, queue)
            await close_modals(pilot, queue)
        assert app.is_running


async def test_the_open_action_refuses_every_screen_in_label_mode(tmp_path):
    app = label_app(build_db(tmp_path), blind=False)  # not blind: still no other screen
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for name in ("adjudicate", "dashboard", "jobs", "worlds", "dialogues", "compass_label",
                     "dialogue_review", "item", "label"):
            app.action_open(name)
            await pilot.pause()
            assert_only_the_queue(app, LabelQueueScreen)


async def test_the_responding_model_is_hidden_unless_asked_for(tmp_path):
    db = build_db(tmp_path)
    for show in (False, True):
        app = label_app(db, show_model=show)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            ctx = app.screen.ctx
            shown = screen_text(app)
            assert ctx.model.startswith("sample/") and ctx.query[:30] in shown
            assert (ctx.model in shown) is show
            assert (ctx.response_id in shown) is show
            assert ("Response \u00b7 item" in shown) is not show


def test_show_model_setting_is_validated():
    assert Settings().show_model is False
    assert Settings.from_env({"COPAL_SHOW_MODEL": "true"}).show_model is True
    with pytest.raises(SettingsError, match="COPAL_SHOW_MODEL"):
        Settings.from_env({"COPAL_SHOW_MODEL": "sometimes"})


async def test_compass_queue_hides_the_policy_list_and_the_model(tmp_path):
    db = compass_tui_support.build_compass_db(tmp_path)
    app = label_app(db, "compass")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompassLabelScreen)
        seen = []
        while screen.rid is not None and screen.rid not in seen:
            seen.append(screen.rid)
            shown = screen_text(app)
            lowered = shown.lower()
            for word in ("allow", "deny", "allowlist", "denylist", "test/bot", "variant"):
                assert word not in lowered, (screen.rid, word)
            assert not re.search(r"\b[AD][12]\b", shown), screen.rid
            assert screen.ctx.policy_text in shown  # the policy itself is there
            await pilot.press("n")
            await pilot.pause()
        assert seen == ["r1", "r2", "r3", "r4", "r5", "r6"]
    app = label_app(db, "compass", show_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "test/bot" in screen_text(app)


async def test_a_note_is_shown_again_on_return(tmp_path):
    db = build_db(tmp_path)
    async with label_app(db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = pilot.app.screen.rid
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"ask about [b]dosage[/b]", "enter")
        await pilot.pause()
        assert "Your note: ask about [b]dosage[/b]" in screen_text(pilot.app)
        await pilot.press("c")
        await pilot.pause()
        assert "Your note" not in screen_text(pilot.app)
        await pilot.press("left")
        await pilot.pause()
        assert pilot.app.screen.rid == first
        assert "Your note: ask about [b]dosage[/b]" in screen_text(pilot.app)
    # A later session: the latest note is read back from the database.
    async with label_app(db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("left")
        await pilot.pause()
        assert pilot.app.screen.rid == first
        assert "Your note: ask about [b]dosage[/b]" in screen_text(pilot.app)
    assert rows(db, "SELECT json_extract(payload, '$.note') AS note FROM annotations "
                "WHERE annotator = 'cleo' AND action = 'note'") == [
        {"note": "ask about [b]dosage[/b]"}]


async def test_a_dialogue_review_note_is_shown_again_on_return(tmp_path):
    db = dialogue_tui_support.build_dialogue_db(tmp_path)
    async with label_app(db, "dialogue").run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = pilot.app.screen.key
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"phase mix-up", "enter")
        await pilot.pause()
        await pilot.press("1", "enter")
        await pilot.pause()
        assert pilot.app.screen.key != first
        await pilot.press("p")
        await pilot.pause()
        assert pilot.app.screen.key == first
        assert "phase mix-up" in screen_text(pilot.app)
