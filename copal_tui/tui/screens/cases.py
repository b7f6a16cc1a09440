"""The responses behind a figure: one row per response (response, item, model, the judge's
verdict, the human reference and how it was formed, the confusion cell), paged from the store
through `copal_tui.services.cases`, which applies the report's reference rule. Enter opens the item
screen on that response.

Opened from a dashboard cell (the cell's figure: a confusion cell, a model x pattern error
rate, a facet's share) or from the palette ("Responses where judge and humans disagree",
`disagree:yes`). The filter line narrows further: `cell:fp`, `disagree:yes`, `model:`,
`pattern:`, `facet:`, `verdict:error`, `direction:`, `judge:J@mode`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Header, Static

from copal_tui.services import cases
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.paged_table import Column, PagedTable
from copal_tui.tui.widgets.screen_commands import ScreenCommands

CONVENTION = "cells: error is positive (fp: judge says error, reference says no error)"
SHORT = {"under_enforcement": "under", "over_enforcement": "over", "mixed": "mixed"}


def verdict(row: dict[str, Any]) -> Text:
    word = SHORT.get(row.get("judge_direction") or "", "") if row["judge_error"] else "ok"
    return Text(f"{row['judge_error']} {word}".strip(), style="bold" if row["judge_error"]
                else "")


def reference(row: dict[str, Any]) -> Text:
    source = row["reference_source"]
    if row["reference"] is None:
        return Text("tie (excluded)" if source == "tie" else "not labelled", style="dim")
    return Text(f"{row['reference']} {source}")


COLUMNS = [
    Column("response_id", "response"),
    Column("item_id", "item", 18, hide_below=100),
    Column("model", "model", 18),
    Column("judge_error", "judge", 8, render=verdict),
    Column("reference", "reference", 15, render=reference),
    Column("cell", "cell", 4, render=lambda r: Text(r["cell"] or "-", style="bold")),
]


class CasesScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    # `b` first, as on the world screen: the footer fits 80 columns.
    BINDINGS = [Binding("b,escape", "back", "Back", id="browse.back")]
    DEFAULT_CSS = """
    CasesScreen #cases-summary { height: auto; padding: 0 1; }
    CasesScreen #cases-body { height: 1fr; }
    """

    def __init__(self, spec: cases.CaseSpec | None = None, filter_text: str = "disagree:yes",
                 what: str = "") -> None:
        super().__init__()
        self.spec = spec or cases.CaseSpec()
        self.filter_text = filter_text
        self.what = what or "responses where the judge and the human reference disagree"
        self.error = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(self._summary(), id="cases-summary")
        yield Vertical(id="cases-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "copal \u00b7 cases"
        self._resolve(self.app, self.spec)

    @work(thread=True, exclusive=True, group="cases.judge")
    def _resolve(self, app: Any, spec: cases.CaseSpec) -> None:
        # The default judge is the report's pick: counting usable judgments is a pass over
        # them, so it runs here and the list is mounted once the setting is known.
        with app.worker_db() as db:
            try:
                resolved, error = cases.resolve(db, spec), ""
            except ValueError as exc:
                resolved, error = spec, str(exc)
        app.call_from_thread(self._ready, resolved, error)

    def _ready(self, spec: cases.CaseSpec, error: str) -> None:
        if not self.is_attached:
            return
        self.spec, self.error = spec, error
        self.query_one("#cases-summary", Static).update(self._summary())
        if error:
            return
        table = PagedTable(partial(cases.page, spec), COLUMNS, id="cases-table",
                           filter_text=self.filter_text,
                           placeholder="/ filter: words, or cell:fp disagree:yes model: "
                                       "pattern: facet: verdict:error judge:J@mode")
        self.query_one("#cases-body").mount(table)
        self.call_after_refresh(lambda: table.table.focus())

    def _summary(self) -> Text:
        out = Text()
        out.append("judge ", style="bold")
        if self.spec.judge is None:
            out.append("the report's primary (finding it\u2026)", style="italic")
        else:
            out.append_text(safe(one_line(f"{self.spec.judge}@{self.spec.mode}", 60)))
        out.append(" \u00b7 ")
        out.append_text(safe(one_line(self.what, 120)))
        out.append(f"\n{CONVENTION}", style="dim")
        if self.error:
            out.append(f"\n{one_line(self.error, 200)}", style="bold red")
        return out

    @property
    def table(self) -> PagedTable | None:
        found = self.query("#cases-table")
        return found.first(PagedTable) if found else None

    @on(PagedTable.Selected)
    def _selected(self, event: PagedTable.Selected) -> None:
        row = event.row
        self.app.action_open(  # type: ignore[attr-defined]
            "item", item_id=row["item_id"], judge=(row["judge"], row["mode"]),
            response_id=row["response_id"])

    def action_back(self) -> None:
        self.app.pop_screen()

