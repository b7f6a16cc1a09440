"""The list of pipeline runs (the `runs` table), one page at a time, with a search box.

The page comes from copal_tui.services.jobs (LIMIT/OFFSET with a COUNT for the total), so
the table never holds more than one page. Moving the cursor posts `RunList.Chosen` with the run id; the screen
shows that run's manifest. Cells are `safe` Text: DataTable reads plain strings as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from copal_tui.services import jobs
from copal_tui.tui.safe import one_line, safe

STATUS_MARK = {"done": "\u2713 ", "failed": "\u2717 ", "cancelled": "\u25a0 ",
               "running": "\u25b6 ", "interrupted": "! "}
STATUS_STYLE = {"done": "green", "failed": "bold red", "cancelled": "yellow",
                "running": "bold", "interrupted": "yellow"}


class RunList(Vertical):
    BINDINGS = [
        # Not in the footer (the status line under the table names them).
        Binding("right_square_bracket", "page(1)", "Next page", show=False,
                id="jobs.next_page"),
        Binding("left_square_bracket", "page(-1)", "Prev page", show=False,
                id="jobs.prev_page"),
    ]
    DEFAULT_CSS = """
    RunList {
        height: 1fr;
    }
    RunList #runs-filter {
        margin: 0 0 0 0;
    }
    RunList DataTable {
        height: 1fr;
    }
    RunList #runs-status {
        height: 1;
        color: $text-muted;
    }
    """

    class Chosen(Message):
        def __init__(self, run_id: str | None) -> None:
            super().__init__()
            self.run_id = run_id

    def __init__(self, *, page_size: int = 100, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page_size = page_size
        self.page_offset = 0
        self.page_total = 0
        self.search_text = ""
        self.run_ids: list[str] = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter runs: words, stage:respond, status:failed",
                    id="runs-filter", compact=True)
        table: DataTable[Any] = DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("run", "status", "calls", "hits", "fail", "cost")
        yield table
        yield Static("", id="runs-status")

    def on_mount(self) -> None:
        self.reload()

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#runs-table", DataTable)

    def reload(self, keep: str | None = None) -> None:
        """Re-read the current page; keep the cursor on run `keep` (or the current run).

        A cursor on the newest run follows the newest run (a job's new run shows at once).
        """
        following = self.page_offset == 0 and self.table.cursor_row <= 0
        self._load(keep or (None if following else self.current()))

    def _load(self, keep: str | None) -> None:
        # Past the end (the filter shrank the list under the current page) the service
        # gives the last page.
        page = jobs.runs_page(self.app.db, self.search_text,  # type: ignore[attr-defined]
                              offset=self.page_offset, limit=self.page_size)
        self.page_offset = page.offset
        self.page_total = page.total
        table = self.table
        table.clear()
        self.run_ids = []
        for row in page.rows:
            status = row.status
            table.add_row(
                safe(one_line(row.id, 40)),
                Text(STATUS_MARK.get(status, "") + status, style=STATUS_STYLE.get(status, "")),
                Text(f"{row.calls:>5}"),
                Text(f"{row.cache_hits:>5}"),
                Text(f"{row.failures:>4}", style="red" if row.failures else ""),
                Text(f"${row.cost:.4f}"),
                key=row.id,
            )
            self.run_ids.append(row.id)
        if keep in self.run_ids:
            table.move_cursor(row=self.run_ids.index(keep))
        self._show_status()
        self.post_message(self.Chosen(self.current()))

    def _show_status(self) -> None:
        if not self.page_total:
            text = "no runs match" if self.search_text else "no runs yet"
        else:
            last = min(self.page_total, self.page_offset + self.page_size)
            text = f"runs {self.page_offset + 1}-{last} of {self.page_total}"
            if self.page_total > self.page_size:
                text += "   [ ] previous/next page"
        self.query_one("#runs-status", Static).update(Text(text))

    def current(self) -> str | None:
        if not self.run_ids:
            return None
        row = self.table.cursor_row
        return self.run_ids[row] if 0 <= row < len(self.run_ids) else None

    def action_page(self, step: int) -> None:
        offset = self.page_offset + step * self.page_size
        if offset < 0 or offset >= max(self.page_total, 1):
            self.app.bell()
            return
        self.page_offset = offset
        self._load(None)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "runs-filter":
            event.stop()
            self.search_text = event.value
            self.page_offset = 0
            self.reload()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "runs-filter":
            event.stop()
            self.table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.Chosen(self.current()))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.Chosen(self.current()))
