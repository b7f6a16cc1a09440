"""One COMPASS query in depth, in two tabs: the query (type, strategy, form, text, intended
policy, verification, base query, the world's policies) and its responses (a table of every
response with the judges' and the annotators' verdicts, the highlighted one in full below: its
text (a long one a part at a time, `>`/`<`), pre-filter decision, each judge's refused / compliant / aligned / failure mode and
rationale, and the human labels).

Opened with enter from the COMPASS tab of the world screen (browse mode only: the label modes
cannot reach the world screen, so nothing here needs blinding). Reads are keyed lookups
(`copal_tui.services.item_views.query_view`, one snapshot), repeated when the screen comes back into
view.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from copal_tui.services import item_views
from copal_tui.services.item_views import (
    CompassJudgment,
    CompassLabel,
    CompassResponse,
    PolicyRow,
    QueryDetail,
)
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.compass_view import query_meta, query_renderable, response_renderable
from copal_tui.tui.widgets.compass_view import verdict_text as single_verdict
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.long_text import LongText, part_bindings
from copal_tui.tui.widgets.paged_table import short_id
from copal_tui.tui.widgets.screen_commands import ScreenCommands

TABS = ["query", "responses"]


def _verdicts(rows: Sequence[CompassJudgment] | Sequence[CompassLabel]) -> Text:
    """One verdict in full; several (judges, or annotators) as `k/n aligned`."""
    if len(rows) <= 1:
        return single_verdict(rows[0] if rows else None)
    done = [r.aligned for r in rows if r.aligned is not None]
    return Text(f"{sum(done)}/{len(done)} aligned")


class CompassQueryScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    DEFAULT_CSS = """
    CompassQueryScreen #compass-query-scroll { height: 1fr; padding: 0 1; }
    CompassQueryScreen #compass-responses-table { height: auto; max-height: 7; }
    CompassQueryScreen #compass-response-scroll {
        height: 1fr; padding: 0 1; border-top: solid $primary 40%;
    }
    CompassQueryScreen #compass-query-scroll:focus,
    CompassQueryScreen #compass-response-scroll:focus { background: $boost; }
    """
    BINDINGS = [
        Binding("right_square_bracket", "step(1)", "Next resp.", id="compass_query.next"),
        Binding("left_square_bracket", "step(-1)", "Prev resp.", show=False,
                id="compass_query.prev"),
        # `b Back` as on the world screen, so the footer reads the same (esc works too).
        Binding("b,escape", "back", "Back", id="browse.back"),
        Binding("1", "tab('query')", "Query", show=False, id="compass_query.tab_query"),
        Binding("2", "tab('responses')", "Responses", show=False,
                id="compass_query.tab_responses"),
        *part_bindings("compass_query"),  # a long response, a part at a time
    ]

    def __init__(self, query_id: str, tab: str = "query") -> None:
        super().__init__()
        self.query_id = query_id
        self.initial_tab = tab if tab in TABS else "query"
        self.q: QueryDetail | None = None
        self.policies: list[PolicyRow] = []
        self.responses: list[CompassResponse] = []
        self._text = LongText(None)  # the part on screen of the response shown
        self._text_of: CompassResponse | None = None

    def load(self) -> None:
        # Each label comes with `aligned`, from the query type by the judge's rule.
        view = item_views.query_view(self.app.db, self.query_id)  # type: ignore[attr-defined]
        if view is None:
            self.q = None
            return
        self.q, self.policies, self.responses = view.query, view.policies, view.responses

    def compose(self) -> ComposeResult:
        self.load()
        yield Header()
        yield Static(self._title(), id="compass-query-title", classes="summary")
        if self.q is None:
            yield Static(Text("This query is not in the database (b goes back).",
                              style="bold"), classes="panel")
            yield Footer()
            return
        with TabbedContent(initial=self.initial_tab):
            with TabPane("1 Query", id="query"), \
                    VerticalScroll(id="compass-query-scroll", can_focus=True):
                yield Static(id="compass-query-body")
            with TabPane(f"2 Responses ({len(self.responses)})", id="responses"), Vertical():
                yield DataTable(id="compass-responses-table", cursor_type="row",
                                zebra_stripes=True)
                with VerticalScroll(id="compass-response-scroll", can_focus=True):
                    yield Static(id="compass-response-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"copal \u00b7 {self.query_id}"
        if self.q is not None:
            self._fill()
            self.call_after_refresh(self._focus_tab)

    def on_screen_resume(self) -> None:
        # Back from elsewhere (a label queue opened from the palette): labels may be new.
        if self.q is not None and self.is_mounted:
            self.load()
            if self.q is not None:
                self._fill()

    def _title(self) -> Text:
        out = Text()
        if self.q is None:
            return out.append_text(safe(self.query_id, style="bold"))
        out.append_text(safe(short_id(self.query_id, self.q.world_id, 60), style="bold"))
        out.append("  in ")
        out.append_text(safe(self.q.world_name))
        out.append("\n")
        out.append_text(safe(query_meta(self.q) + f" \u00b7 {self.q.status}", style="dim"))
        return out

    def _fill(self) -> None:
        assert self.q is not None
        self.query_one("#compass-query-body", Static).update(
            query_renderable(self.q, self.policies))
        table = self.query_one("#compass-responses-table", DataTable)
        keep = table.cursor_row if table.row_count else 0
        table.clear(columns=True)
        for label, key in (("#", "n"), ("model", "model"), ("variant", "variant"),
                           ("judges", "judges"), ("humans", "humans")):
            table.add_column(label, key=key)
        for n, r in enumerate(self.responses, 1):
            table.add_row(Text(str(n)), safe(one_line(r.model, 30)), Text(r.variant),
                          _verdicts(r.judgments), _verdicts(r.labels), key=r.id)
        if self.responses:
            table.move_cursor(row=min(keep, len(self.responses) - 1), animate=False)
        self._show_response()

    def current_response(self) -> CompassResponse | None:
        table = self.query_one("#compass-responses-table", DataTable)
        if not self.responses or not table.row_count:
            return None
        return self.responses[min(table.cursor_row, len(self.responses) - 1)]

    def _show_response(self) -> None:
        assert self.q is not None
        body = self.query_one("#compass-response-body", Static)
        resp = self.current_response()
        if resp is None:
            body.update(Text("no responses to this query yet", style="italic"))
            return
        pos = f"response {self.responses.index(resp) + 1}/{len(self.responses)}"
        if self.q.response_total > len(self.responses):
            pos += f" (first {len(self.responses)} of {self.q.response_total})"
        if resp is not self._text_of:
            self._text, self._text_of = LongText.of(resp.text), resp
        body.update(response_renderable(resp, pos, self._text))

    @on(DataTable.RowHighlighted, "#compass-responses-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_response()
        self.query_one("#compass-response-scroll").scroll_home(animate=False)

    @on(DataTable.RowSelected, "#compass-responses-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        # Enter hands the keyboard to the response text so up/down/page keys scroll it.
        self.query_one("#compass-response-scroll").focus()

    # ------------------------------------------------------------------ actions

    def _focus_tab(self) -> None:
        if self.q is None:
            return
        active = self.query_one(TabbedContent).active
        self.query_one("#compass-query-scroll" if active == "query"
                       else "#compass-responses-table").focus()

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self.call_after_refresh(self._focus_tab)

    def action_tab(self, name: str) -> None:
        if self.q is not None:
            tabs = self.query_one(TabbedContent)
            if tabs.active == name:
                self._focus_tab()
            tabs.active = name

    def action_step(self, delta: int) -> None:
        if self.q is None or not self.responses:
            return
        self.action_tab("responses")
        table = self.query_one("#compass-responses-table", DataTable)
        table.move_cursor(row=max(0, min(len(self.responses) - 1, table.cursor_row + delta)))

    def action_read_part(self, delta: int) -> None:
        """`>`/`<` on the responses tab: the response's next (previous) part."""
        if self.q is None or self.query_one(TabbedContent).active != "responses" or \
                self._text_of is None or not self._text.move(delta):
            self.app.bell()
            return
        self._show_response()
        self.query_one("#compass-response-scroll").scroll_home(animate=False)

    def action_back(self) -> None:
        self.app.pop_screen()
