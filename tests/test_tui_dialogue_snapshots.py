"""Snapshot of the judge-mistake review queue at 100x30, on a missed violation (the truth with
the modified guideline and the evidence, the judge's prediction) with an error type chosen.
Regenerate with `pytest tests/test_tui_dialogue_snapshots.py --snapshot-update` after an
intended change, and look at the .svg before committing it."""

from __future__ import annotations

from copal_tui.tui.app import make_app
from copal_tui.tui.settings import Settings
from tests.dialogue_tui_support import D1, build_dialogue_db
from tests.tui_label_support import settle


def test_dialogue_review_queue_100x30(snap_compare, tmp_path):
    app = make_app(build_dialogue_db(tmp_path), mode="label", suite="dialogue",
                   annotator="cleo", settings=Settings())

    async def before(pilot) -> None:
        await settle(pilot)
        for key in ("n", "5"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(app, terminal_size=(100, 30), run_before=before)


def test_dialogue_screen_100x30(snap_compare, tmp_path):
    """The dialogue screen on airline/d1 with judge-a's first attempt, moved to the second
    wrong turn (the missed violation, highlighted) and scrolled there."""
    app = make_app(build_dialogue_db(tmp_path), settings=Settings())

    async def before(pilot) -> None:
        await settle(pilot)
        pilot.app.action_open("dialogue", dialogue_id=D1)
        await pilot.pause()
        for key in ("right_square_bracket", "right_square_bracket"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(app, terminal_size=(100, 30), run_before=before)
