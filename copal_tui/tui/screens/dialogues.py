"""The dialogues list (browse mode, ctrl+l or the palette): every judged dialogue with its domain,
turns, violation turns, the dialogue it is a variant of, judges and attempts, and (filled in
after the page shows) how many predictions over all judges and attempts are wrong. Paged and
filtered in SQLite (through copal_tui/services/dialogues.py); enter opens the dialogue."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, Static

from copal_tui.services.dialogues import dialogues_page, wrong_counts
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.paged_table import Column, PagedTable
from copal_tui.tui.widgets.screen_commands import ScreenCommands
from store.db import Database

COLUMNS = [
    Column("id", "dialogue", None, min_width=16),
    Column("domain", "domain", 12),
    Column("turns", "turns", 5, justify="right"),
    Column("violations", "viol.", 5, justify="right"),
    Column("variant_of", "variant of", 22, hide_below=110, render=lambda r: r["variant_of"] or "-"),
    Column("judges", "judges/att.", 11, justify="right",
           render=lambda r: f"{r['judges']}/{r['attempts']}"),
    Column("wrong", "wrong", 5, justify="right"),
]

HINT = ("viol.: turns that followed a modified guideline; judges/att.: judges and their "
        "attempts; wrong: wrong predictions over every judge and attempt (tagged turns of scored attempts)")


def wrong_column(db: Database, dialogue_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The `wrong` column the table fills in after showing a page (its `decorate` shape)."""
    return {d: {"wrong": n} for d, n in wrong_counts(db, dialogue_ids).items()}


class DialoguesScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("enter", "open_dialogue", "Open", show=False, id="dialogues.open"),
        Binding("o", "open_dialogue", "Open", show=False, id="dialogues.open_key"),
        Binding("w", "only_wrong", "Wrong only", id="dialogues.wrong"),
        Binding("escape,b", "back", "Back", id="dialogues.back"),
    ]

    def __init__(self, filter_text: str = "") -> None:
        super().__init__()
        self.filter_text = filter_text

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Dialogues", style="bold"), classes="screen-title")
        yield PagedTable(dialogues_page, COLUMNS, id="dialogues-table", decorate=wrong_column,
                         filter_text=self.filter_text,
                         placeholder="/ filter: words, or domain:X judge:J violation:yes "
                                     "variant:yes wrong:yes")
        yield Static(Text(HINT), classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "copal \u00b7 dialogues"
        self.query_one(PagedTable).table.focus()

    def on_screen_resume(self) -> None:
        # Back from a dialogue or a review queue: new attempts or imports change the counts.
        table = self.query_one(PagedTable)
        if table.page is not None:
            table.reload()

    @on(PagedTable.Selected)
    def _open(self, event: PagedTable.Selected) -> None:
        self._open_row(event.row)

    def _open_row(self, row: dict[str, Any]) -> None:
        self.app.action_open("dialogue", dialogue_id=row["id"])  # type: ignore[attr-defined]

    def action_open_dialogue(self) -> None:
        row = self.query_one(PagedTable).current_row()
        if row is not None:
            self._open_row(row)

    def action_only_wrong(self) -> None:
        """Toggle `wrong:yes` in the filter line."""
        table = self.query_one(PagedTable)
        text = table.filter_input.value
        words = [w for w in text.split() if w.lower() != "wrong:yes"]
        table.set_filter(" ".join(words if len(words) != len(text.split())
                                  else [*words, "wrong:yes"]))

    def action_back(self) -> None:
        self.app.pop_screen()
