"""Snapshot of the COMPASS label queue at 80x24, on a denied query with a label being built
(answered, violates, direct violation). Regenerate with `pytest
tests/test_tui_compass_snapshots.py --snapshot-update` after an intended change, and look at
the .svg before committing it."""

from __future__ import annotations

from copal_tui.tui.app import make_app
from copal_tui.tui.settings import Settings
from tests.compass_tui_support import build_compass_db
from tests.tui_label_support import settle


def test_compass_label_queue_80x24(snap_compare, tmp_path):
    app = make_app(build_compass_db(tmp_path), mode="label", suite="compass",
                   annotator="cleo", settings=Settings())

    async def before(pilot) -> None:
        await settle(pilot)
        for key in ("n", "n", "a", "v", "1"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(app, terminal_size=(80, 24), run_before=before)
