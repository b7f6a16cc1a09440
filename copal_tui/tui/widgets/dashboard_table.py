"""One dashboard table: a title, a read-only DataTable and the reasons behind its "n/a" cells.

Fed a `dashboard_sections.Section`; the table is rebuilt whole on each report (a report has a
row per model, facet, judge setting or annotator pair: small, never a list of responses). With
a cell cursor, enter on a cell posts DataTable.CellSelected (the screen opens its cases).
"""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from copal_tui.tui.widgets.dashboard_sections import Section


class DashboardTable(Vertical):
    DEFAULT_CSS = """
    DashboardTable { height: auto; }
    DashboardTable > .dash-title { text-style: bold; color: $accent; }
    DashboardTable > .dash-notes { color: $text-muted; }
    """

    def __init__(self, title: str, *, id: str | None = None,  # noqa: A002
                 cursor: Literal["row", "cell"] = "row", first_column: int = 0) -> None:
        super().__init__(id=id)
        self.title_text = title
        # "cell": each count is a cell of its own (enter opens the responses behind it), and
        # the cursor starts on `first_column`, the first count rather than a name.
        self.cursor = cursor
        self.first_column = first_column
        self.section: Section | None = None

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, classes="dash-title")
        table: DataTable[object] = DataTable(cursor_type=self.cursor, zebra_stripes=True)
        # Inline: the app stylesheet gives every DataTable `height: 1fr` (full-screen lists),
        # which would stretch each of these small tables over the whole pane.
        table.styles.height = "auto"
        table.styles.max_height = 24
        yield table
        yield Static("", classes="dash-notes")

    def on_mount(self) -> None:
        self.watch(self.table, "virtual_size", self._measured, init=False)

    def _measured(self) -> None:
        # The DataTable measures new rows when it is next idle and then asks for a layout, but
        # Textual bumps a widget's box-model cache key only when no layout is already pending:
        # if the pane was laid out between `show` and that idle, the table kept the height it
        # had with no rows (its rows never reached the screen). A layout asked for once the
        # idle is over always bumps the key.
        self.table.call_later(self.table.refresh, layout=True)

    @property
    def table(self) -> DataTable[object]:
        return self.query_one(DataTable)

    def show(self, section: Section) -> None:
        self.section = section
        table = self.table
        table.clear(columns=True)
        # Long headers (pattern names) on two lines keep the matrix within 80 columns.
        labels = [c.replace(" ", "\n", 1) if len(c) > 10 else c for c in section.columns]
        table.header_height = 2 if any("\n" in c for c in labels) else 1
        for i, label in enumerate(labels):
            table.add_column(label, key=f"c{i}")
        for key, cells in zip(section.keys, section.rows, strict=True):
            table.add_row(*cells, key=key)
        if not section.rows:
            table.add_row(*(["(none)"] + [""] * (len(section.columns) - 1)), key="(none)")
        elif self.cursor == "cell":
            table.move_cursor(row=0, column=min(self.first_column, len(section.columns) - 1),
                              animate=False)
        notes = self.query_one(".dash-notes", Static)
        # The reasons are plain text from the metrics code and the store: never markup.
        notes.update("n/a: " + "\n     ".join(section.notes) if section.notes else "")
        notes.display = bool(section.notes)
        # The rows arrive after the first layout: re-measure so `height: auto` fits them.
        table.refresh(layout=True)
        self.refresh(layout=True)

    def cell(self, row_key: str, column: int) -> str:
        """The text shown in a cell (for tests and the screen's own lookups)."""
        return str(self.table.get_cell(row_key, f"c{column}"))
