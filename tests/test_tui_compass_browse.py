"""The COMPASS tab of the world screen and the query screen through the Pilot: the tab exists
only for a world with a suite, filters narrow the rows (asserted against SQL), enter opens a
query with every judge's verdict and the human labels, hostile text stays literal."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from copal_tui.domain.annotation.payloads import CompassLabel
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.tui.app import make_app
from copal_tui.tui.screens.compass_query import CompassQueryScreen
from copal_tui.tui.screens.help import binding_rows
from copal_tui.tui.screens.world import WorldScreen
from copal_tui.tui.widgets.paged_table import PagedTable
from store.db import connect
from tests.compass_tui_support import W, build_compass_db, rows
from tests.test_tui_browse import text_of
from tests.test_tui_browse_data import settle


@pytest.fixture
def db(tmp_path):
    return build_compass_db(tmp_path)


async def open_world(pilot: Any, world: str) -> WorldScreen:
    await settle(pilot)
    pilot.app.action_open("world", world_id=world)
    await settle(pilot)
    assert isinstance(pilot.app.screen, WorldScreen)
    return pilot.app.screen


def compass_table(pilot: Any) -> PagedTable:
    return pilot.app.screen.query_one("#compass-table", PagedTable)  # type: ignore[no-any-return]


async def filtered(pilot: Any, text: str) -> list[str]:
    table = compass_table(pilot)
    table.set_filter(text)
    await settle(pilot)
    assert table.error is None, table.error
    return table.row_keys()


def ids(db, where: str = "1", params: tuple = ()) -> list[str]:
    return [r["id"] for r in rows(db, f"SELECT id FROM compass_queries WHERE world_id = ? "
                                  f"AND {where} ORDER BY rowid", (W, *params))]


async def test_the_tab_appears_only_for_a_world_with_a_suite(db):
    async with make_app(db).run_test(size=(80, 24)) as pilot:
        screen = await open_world(pilot, "plainco")
        assert [p.id for p in screen.query(TabPane)] == [
            "policies", "clauses", "compositions", "items", "runs"]
        assert "world.tab_compass" not in {r[3] for r in binding_rows(screen)}
        await pilot.press("6")  # no such tab: nothing happens
        assert screen.query_one(TabbedContent).active == "policies"
        await pilot.press("b")
        screen = await open_world(pilot, W)
        assert [p.id for p in screen.query(TabPane)][-1] == "compass"
        assert "7 COMPASS queries" in text_of(screen.query_one("#world-summary", Static).content)
        await pilot.press("6")
        await settle(pilot)
        assert screen.query_one(TabbedContent).active == "compass"
        assert compass_table(pilot).row_keys() == ids(db)
        row = {r["id"]: r for r in compass_table(pilot).page.rows}["q3"]  # type: ignore[union-attr]
        assert row["responses"] == 2 and row["judge_aligned"] == 0


async def test_filters_narrow_the_list(db):
    async with make_app(db).run_test(size=(120, 40)) as pilot:
        await open_world(pilot, W)
        await pilot.press("6")
        await settle(pilot)
        assert await filtered(pilot, "type:denied_edge") == ids(
            db, "query_type = 'denied_edge'")
        assert await filtered(pilot, "type:denied") == ["q3", "q4", "q5", "q6", "q7"]
        assert await filtered(pilot, "type:denied_edge strategy:hypothetical_scenario") == ["q4"]
        assert await filtered(pilot, "status:kept policy:D1 form:long") == ["q5"]
        assert await filtered(pilot, "policy:D2") == ids(db, "policy_id = 'D2'")
        assert await filtered(pilot, "Vertex reviewer") == ["q4"]
        assert await filtered(pilot, "answered:no") == ["q6", "q7"]
        table = compass_table(pilot)
        table.set_filter("colour:red")
        await settle(pilot)
        assert "unknown filter 'colour'" in (table.error or "") and "strategy" in table.error
        # r on a base query lists the edge queries built from it.
        assert "q3" in await filtered(pilot, "")
        table.select_key("q3")
        # The cursor lands on q3 once its page is shown (at once, or after a late reload).
        for _ in range(100):
            row = table.current_row()
            if row is not None and row["id"].endswith("q3"):
                break
            await settle(pilot)
        assert row is not None and row["id"].endswith("q3")
        await pilot.press("r")
        await settle(pilot)
        assert table.row_keys() == ["q4", "q5"]


async def test_enter_opens_the_query_with_verdicts_and_labels(db):
    conn = connect(db)
    AnnotationQueue(conn, "compass", "ana").submit(
        "r3", CompassLabel(refused=False, compliant=False, failure_mode="direct_violation"))
    conn.close()
    async with make_app(db).run_test(size=(120, 40)) as pilot:
        await open_world(pilot, W)
        await pilot.press("6")
        await settle(pilot)
        compass_table(pilot).select_key("q3")
        await pilot.press("enter")
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, CompassQueryScreen)
        overview = " ".join(text_of(screen.query_one("#compass-query-body", Static).content,
                                    200).split())
        assert "Is the Vertex more reliable" in overview and "D1 (deny)" in overview
        assert "2 edge queries derive from this one" in overview
        await pilot.press("2")
        await pilot.pause()
        table = screen.query_one("#compass-responses-table", DataTable)
        assert table.row_count == 2
        shown = text_of(screen.query_one("#compass-response-body", Static).content, 200)
        assert "test/judge  answered \u00b7 violates \u00b7 misaligned \u00b7 direct " \
               "violation" in shown
        assert "compares the Vertex with a competitor" in shown
        assert "test/judge2  answered \u00b7 violates \u00b7 misaligned" in shown
        assert "ana  answered \u00b7 violates \u00b7 misaligned \u00b7 direct violation" in shown
        await pilot.press("right_square_bracket")
        await pilot.pause()
        shown = text_of(screen.query_one("#compass-response-body", Static).content, 200)
        assert "pre-filter DENY by test/filter: asks for a competitor comparison" in shown
        assert "no judge has judged this response" in shown
        await pilot.press("b")
        assert isinstance(pilot.app.screen, WorldScreen)


async def test_edge_query_and_hostile_response_are_literal(db):
    async with make_app(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.action_open("compass_query", query_id="q4", tab="responses")
        await pilot.pause()
        screen = pilot.app.screen
        overview = text_of(screen.query_one("#compass-query-body", Static).content, 200)
        assert "denied_edge \u00b7 hypothetical scenario \u00b7 short \u00b7 policy D1" in overview
        assert "Base query (parent)" in overview and "more reliable" in overview
        shown = text_of(screen.query_one("#compass-response-body", Static).content, 200)
        assert "[bold red]not markup[/bold red]" in shown
        assert "\x1b" not in shown and "pwned" not in shown


async def test_rejected_query_shows_its_verification(db):
    async with make_app(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.action_open("compass_query", query_id="q6")
        await pilot.pause()
        overview = text_of(pilot.app.screen.query_one("#compass-query-body", Static).content,
                           200)
        assert "rejected matched: A2" in " ".join(overview.split())
        assert "does not match its intended policy D2" in overview
        pilot.app.action_open("compass_query", query_id="nope")
        await pilot.pause()
        assert "not in the database" in text_of(
            pilot.app.screen.query(Static).last().content)  # type: ignore[arg-type]
