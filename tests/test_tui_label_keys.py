"""One keymap for every labelling queue, reading a long response at 80x24, and the observed
facet of the COPAL label queue, through the Pilot; asserting annotation rows and what the
terminal shows."""

from __future__ import annotations

import pytest

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.label_facet import FacetScreen
from copal_tui.tui.screens.label_queue import LabelQueueScreen
from copal_tui.tui.settings import Settings
from copal_tui.tui.widgets.scroll_pane import ScrollPane
from tests.compass_tui_support import build_compass_db
from tests.compass_tui_support import events as compass_events
from tests.dialogue_tui_support import build_dialogue_db
from tests.test_tui_footer_80 import screen_lines
from tests.tui_label_support import build_db, label_events, plain, rows, settle

SIZE = (80, 24)


def copal_app(db, **settings):
    settings.setdefault("overlap", 3)
    return make_app(db, mode="label", annotator="cleo", settings=Settings(**settings))


async def test_one_keymap_entry_remaps_the_common_key_in_every_queue(tmp_path):
    keymap = {"queue.skip": "x"}
    copal = build_db(tmp_path / "c")
    async with copal_app(copal, keymap=keymap).run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")  # no longer skip
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
    assert [e["action"] for e in label_events(copal, "cleo")] == ["skip"]
    compass = build_compass_db(tmp_path / "p")
    app = make_app(compass, mode="label", suite="compass", annotator="cleo",
                   settings=Settings(keymap=keymap))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
    assert [e["action"] for e in compass_events(compass, "cleo")] == ["skip"]


async def test_page_keys_scroll_the_response_whatever_has_focus(tmp_path):
    db = build_db(tmp_path)
    async with copal_app(db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, LabelQueueScreen)
        read = screen.query_one("#label-read", ScrollPane)
        side = screen.query_one("#label-side", ScrollPane)
        assert read.max_scroll_y > 0  # the response and clauses do not fit at 80x24
        await pilot.press("tab")  # focus moves to the contract pane ...
        assert screen.focused is side
        await pilot.press("pagedown")  # ... and PgDn still scrolls the response
        await pilot.pause()
        assert read.scroll_y > 0 and side.scroll_y == 0
        down = read.scroll_y
        await pilot.press("shift+up")
        await pilot.pause()
        assert read.scroll_y == down - 1
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert read.scroll_y == read.max_scroll_y  # the end of a long response is reachable
        await pilot.press("s")
        await pilot.pause()
        # The next response: focus back on the response, at its top.
        assert screen.focused is read and read.scroll_y == 0


async def test_the_observed_facet_is_stored_with_an_erroneous_label(tmp_path):
    db = build_db(tmp_path)
    async with copal_app(db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, LabelQueueScreen)
        first, ctx = screen.rid, screen.ctx
        assert ctx is not None and ctx.facet
        # Blind: the item's target facet is not shown while labelling.
        body = plain(screen.context_pane.query_one("#label-context-body").content, 300)
        assert ctx.facet not in body
        assert screen.marks.verdict.error == 1  # nothing marked: every required item missing
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(pilot.app.screen, FacetScreen)
        await pilot.press("down", "enter")  # the pattern's second facet
        await pilot.pause()
        assert pilot.app.screen is screen
        assert "observed facet: " in "\n".join(screen_lines(pilot.app))
        chosen = screen.marks.facet
        await pilot.press("enter")
        await pilot.pause()
        second = screen.rid
        # A correct label keeps no facet, even one chosen before the marks said correct.
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
    got = rows(db, "SELECT subject, json_extract(payload, '$.facet') AS facet, "
               "json_extract(payload, '$.error') AS error FROM annotations "
               "WHERE annotator = 'cleo' AND action = 'label' ORDER BY id")
    pattern_facets = {"scope_restriction": ["boundary_overreach", "over_refusal"],
                      "prerequisite_gating": ["skipped_gate", "wrong_scope_gate"],
                      "selective_disclosure": ["protected_field_leakage", "all_withholding"],
                      "workflow_transfer": ["missed_transfer", "wrong_route"]}
    assert chosen == pattern_facets[ctx.pattern][1]
    assert got == [{"subject": first, "facet": chosen, "error": 1},
                   {"subject": second, "facet": None, "error": 0}]


async def test_the_facet_key_refuses_a_correct_response(tmp_path):
    db = build_db(tmp_path)
    async with copal_app(db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        for item in screen.marks.items:
            if item.required:
                await pilot.press(str(item.number))
        assert screen.marks.verdict.error == 0
        await pilot.press("o")
        await pilot.pause()
        assert pilot.app.screen is screen  # no chooser: nothing to name


async def test_the_dialogue_review_shows_the_prediction_on_its_first_screen(tmp_path):
    db = build_dialogue_db(tmp_path)
    app = make_app(db, mode="label", suite="dialogue", annotator="ana", settings=Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = "\n".join(screen_lines(pilot.app))
    # The first mistake: judge-a's attempt 1 named the refund guideline's phase 2 on turn 3.
    assert "Judge's prediction" in shown and "judge-a #1" in shown
    assert "Quote the refund" in shown and "looks like phase two" in shown


@pytest.mark.parametrize("key", ["n", "right"])
async def test_next_is_n_and_right_in_the_compass_queue(key, tmp_path):
    db = build_compass_db(tmp_path)
    app = make_app(db, mode="label", suite="compass", annotator="cleo", settings=Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = pilot.app.screen.rid
        await pilot.press(key)
        await pilot.pause()
        assert pilot.app.screen.rid not in (None, first)
        await pilot.press("left")
        await pilot.pause()
        assert pilot.app.screen.rid == first
    assert compass_events(db, "cleo") == []  # moving writes no event
