"""Pilot tests of the way from a figure to the responses behind it, on the hand-made store of
test_metrics_fixture (its confusion cells are worked out by hand there): a dashboard count ->
the list of its responses -> the item screen on one of them, the palette's "Responses where
judge and humans disagree", and the items list's `disagree:` and `cell:` filters. Every key is
pressed through the Pilot and counted: the counts are the journeys' lengths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import TabbedContent

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.cases import CasesScreen
from copal_tui.tui.screens.dashboard import DashboardScreen
from copal_tui.tui.screens.item import ItemScreen
from copal_tui.tui.screens.world import WorldScreen
from copal_tui.tui.widgets.dashboard_table import DashboardTable
from copal_tui.tui.widgets.paged_table import PagedTable
from tests.test_metrics_fixture import build_fixture
from tests.test_tui_browse_data import settle

# By hand (test_metrics_fixture): J1 (contract, the primary judge) counts fp B:I4 and fn
# B:I2; J2 counts fp A:I1 and fn A:I3; tp of J1: A:I2 and A:I3.
J1_FP, J1_DISAGREE, J2_DISAGREE = ["B:I4"], ["B:I2", "B:I4"], ["A:I1", "A:I3"]


@pytest.fixture
def fixture_db(tmp_path: Path) -> Path:
    return build_fixture(tmp_path)


class Keys:
    """Presses keys through the Pilot and counts them (typed text counts apart)."""

    def __init__(self, pilot: Any) -> None:
        self.pilot, self.keys, self.typed = pilot, 0, 0

    async def press(self, *keys: str) -> None:
        self.keys += len(keys)
        await self.pilot.press(*keys)

    async def type(self, text: str) -> None:
        self.typed += len(text)
        await self.pilot.press(*text)


async def until(pilot: Any, done: Any, what: str) -> Any:
    """Let workers finish until `done()` gives something (bounded), and return it."""
    for _ in range(200):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        found = done()
        if found:
            return found
    raise AssertionError(f"never happened: {what}")


def cases_rows(pilot: Any) -> list[str] | None:
    screen = pilot.app.screen
    if not isinstance(screen, CasesScreen) or screen.table is None:
        return None
    table = screen.table
    if table.page is None or table.loading_page:
        return None
    return table.row_keys()


def item_on(pilot: Any) -> tuple[str, str] | None:
    screen = pilot.app.screen
    if not isinstance(screen, ItemScreen) or not screen.is_mounted:
        return None
    resp = screen.current_response()
    return None if resp is None else (screen.item_id, resp.id)


def palette_hits(pilot: Any) -> int:
    screen = pilot.app.screen
    if not isinstance(screen, CommandPalette):
        return 0
    return screen.query_one(CommandList).option_count


async def dashboard(pilot: Any, keys: Keys) -> DashboardScreen:
    await keys.press("ctrl+d")
    return await until(pilot, lambda: isinstance(pilot.app.screen, DashboardScreen)
                       and pilot.app.screen.doc is not None and pilot.app.screen, "dashboard")


async def test_confusion_fp_cell_lists_its_responses_and_opens_the_item(fixture_db):
    async with make_app(fixture_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = Keys(pilot)
        screen = await dashboard(pilot, keys)
        await keys.press("4", "tab")  # the validity tab, then its confusion matrices
        confusion = screen.query_one("#dash-confusion", DashboardTable)
        assert confusion.table.has_focus
        # The cursor starts on J1's tn; fp is the next column (rows: human reference).
        await keys.press("right", "enter")
        assert await until(pilot, lambda: cases_rows(pilot), "the fp list") == J1_FP
        assert pilot.app.screen.spec.judge == "J1"
        await keys.press("enter")
        assert await until(pilot, lambda: item_on(pilot), "the item") == ("I4", "B:I4")
        assert pilot.app.screen.query_one(TabbedContent).active == "responses"
        # ctrl+d, 4, tab, right, enter to the list; enter to the response.
        assert (keys.keys, keys.typed) == (6, 0)


async def test_validity_table_counts_open_their_cells(fixture_db):
    async with make_app(fixture_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = Keys(pilot)
        await dashboard(pilot, keys)
        await keys.press("4")  # the judge-validity table has the focus, on J1's n
        await keys.press("right", "right", "enter")  # n -> tp -> fp
        assert await until(pilot, lambda: cases_rows(pilot), "the fp list") == J1_FP
        await keys.press("escape", "right", "enter")  # back (cursor on fp), then fn
        assert await until(pilot, lambda: cases_rows(pilot), "the fn list") == ["B:I2"]


async def test_the_dashboard_says_rows_are_the_human_reference(fixture_db):
    async with make_app(fixture_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await dashboard(pilot, Keys(pilot))
        confusion = screen.query_one("#dash-confusion", DashboardTable)
        title = str(confusion.query_one(".dash-title").render())
        assert "rows: human reference" in title and "columns: judge" in title
        assert "positive: error" in title
        # J1 by hand: reference no error -> tn 3, fp 1; reference error -> fn 1, tp 2.
        assert [confusion.cell("J1@contract\tno error", c) for c in (1, 2, 3)] == [
            "no error", "tn 3", "fp 1"]
        assert [confusion.cell("J1@contract\terror", c) for c in (1, 2, 3)] == [
            "error", "fn 1", "tp 2"]


async def test_palette_finds_the_disagreements_and_enter_opens_one(fixture_db):
    async with make_app(fixture_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = Keys(pilot)
        await keys.press("ctrl+p")
        await keys.type("disagree")
        await until(pilot, lambda: palette_hits(pilot), "the palette's search")
        await keys.press("enter")
        assert await until(pilot, lambda: cases_rows(pilot), "the list") == J1_DISAGREE
        table = pilot.app.screen.table
        assert table.filter_input.value == "disagree:yes"
        # The list takes the focus once it has been drawn: keys go to it from then on.
        await until(pilot, lambda: table.table.has_focus, "the list's focus")
        await keys.press("down", "enter")  # the second: B:I4
        assert await until(pilot, lambda: item_on(pilot), "the item") == ("I4", "B:I4")
        assert (keys.keys, keys.typed) == (4, 8)


async def test_cases_filter_line_switches_judge_and_cell(fixture_db):
    async with make_app(fixture_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.action_open("cases")
        assert await until(pilot, lambda: cases_rows(pilot), "the list") == J1_DISAGREE
        await pilot.press("slash", "ctrl+u", *"disagree:yes judge:J2", "enter")
        assert await until(pilot, lambda: cases_rows(pilot) == J2_DISAGREE and J2_DISAGREE,
                           "J2's list") == J2_DISAGREE
        await pilot.press("slash", "ctrl+u", *"cell:tp", "enter")
        assert await until(pilot, lambda: cases_rows(pilot) == ["A:I2", "A:I3"] and True,
                           "J1's tp")
        await pilot.press("slash", "ctrl+u", *"cell:xx", "enter")
        table = await until(pilot, lambda: pilot.app.screen.table.error
                            and pilot.app.screen.table, "the error")
        assert "cell" in table.error


async def items_with(pilot: Any, items: PagedTable, text: str) -> list[str]:
    await pilot.press("slash", "ctrl+u", *text, "enter")
    await settle(pilot)
    assert items.error is None, items.error
    return items.row_keys()


async def test_items_list_filters_disagreements_by_judge_and_cell(fixture_db):
    async with make_app(fixture_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the only world
        await settle(pilot)
        assert isinstance(pilot.app.screen, WorldScreen)
        await pilot.press("4")
        await settle(pilot)
        items = pilot.app.screen.query_one("#items-table", PagedTable)
        everything = items.row_keys()
        # Items whose response is an fp or fn of J1 (I2: B:I2 fn; I4: B:I4 fp).
        assert await items_with(pilot, items, "disagree:yes") == ["I2", "I4"]
        assert await items_with(pilot, items, "disagree:yes judge:J2") == ["I1", "I3"]
        assert await items_with(pilot, items, "cell:tp") == ["I2", "I3"]
        assert await items_with(pilot, items, "disagree:no") == [
            i for i in everything if i not in ("I2", "I4")]
        await pilot.press("slash", "ctrl+u", *"nope:1", "enter")
        await settle(pilot)
        assert items.error is not None and "disagree" in items.error
