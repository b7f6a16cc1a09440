"""A suite's tab on the world screen comes from its descriptor's `world_tab` alone: the policy
review suite (`tests/fourth_suite.py`), registered here with a tab of the world's policies to
review, gets its pane, its key (the next digit after COMPASS's), its count on the summary line,
its list and filter, `r` and enter through copal's own world screen; unregistered again, a world
screen opened after has none of it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from copal_tui.domain.suites import register, unregister
from copal_tui.services import browse
from copal_tui.tui.app import make_app
from copal_tui.tui.screens.help import binding_rows
from copal_tui.tui.screens.world import WorldScreen
from copal_tui.tui.widgets.paged_table import PagedTable
from copal_tui.tui.widgets.table_columns import Column
from copal_tui.tui.widgets.world_tab import WorldTab
from tests import fourth_suite
from tests import test_tui_browse_data as data
from tests.test_tui_browse import column, text_of, until
from tests.test_tui_browse_data import W, settle
from tests.test_tui_compass_browse import open_world

browse_db = data.browse_db
browse_template = data.browse_template

NAME = fourth_suite.NAME
OWN = ["policies", "clauses", "compositions", "items", "runs"]


class ReviewPolicyScreen(Screen[None]):
    """What enter on a row of the suite's tab opens: one policy to review."""

    def __init__(self, policy_id: str) -> None:
        super().__init__()
        self.policy_id = policy_id

    def compose(self) -> ComposeResult:
        yield Static(self.policy_id)


TAB = WorldTab(
    title="Review", columns=lambda world_id: [Column("id", "id", 6), Column("kind", "kind", 9),
                                              Column("text", "text")],
    hint="/ filter policies to review: words, or kind:deny", page=browse.policies_page,
    count=lambda summary: summary.policies or None, counted="policies to review",
    opens="review_policy", opens_with="policy_id",
    related=lambda row, world_id: f"kind:{row['kind']}")

SPEC = replace(fourth_suite.SPEC, world_tab=f"{__name__}:TAB",
               screens={**fourth_suite.SPEC.screens,
                        "review_policy": f"{__name__}:ReviewPolicyScreen"})


def review_table(screen: WorldScreen) -> PagedTable:
    return screen.query_one(f"#{NAME}-table", PagedTable)


async def test_a_registered_suites_world_tab_comes_through_its_descriptor(
        browse_db: Path) -> None:
    policies = column(browse_db, "SELECT id FROM policies WHERE world_id = ? ORDER BY position",
                      (W,))
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        register(SPEC)
        try:
            await shows_the_tab(pilot, browse_db, policies)
        finally:
            unregister(NAME)
        pilot.app.pop_screen()  # the suite's screen
        pilot.app.pop_screen()  # the world screen
        screen = await open_world(pilot, W)
        assert [p.id for p in screen.query(TabPane)] == OWN
        assert f"world.tab_{NAME}" not in {r[3] for r in binding_rows(screen)}
        assert "to review" not in text_of(screen.query_one("#world-summary", Static).content, 200)


async def shows_the_tab(pilot: Any, browse_db: Path, policies: list[str]) -> None:
    """The world screen, opened with the suite registered, shows its tab and does what it
    says; leaves the suite's screen on top."""
    screen = await open_world(pilot, W)
    panes = list(screen.query(TabPane))
    assert [p.id for p in panes] == [*OWN, NAME]  # the world has no COMPASS suite
    summary = text_of(screen.query_one("#world-summary", Static).content, 200)
    assert f"{len(policies)} policies to review" in summary
    keys = {r[3]: (r[1], r[2]) for r in binding_rows(screen)}
    assert keys[f"world.tab_{NAME}"] == ("7", "Review")
    assert "world.tab_compass" not in keys
    await pilot.press("6")  # COMPASS's key: no COMPASS tab in this world, so nothing
    await settle(pilot)
    assert screen.query_one(TabbedContent).active == "policies"
    await pilot.press("7")
    await until(pilot, lambda: screen.query(f"#{NAME}-table")
                and review_table(screen).page is not None)
    assert screen.query_one(TabbedContent).active == NAME
    table = review_table(screen)
    assert table.row_keys() == policies
    # `r` lists the policies of the row's kind, in the tab's own list.
    kind = column(browse_db, "SELECT kind FROM policies WHERE world_id = ? AND id = ?",
                  (W, policies[0]))[0]
    table.select_key(policies[0])
    await until(pilot, lambda: (table.current_row() or {}).get("id") == policies[0])
    await pilot.press("r")
    await until(pilot, lambda: table.row_keys() != policies)
    assert table.row_keys() == column(
        browse_db, "SELECT id FROM policies WHERE world_id = ? AND kind = ? "
        "ORDER BY position", (W, kind))
    # Enter opens the suite's own screen on the row.
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ReviewPolicyScreen)
    assert pilot.app.screen.policy_id == policies[0]

