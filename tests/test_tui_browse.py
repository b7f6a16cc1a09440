"""Pilot tests of the browse screens: worlds, a world's tabs, records, related rows, paging and
filters, each asserted against the database rows they show."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.help import HelpScreen, binding_rows
from copal_tui.tui.screens.record import RecordScreen
from copal_tui.tui.screens.too_small import TooSmallScreen
from copal_tui.tui.screens.world import WorldScreen
from copal_tui.tui.screens.worlds import WorldsScreen
from copal_tui.tui.settings import Settings
from copal_tui.tui.widgets.paged_table import PagedTable
from copal_tui.tui.widgets.screen_commands import ScreenCommands
from store.db import connect
from tests import test_tui_browse_data as data
from tests.test_tui_browse_data import W, settle

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
browse_db = data.browse_db
browse_template = data.browse_template


def text_of(renderable: Any, width: int = 120) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def column(db_path: Path, sql: str, params: tuple = ()) -> list[Any]:
    db = connect(db_path)
    try:
        return [r[0] for r in db.execute(sql, params)]
    finally:
        db.conn.close()


def table(pilot: Any, name: str | None = None) -> PagedTable:
    screen = pilot.app.screen
    if name is None:
        return screen.query_one(PagedTable)  # type: ignore[no-any-return]
    return screen.query_one(f"#{name}-table", PagedTable)  # type: ignore[no-any-return]


async def until(pilot: Any, done: Any) -> None:
    """Let the app work (tab switch, focus, page loads) until `done()` holds; bounded, and
    the caller asserts the outcome: on a loaded machine one refresh is not always enough."""
    for _ in range(50):
        if done():
            return
        await settle(pilot)


async def open_world(pilot: Any, world: str = W) -> WorldScreen:
    await settle(pilot)
    t = table(pilot)
    t.select_key(world)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, WorldScreen)
    return pilot.app.screen


async def test_worlds_rows_and_counts_come_from_the_database(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(pilot.app.screen, WorldsScreen)
        t = table(pilot)
        assert t.row_keys() == column(browse_db, "SELECT id FROM worlds ORDER BY id")
        row = {r["id"]: r for r in t.page.rows}[W]  # type: ignore[union-attr]
        assert row["responses"] == column(
            browse_db, "SELECT COUNT(*) FROM responses r JOIN items i ON i.id = r.item_id "
            "WHERE i.world_id = ?", (W,))[0]
        assert row["labelled"] == column(
            browse_db, "SELECT COUNT(DISTINCT l.subject) FROM current_annotations l "
            "JOIN responses r ON r.id = l.subject JOIN items i ON i.id = r.item_id "
            "WHERE l.suite = 'copal' AND l.role = 'annotator' AND i.world_id = ?", (W,))[0]
        assert row["judge_err"] == column(
            browse_db, "SELECT AVG(j.error) FROM judgments j JOIN responses r "
            "ON r.id = j.response_id JOIN items i ON i.id = r.item_id "
            "WHERE i.world_id = ? AND j.mode = 'contract'", (W,))[0]
        assert t.table.row_count == 2


async def test_worlds_filter_requeries_and_reports_a_wrong_key(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"bank", "enter")
        await settle(pilot)
        assert table(pilot).row_keys() == ["meridian-bank"]
        assert pilot.app.screen.focused is table(pilot).table  # enter hands over to the rows
        await pilot.press("slash", "ctrl+u", *"colour:red", "enter")
        await settle(pilot)
        assert "unknown filter 'colour'" in (table(pilot).error or "")
        await pilot.press("slash", "ctrl+u", *"risk:high", "enter")
        await settle(pilot)
        assert table(pilot).error is None
        assert table(pilot).row_keys() == column(
            browse_db, "SELECT id FROM worlds WHERE risk_tier = 'high' ORDER BY id")


async def test_world_tabs_list_the_world_rows_in_order(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        expected = {
            "policies": column(browse_db, "SELECT id FROM policies WHERE world_id = ? "
                               "ORDER BY position", (W,)),
            "clauses": column(browse_db, "SELECT id FROM clauses WHERE world_id = ? "
                              "ORDER BY rowid", (W,)),
            "compositions": column(browse_db, "SELECT id FROM compositions WHERE world_id = ? "
                                   "ORDER BY rowid", (W,)),
            "items": column(browse_db, "SELECT id FROM items WHERE world_id = ? "
                            "ORDER BY rowid", (W,)),
        }
        for n, name in enumerate(["policies", "clauses", "compositions", "items", "runs"], 1):
            await pilot.press(str(n))
            await until(pilot, lambda name=name: pilot.app.screen.active_table().id ==
                        f"{name}-table" and pilot.app.screen.focused is table(pilot, name).table)
            assert pilot.app.screen.active_table().id == f"{name}-table"
            assert pilot.app.screen.focused is table(pilot, name).table
            if name in expected:
                assert table(pilot, name).row_keys() == expected[name]
                assert table(pilot, name).page.total == len(expected[name])  # type: ignore
        # The imported database has no pipeline runs: the runs tab says so.
        assert table(pilot, "runs").row_keys() == []


async def test_enter_shows_a_policy_in_full_and_b_closes_it(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        table(pilot, "policies").select_key("P10")
        await pilot.press("enter")
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, RecordScreen)
        text = "".join(text_of(body) for _, body in screen.sections)
        full = column(browse_db, "SELECT text FROM policies WHERE world_id = ? AND id = 'P10'",
                      (W,))[0]
        assert " ".join(full.split()) in " ".join(text.split())
        assert "C10" in text  # the clause grounded from it
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(pilot.app.screen, WorldScreen)


async def test_related_follows_policy_to_clauses_to_compositions_to_items(
        browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        table(pilot, "policies").select_key("P10")
        await pilot.press("r")
        await settle(pilot)
        clauses = table(pilot, "clauses")
        assert clauses.filter_input.value == "policy:P10"
        assert clauses.row_keys() == column(
            browse_db, "SELECT id FROM clauses WHERE world_id = ? AND EXISTS (SELECT 1 FROM "
            "json_each(policy_ids) WHERE value = 'P10') ORDER BY rowid", (W,))
        clauses.select_key(f"{W}:C10")
        await pilot.press("r")
        await settle(pilot)
        comps = table(pilot, "compositions")
        assert comps.row_keys() == column(
            browse_db, "SELECT id FROM compositions WHERE world_id = ? AND clause_ids LIKE "
            "'%\"harbor-clinics:C10\"%' ORDER BY rowid", (W,))
        comps.select_key(f"{W}:K01")
        await pilot.press("r")
        await settle(pilot)
        assert table(pilot, "items").row_keys() == column(
            browse_db, "SELECT id FROM items WHERE composition_id = ? ORDER BY rowid",
            (f"{W}:K01",))


async def test_items_page_through_with_brackets_and_filter_by_key(browse_db: Path) -> None:
    app = make_app(browse_db, settings=Settings(page_size=10))
    all_items = column(browse_db, "SELECT id FROM items WHERE world_id = ? ORDER BY rowid", (W,))
    assert len(all_items) > 10
    async with app.run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        await pilot.press("4")
        await settle(pilot)
        items = table(pilot, "items")
        assert items.row_keys() == all_items[:10]
        assert items.table.row_count == 10  # one page in the widget, never every row
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert items.row_keys() == all_items[10:20]
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert items.row_keys() == all_items[:10]
        await pilot.press("slash", *"facet:over_refusal", "enter")
        await settle(pilot)
        assert items.row_keys() == column(
            browse_db, "SELECT id FROM items WHERE world_id = ? AND facet = 'over_refusal' "
            "ORDER BY rowid", (W,))
        await pilot.press("slash", "ctrl+u", *"selected:no", "enter")
        await settle(pilot)
        assert items.row_keys() == column(
            browse_db, "SELECT id FROM items WHERE world_id = ? AND selected = 0 "
            "ORDER BY rowid", (W,))


async def test_enter_on_an_item_opens_it_and_b_goes_back(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        await pilot.press("4")
        await settle(pilot)
        table(pilot, "items").select_key(f"{W}:I03")
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.screen.item_id == f"{W}:I03"
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(pilot.app.screen, WorldScreen)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(pilot.app.screen, WorldsScreen)


async def test_help_lists_the_screen_keys_with_their_ids(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        rows = binding_rows(pilot.app.screen)
        ids = {r[3] for r in rows}
        assert {"world.related", "browse.back", "table.next_page", "table.filter",
                "table.open", "app.help", "app.quit", "world.tab_items"} <= ids
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(pilot.app.screen, HelpScreen)
        await pilot.press("q")  # closes help; does not quit the app
        await pilot.pause()
        assert isinstance(pilot.app.screen, WorldScreen)
        assert pilot.app.is_running


async def test_keymap_remaps_a_browse_binding_by_id(browse_db: Path) -> None:
    app = make_app(browse_db, settings=Settings(keymap={"world.related": "ctrl+g"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        table(pilot, "policies").select_key("P10")
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert table(pilot, "clauses").filter_input.value == "policy:P10"


async def test_palette_offers_the_screen_actions(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        screen = await open_world(pilot)
        names = {name for name, _, _ in ScreenCommands(screen)._commands()}
        assert {"Related", "Back", "Next page", "Filter", "Items", "Runs"} <= names


async def test_too_small_screen_says_what_is_missing_and_q_quits(browse_db: Path) -> None:
    # The screen itself (shown and hidden on resize by the app; see the report on app.py).
    async with make_app(browse_db).run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        pilot.app.push_screen(TooSmallScreen())
        await pilot.pause()
        message = text_of(pilot.app.screen.query_one("#too-small").content)
        assert "80x24" in message and "60x20" in message
        assert "20 more columns" in message and "4 more lines" in message
        await pilot.press("q")
        await pilot.pause()
        assert not pilot.app.is_running


async def test_a_long_list_loads_one_page(browse_db: Path, tmp_path: Path) -> None:
    # 600 extra items through the public import: the items tab holds one page of them.
    import json

    from click.testing import CliRunner

    from copal_tui.cli import main

    extra = tmp_path / "many.jsonl"
    contract = [{"id": "R1", "text": "answers", "kind": "content", "clause_id": f"{W}:C01"}]
    extra.write_text("".join(json.dumps({
        "type": "item", "id": f"{W}:bulk{n:04d}", "world_id": W, "composition_id": None,
        "pattern": None, "facet": None, "query": f"bulk question {n}", "required": contract,
        "forbidden": [], "method": "manual", "parent_item_id": None, "selected": False}) + "\n"
        for n in range(600)), encoding="utf-8")
    result = CliRunner().invoke(main, ["--db", str(browse_db), "import", str(extra)])
    assert result.exit_code == 0, result.output
    total = column(browse_db, "SELECT COUNT(*) FROM items WHERE world_id = ?", (W,))[0]
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await open_world(pilot)
        await pilot.press("4")
        await settle(pilot)
        items = table(pilot, "items")
        await until(pilot, lambda: pilot.app.screen.focused is items.table)
        assert items.page.total == total  # type: ignore[union-attr]
        assert items.table.row_count == 100
        for _ in range(10):
            await pilot.press("right_square_bracket")
            await settle(pilot)
        assert items.page.offset == (total - 1) // 100 * 100  # type: ignore[union-attr]
        assert items.row_keys()[-1] == f"{W}:bulk0599"


async def test_leaving_before_the_lists_load_is_harmless(browse_db: Path) -> None:
    # b straight after opening a world, and again: the workers' results find no table.
    async with make_app(browse_db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(3):
            pilot.app.action_open("world", world_id=W, tab="items")
            # Let the push land (one refresh) so `b` reaches the world screen, not the one
            # below it; the lists themselves load in workers and are still pending.
            await pilot.pause()
            await pilot.press("b")
        await settle(pilot)
        assert isinstance(pilot.app.screen, WorldsScreen)
        assert pilot.app.is_running
