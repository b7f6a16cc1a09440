"""Snapshots of the label queue, its prompts and the adjudication screen at 80x24 and 120x40.

Regenerate with `pytest tests/test_tui_label_snapshots.py --snapshot-update` after an intended
change, and look at the .svg files before committing them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from copal_tui.tui.app import make_app
from copal_tui.tui.settings import Settings
from tests.tui_label_support import build_db, settle


@pytest.fixture
def db(tmp_path):
    return build_db(tmp_path)


def _label(db, **settings):
    settings.setdefault("overlap", 3)
    return make_app(db, mode="label", annotator="cleo", settings=Settings(**settings))


def _adjudicate(db):
    return make_app(db, mode="adjudicate", annotator="lead2", settings=Settings())


def _before(*keys: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    return run_before


def _snap(snap_compare, app, size: Sequence[int], *keys: str) -> None:
    assert snap_compare(app, terminal_size=tuple(size), run_before=_before(*keys))


def test_label_queue_80x24(snap_compare, db):
    _snap(snap_compare, _label(db), (80, 24))


def test_label_queue_marked_120x40(snap_compare, db):
    _snap(snap_compare, _label(db), (120, 40), "1", "3")


def test_label_queue_revealed_after_submit_80x24(snap_compare, db):
    _snap(snap_compare, _label(db), (80, 24), "c", "left")


def test_label_queue_not_blind_120x40(snap_compare, db):
    _snap(snap_compare, _label(db, blind=False), (120, 40))


def test_label_queue_empty_80x24(snap_compare, db):
    _snap(snap_compare, _label(db, overlap=2), (80, 24))


def test_label_note_prompt_80x24(snap_compare, db):
    _snap(snap_compare, _label(db), (80, 24), "e", "h", "i")


def test_label_flag_prompt_80x24(snap_compare, db):
    _snap(snap_compare, _label(db), (80, 24), "f")


def test_adjudicate_80x24(snap_compare, db):
    _snap(snap_compare, _adjudicate(db), (80, 24))


def test_adjudicate_marked_120x40(snap_compare, db):
    _snap(snap_compare, _adjudicate(db), (120, 40), "1")


def test_adjudicate_filter_80x24(snap_compare, db):
    _snap(snap_compare, _adjudicate(db), (80, 24), "slash", "m", "e", "r")
