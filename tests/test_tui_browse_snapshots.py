"""Snapshots of the browse screens at 80x24 (the annotator's SSH terminal) and 120x40, on the
showcase worlds. Regenerate with `pytest --snapshot-update tests/test_tui_browse_snapshots.py`
after a deliberate change, and look at the SVGs before committing them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.too_small import TooSmallScreen
from tests import test_tui_browse_data as data
from tests.test_tui_browse_data import EVIL_ID, I01, W, settle

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
browse_db = data.browse_db
browse_template = data.browse_template


def _open(name: str, tab: str | None = None, **kwargs: Any) -> Any:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        if tab is not None:
            kwargs["tab"] = tab
        pilot.app.action_open(name, **kwargs)
        await settle(pilot)
    return run_before


def test_worlds_80x24(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(80, 24), run_before=settle)


def test_worlds_120x40(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(120, 40), run_before=settle)


def test_world_items_80x24(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(80, 24),
                        run_before=_open("world", world_id=W, tab="items"))


def test_item_overview_80x24(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(80, 24),
                        run_before=_open("item", item_id=I01))


def test_item_responses_80x24(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(80, 24),
                        run_before=_open("item", item_id=I01, tab="responses"))


def test_item_responses_120x40(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(120, 40),
                        run_before=_open("item", item_id=I01, tab="responses"))


def test_item_projections_120x40(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(120, 40),
                        run_before=_open("item", item_id=I01, tab="projections"))


def test_help_on_a_world_80x24(snap_compare: Any, browse_db: Path) -> None:
    assert snap_compare(make_app(browse_db), terminal_size=(80, 24), press=["question_mark"],
                        run_before=_open("world", world_id=W))


def test_hostile_response_80x24(snap_compare: Any, browse_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _open("item", item_id=f"{W}:I02", tab="responses")(pilot)
        screen = pilot.app.screen
        table = screen.query_one("#responses-table")
        table.move_cursor(row=[r.id for r in screen.responses].index(EVIL_ID))
        await pilot.pause()

    assert snap_compare(make_app(browse_db), terminal_size=(80, 24), run_before=run_before)


def test_too_small_60x20(snap_compare: Any, browse_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        if not isinstance(pilot.app.screen, TooSmallScreen):
            pilot.app.push_screen(TooSmallScreen())
        await pilot.pause()

    assert snap_compare(make_app(browse_db), terminal_size=(60, 20), run_before=run_before)
