"""The worlds screen (the browse mode's first screen): one row per world with its counts,
labelling progress and error rates, filterable, paged from SQLite; enter opens the world."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, Static

from copal_tui.services import browse
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.paged_table import Column, PagedTable, fmt_rate
from copal_tui.tui.widgets.screen_commands import ScreenCommands


def _progress(row: dict[str, Any]) -> str:
    return f"{row['labelled']}/{row['responses']}"


def _items(row: dict[str, Any]) -> str:
    return f"{row['selected']}/{row['items']}"


COLUMNS = [
    Column("id", "world", 20),
    Column("name", "name", None, min_width=14),
    Column("industry", "industry", 24, hide_below=140),
    Column("risk_tier", "risk", 8, hide_below=100),
    Column("policies", "pol.", 4, hide_below=110, justify="right"),
    Column("clauses", "cl.", 4, hide_below=110, justify="right"),
    Column("compositions", "comp.", 5, hide_below=110, justify="right"),
    Column("items", "items sel/all", 13, render=_items, justify="right"),
    Column("responses", "resp.", 6, hide_below=100, justify="right"),
    Column("labelled", "labelled", 9, render=_progress, justify="right"),
    Column("judge_err", "err J", 5, render=lambda r: fmt_rate(r["judge_err"]), justify="right"),
    Column("human_err", "err H", 5, render=lambda r: fmt_rate(r["human_err"]), justify="right"),
]

HINT = ("err J: mean error by the judges (contract mode); err H: by annotators' current labels; "
        "labelled: responses with a current label")


class WorldsScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    # The rows get the keyboard as the screen starts (not the filter line first, then the rows:
    # each focus change rebuilds the footer).
    AUTO_FOCUS = "#worlds-table Rows"
    BINDINGS = [
        Binding("enter", "open_world", "Open", show=False, id="browse.open"),
        Binding("o", "open_world", "Open", show=False, id="browse.open_key"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Worlds", style="bold"), classes="screen-title")
        yield PagedTable(browse.worlds_page, COLUMNS, id="worlds-table",
                         decorate=browse.world_stats,
                         placeholder="/ filter worlds: words, or risk:high industry:bank")
        yield Static(Text(HINT), classes="hint")
        yield Footer()

    _resumed = False

    def on_screen_resume(self) -> None:
        # Back from a world: labels or jobs may have changed the counts. Not the resume that
        # starts the screen: the list is loading its first page then, and a page that arrived
        # before this message would be queried and laid out a second time.
        if not self._resumed:
            self._resumed = True
            return
        table = self.query_one(PagedTable)
        if table.page is not None:
            table.reload()

    @on(PagedTable.Selected)
    def _open(self, event: PagedTable.Selected) -> None:
        self.app.action_open("world", world_id=event.row["id"])  # type: ignore[attr-defined]

    def action_open_world(self) -> None:
        row = self.query_one(PagedTable).current_row()
        if row is not None:
            self.app.action_open("world", world_id=row["id"])  # type: ignore[attr-defined]
