"""PagedTable: a DataTable that shows one page of a store query at a time, with a filter line.

The widget owns no SQL: it is given a fetch function `(db, PageRequest) -> Page` from a service
(`copal_tui/services/`). The first page is read on the UI thread if SQLite finishes it within
`INLINE` (30 ms), so the first paint has its rows; otherwise, and for every later page, a thread
worker reads it with its own connection: the UI never waits long on SQLite, and a list over
100,000 rows costs one page. An optional `decorate` adds slow columns (aggregates over many rows)
to the shown page in a worker; those cells show an ellipsis until their values arrive. The
filter line takes free words (LIKE over the list's text columns) and `key:value` filters
(`facet:over_refusal selected:yes`); the store says when a list does not know a key.

Cells are always `rich.text.Text` built through `copal_tui.tui.safe`: DataTable would parse a
plain string as markup, and any cell may hold untrusted text. The widget-free parts (columns,
the filter grammar, the columns' widths, a cell's text, shared renderings) are in
`table_columns`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from copal_tui.services.browse import FilterError, Page, PageRequest
from copal_tui.tui.failure import database_failure
from copal_tui.tui.safe import safe
from copal_tui.tui.widgets.fast_cells import FastCells
from copal_tui.tui.widgets.table_columns import (
    Column,
    cell,
    flex_width,
    fmt_rate,
    parse_filter,
    short_id,
    shown_columns,
)
from store.db import Database

__all__ = ["Column", "Decorate", "Fetch", "PagedTable", "Rows", "fmt_rate", "parse_filter",
           "short_id"]

Fetch = Callable[[Database, PageRequest], Page]
# Optional second pass over the shown page: row key -> extra columns (slow aggregates).
Decorate = Callable[[Database, list[str]], dict[str, dict[str, Any]]]


class Rows(FastCells):
    """The table's rows: enter is shown in the footer as "Open" (DataTable hides it)."""

    HELP_GROUP = "list"
    BINDINGS = [Binding("enter", "select_cursor", "Open", id="table.open")]


class RowMessage(Message):
    """A message about one row of a PagedTable (Selected and Highlighted)."""

    def __init__(self, table: PagedTable, row: dict[str, Any]) -> None:
        super().__init__()
        self.table, self.row = table, row

    @property
    def control(self) -> PagedTable:
        return self.table


class PagedTable(Vertical):
    HELP_GROUP = "list"
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="table.filter"),
        Binding("right_square_bracket", "next_page", "Next page", id="table.next_page"),
        Binding("left_square_bracket", "prev_page", "Prev page", id="table.prev_page"),
        Binding("ctrl+r", "reload", "Reload", show=False, id="table.reload"),
    ]

    DEBOUNCE = 0.2  # seconds of typing quiet before the filter re-queries
    PAINT_WAIT = 2.0  # at most this long (s) the slow columns wait for the rows' first paint
    INLINE = 0.03  # at most this long (s) the first page is read on the UI thread

    class Selected(RowMessage):
        """Enter on a row."""

    class Highlighted(RowMessage):
        """The cursor moved to a row (not a Selected: handlers match a message's MRO)."""

    def __init__(self, fetch: Fetch, columns: list[Column], *, key: str = "id",
                 placeholder: str = "filter: words, or key:value", page_size: int | None = None,
                 filter_text: str = "", decorate: Decorate | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.fetch, self.decorate, self.columns, self.key = fetch, decorate, columns, key
        self.placeholder, self.page_size = placeholder, page_size
        self.page: Page | None = None
        self._inline: Page | None = None  # the first page, read inline, until it is shown
        self.error: str | None = None
        self.loading_page = False
        self._filter_text = filter_text
        self._offset = 0
        self._rows: dict[str, dict[str, Any]] = {}
        self._shown: tuple[str, ...] = ()
        self._debounce: Any = None
        self._want_key: str | None = None

    def compose(self) -> ComposeResult:
        yield Input(self._filter_text, placeholder=self.placeholder, classes="table-filter")
        yield Rows(cursor_type="row", zebra_stripes=True)
        yield Static("", classes="table-status")

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one(DataTable)

    @property
    def filter_input(self) -> Input:
        return self.query_one(Input)

    def on_mount(self) -> None:
        if not self._first_page_inline():
            self.reload()

    def _first_page_inline(self) -> bool:
        """Read the first page here if SQLite does within `INLINE`, shown once the app has
        started (a worker's page came after an empty paint: ~100 ms later at 100k responses)."""
        req = self.request()
        try:
            with self.app.db.within(self.INLINE) as db:  # type: ignore[attr-defined]
                page = self.fetch(db, req)
        except Exception:  # noqa: BLE001 - the worker reads it again and reports the problem
            return False
        self._inline = page
        self.app.when_started(lambda: self._shown_inline(req, page))  # type: ignore[attr-defined]
        return True

    def _shown_inline(self, req: PageRequest, page: Page) -> None:
        if self._inline is not page:
            return  # reloaded meanwhile (a filter set as the screen mounted): that one wins
        self._show(req, page, None)
        if self.decorate is not None and page.rows and self.page is page:
            self._load(self.app, req, page)

    # ------------------------------------------------------------------ loading

    def request(self) -> PageRequest:
        search, filters = parse_filter(self._filter_text)
        size = self.page_size or self.app.settings.page_size  # type: ignore[attr-defined]
        return PageRequest(search=search, filters=filters, offset=self._offset, limit=size)

    def reload(self) -> None:
        """Re-query the current page (after a filter change, a page move or new data)."""
        self.loading_page, self._inline = True, None
        self._status()
        self._load(self.app, self.request())

    def set_filter(self, text: str) -> None:
        """Replace the filter line (and re-query from the first page)."""
        self._filter_text, self._offset = text, 0
        if self.is_mounted:
            with self.filter_input.prevent(Input.Changed):
                self.filter_input.value = text
            self.reload()

    @work(thread=True, exclusive=True, group="page")
    def _load(self, app: App[Any], req: PageRequest, shown: Page | None = None) -> None:
        """Read the page (unless `shown`: read already) and then its slow columns."""
        worker = get_current_worker()

        def post(callback: Callable[..., object], *args: Any) -> None:
            # Back to the UI thread, unless the table or the app went away meanwhile (the
            # screen was closed while the query ran).
            if worker.is_cancelled:
                return
            with contextlib.suppress(RuntimeError):  # the app is shutting down
                app.call_from_thread(callback, *args)

        try:
            with app.worker_db() as db:  # type: ignore[attr-defined]
                page = shown
                if page is None:
                    try:
                        page = self.fetch(db, req)
                    except FilterError as exc:
                        post(self._show, req, None, str(exc))
                        return
                    post(self._show, req, page, None)
                if self.decorate is not None and page.rows and not worker.is_cancelled:
                    # The slow columns wait for the rows to be painted: on a busy machine their
                    # query would otherwise compete with the first paint for the CPU.
                    painted = threading.Event()
                    post(self.call_after_refresh, painted.set)
                    end = time.monotonic() + self.PAINT_WAIT
                    while not painted.wait(0.05) and not worker.is_cancelled and \
                            time.monotonic() < end:
                        pass
                    post(self._decorated, page, self.decorate(db, [str(r[self.key])
                                                                   for r in page.rows]))
        except Exception as exc:  # noqa: BLE001 - a locked database: a status line
            if database_failure(exc, app.db_path) is not None:  # type: ignore[attr-defined]
                raise  # a damaged or unreadable one ends the app (copal_tui.tui.failure)
            post(self._show, req, None, f"could not read the list: {exc}")

    def _show(self, req: PageRequest, page: Page | None, error: str | None) -> None:
        if not self.is_attached:
            return
        self.loading_page = False
        self.error = error
        if page is None:
            self._status()
            return
        if page.total and page.offset >= page.total:
            # The list shrank under the current page (new filter, rows deleted): go to the last.
            self._offset = (page.total - 1) // page.limit * page.limit
            self.reload()
            return
        self.page = page
        self._rows = {str(r[self.key]): r for r in page.rows}
        self._render_rows()
        self._status()

    def _decorated(self, page: Page, extra: dict[str, dict[str, Any]]) -> None:
        if not self.is_attached or page is not self.page:
            return  # a newer page is shown
        for key, values in extra.items():
            if key in self._rows:
                self._rows[key].update(values)
        visible = self._visible()
        flex = self._flex_width(visible)
        if self._shown != tuple(c.key for c in visible) + (str(flex),):
            self._render_rows()
            return
        # Same columns: change only the cells whose text changed (the ellipses). Rebuilding the
        # table would re-add every row and column and re-measure them for the same layout.
        table = self.table
        for key in extra.keys() & self._rows.keys():
            for col in visible:
                new = cell(col, self._rows[key], col.width or flex)
                old = table.get_cell(key, col.key)
                if (old != new or old.style != new.style  # Text's == ignores these two
                        or old.justify != new.justify):
                    table.update_cell(key, col.key, new)

    # ------------------------------------------------------------------ rendering

    def _visible(self) -> list[Column]:
        return shown_columns(self.columns, self._width())

    def _flex_width(self, shown: list[Column]) -> int:
        return flex_width(shown, self._width())

    def _width(self) -> int:
        return self.size.width or self.app.size.width

    def _render_rows(self) -> None:
        table = self.table
        keep = self._want_key
        if keep is None and table.row_count and table.cursor_row < table.row_count:
            keep = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        self._want_key = None
        visible = self._visible()
        flex = self._flex_width(visible)
        table.clear(columns=True)
        for col in visible:
            table.add_column(Text(col.label, justify=col.justify), key=col.key,
                             width=col.width or flex)
        for key, row in self._rows.items():
            table.add_row(*(cell(c, row, c.width or flex) for c in visible), key=key)
        self._shown = tuple(c.key for c in visible) + (str(flex),)
        if keep in self._rows:
            table.move_cursor(row=table.get_row_index(keep), animate=False)

    def on_resize(self) -> None:
        if self.page is None:
            return
        visible = self._visible()
        if tuple(c.key for c in visible) + (str(self._flex_width(visible)),) != self._shown:
            self._render_rows()

    def _status(self) -> None:
        out = Text()
        page = self.page
        if self.loading_page and page is None:
            out.append("loading\u2026", style="italic")
        elif page is not None:
            if page.total == 0:
                out.append("no rows match" if self._filter_text.strip() else "no rows yet")
            else:
                last = min(page.offset + page.limit, page.total)
                pages = (page.total + page.limit - 1) // page.limit
                out.append(f"{page.offset + 1:,}\u2013{last:,} of {page.total:,}")
                out.append(f"  page {page.offset // page.limit + 1}/{pages}")
                if pages > 1:
                    out.append("  [ ] pages", style="dim")
            if self.loading_page:
                out.append("  loading\u2026", style="italic")
        if self.error:
            out.append("  " if out else "")
            out.append_text(safe(self.error, style="bold"))
            out.append(" (!)")
        self.query_one(".table-status", Static).update(out)
        self.set_class(bool(self.error), "has-error")

    # ------------------------------------------------------------------ rows and keys

    def current_row(self) -> dict[str, Any] | None:
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._rows.get(str(key))

    def row_keys(self) -> list[str]:
        """Keys of the rows on the current page, in order (tests and callers)."""
        return list(self._rows)

    def select_key(self, key: str) -> None:
        """Put the cursor on `key` when it is (or, after the next load, will be) on the page."""
        if key in self._rows:
            self.table.move_cursor(row=self.table.get_row_index(key), animate=False)
        else:
            self._want_key = key

    def _row_of(self, event: DataTable.RowSelected | DataTable.RowHighlighted) -> Any | None:
        event.stop()
        if event.row_key is None or event.row_key.value is None:  # an empty table
            return None
        return self._rows.get(str(event.row_key.value))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        row = self._row_of(event)
        if row is not None:
            self.post_message(self.Selected(self, row))

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = self._row_of(event)
        if row is not None:
            self.post_message(self.Highlighted(self, row))

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self._filter_text = event.value
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(self.DEBOUNCE, self._apply_filter)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        # Enter applies the filter at once and hands the keyboard to the rows.
        event.stop()
        self._filter_text = event.value
        self._apply_filter()
        self.table.focus()

    def _apply_filter(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        self._offset = 0
        self.reload()

    # ------------------------------------------------------------------ actions

    def action_focus_filter(self) -> None:
        self.filter_input.focus()

    def action_next_page(self) -> None:
        page = self.page
        if page is not None and page.offset + page.limit < page.total:
            self._offset = page.offset + page.limit
            self.reload()

    def action_prev_page(self) -> None:
        page = self.page
        if page is not None and page.offset > 0:
            self._offset = max(0, page.offset - page.limit)
            self.reload()

    def action_reload(self) -> None:
        self.reload()

    def on_key(self, event: Any) -> None:
        # From the filter line, `down` moves into the rows (no mouse, no Esc needed).
        if event.key == "down" and self.filter_input.has_focus:
            event.stop()
            self.table.focus()
