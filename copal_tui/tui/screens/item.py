"""One item in depth, in three tabs: the item (query, active clauses, contract), its responses
(a table of every response with the selected judge's verdict beside the humans', disagreements
flagged, and the highlighted response in full below, a long one a part at a time with `>`/`<`),
and its single-policy projections (the
judge's error per model on the composed item and on each projection; composition-induced
failures marked). `j` switches between the judges that judged the item.

All reads are keyed lookups (`copal_tui.services.item_views.item_view`, one snapshot), done on
open and when the screen comes back into view (labels may have been added meanwhile).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from copal_tui.services import item_views
from copal_tui.services.item_views import ItemDetail, ItemResponse
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.item_overview import ItemOverview
from copal_tui.tui.widgets.long_text import part_bindings
from copal_tui.tui.widgets.marks_table import Source, flag_summary, sources, verdict_text
from copal_tui.tui.widgets.paged_table import Rows, short_id
from copal_tui.tui.widgets.response_view import ResponseView
from copal_tui.tui.widgets.screen_commands import Command, ScreenCommands

TABS = ["overview", "responses", "projections"]


class ItemScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("j", "next_judge", "Next judge", id="item.next_judge"),
        Binding("right_square_bracket", "step(1)", "Next resp.", id="item.next_response"),
        Binding("left_square_bracket", "step(-1)", "Prev resp.", show=False,
                id="item.prev_response"),
        # The page keys scroll what is being read (the response, the item, the projections)
        # wherever the focus is: in the responses table they would otherwise page its cursor
        # and jump to another response. `[` / `]` and the table's arrows change response.
        Binding("pagedown", "read_page(1)", "Scroll down", show=False, priority=True,
                id="item.page_down"),
        Binding("pageup", "read_page(-1)", "Scroll up", show=False, priority=True,
                id="item.page_up"),
        *part_bindings("item"),  # a long response, a part at a time
        Binding("p", "parent", "Parent item", id="item.parent"),
        Binding("escape,b", "back", "Back", id="browse.back"),
        Binding("1", "tab('overview')", "Item", show=False, id="item.tab_item"),
        Binding("2", "tab('responses')", "Responses", show=False, id="item.tab_responses"),
        Binding("3", "tab('projections')", "Projections", show=False,
                id="item.tab_projections"),
    ]

    def __init__(self, item_id: str, judge: tuple[str, str] | None = None,
                 tab: str = "overview", response_id: str | None = None) -> None:
        super().__init__()
        self.item_id = item_id
        self.judge = judge
        # Opened on one response (from a list of cases): its tab, with the cursor on it.
        self.response_id = response_id
        self.initial_tab = "responses" if response_id else tab if tab in TABS else "overview"
        self.item: ItemDetail | None = None
        self.responses: list[ItemResponse] = []
        self.judges: list[tuple[str, str]] = []

    # ------------------------------------------------------------------ data

    def load(self) -> None:
        view = item_views.item_view(self.app.db, self.item_id)  # type: ignore[attr-defined]
        if view is None:
            self.item = None
            return
        self.item, self.judges, self.responses = view.item, view.judges, view.responses
        if self.judge not in self.judges:
            self.judge = self.judges[0] if self.judges else None
        if self.blind:
            self._blindfold()

    @property
    def blind(self) -> bool:
        """An annotator (label/adjudicate mode, blind by default) reached this screen: keep
        the judge's and the other annotators' verdicts hidden, as the label queue does."""
        app: Any = self.app
        return bool(app.mode != "browse" and app.settings.blind)

    def _blindfold(self) -> None:
        # Per response: hidden until this annotator has a current label on it.
        me = self.app.annotator  # type: ignore[attr-defined]
        self.responses = [
            resp if any(lab.annotator == me for lab in resp.labels) else replace(
                resp, judgments={}, labels=(), adjudication=None, blinded=True,
                remarks=tuple(r for r in resp.remarks if r.annotator == me))
            for resp in self.responses]

    def compose(self) -> ComposeResult:
        self.load()
        yield Header()
        yield Static(self._title(), id="item-title", classes="summary")
        if self.item is None:
            yield Static(Text("This item is not in the database (b goes back).",
                              style="bold"), classes="panel")
            yield Footer()
            return
        n_resp, n_proj = len(self.responses), len(self.item.projections)
        with TabbedContent(initial=self.initial_tab):
            with TabPane("1 Item", id="overview"), VerticalScroll(id="overview-scroll"):
                yield ItemOverview(id="overview-body")
            with TabPane(f"2 Responses ({n_resp})", id="responses"), Vertical():
                table: DataTable[Any] = DataTable(id="responses-table", cursor_type="row",
                                                  zebra_stripes=True)
                yield table
                with VerticalScroll(id="response-scroll"):
                    yield ResponseView(id="response-body")
            with TabPane(f"3 Projections ({n_proj})", id="projections"), \
                    VerticalScroll(id="projections-scroll"):
                yield Static(id="projection-matrix")
                yield Rows(id="projections-table", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"copal \u00b7 {self.item_id}"
        if self.item is not None:
            self._fill()
            self.call_after_refresh(self._focus_tab)

    def on_screen_resume(self) -> None:
        # Coming back (e.g. from a projection or the label queue): labels may have changed.
        if self.item is not None and self.is_mounted:
            self.load()
            if self.item is not None:
                self._fill()

    def _fill(self) -> None:
        assert self.item is not None
        self.query_one("#item-title", Static).update(self._title())
        self.query_one(ItemOverview).show(self.item)
        self._fill_responses()
        self._fill_projections()

    def _title(self) -> Text:
        out = Text()
        if self.item is None:
            out.append_text(safe(self.item_id, style="bold"))
            return out
        out.append_text(safe(short_id(self.item_id, self.item.item.world_id, 60), style="bold"))
        out.append("  in ")
        out.append_text(safe(self.item.world_name))
        out.append("\n")
        if self.blind:
            out.append("blind: the judge's and others' marks show once you have labelled "
                       "a response", style="dim")
        elif self.judge is None:
            out.append("judge: none yet", style="dim")
        else:
            pos = self.judges.index(self.judge) + 1
            out.append("judge: ", style="dim")
            out.append_text(safe(self.judge[0], style="bold"))
            out.append(f" ({self.judge[1]})  {pos}/{len(self.judges)}", style="dim")
            if len(self.judges) > 1:
                out.append("  \u00b7  j: next judge", style="dim")
        return out

    # ------------------------------------------------------------------ responses tab

    def _fill_responses(self) -> None:
        assert self.item is not None
        table = self.query_one("#responses-table", DataTable)
        keep = table.cursor_row if table.row_count else 0
        ids = [r.id for r in self.responses]
        if self.response_id in ids:
            keep, self.response_id = ids.index(self.response_id), None  # once, on opening
        table.clear(columns=True)
        humans = sorted({lab.annotator for r in self.responses for lab in r.labels})
        table.add_column("#", key="n")
        table.add_column("model", key="model")
        table.add_column("judge", key="judge")
        table.add_column("humans", key="humans")
        table.add_column("adj.", key="adj")
        table.add_column("flag", key="flag")
        for n, resp in enumerate(self.responses, 1):
            marks = sources(self.item.item, resp, self.judge)
            judge = next((s for s in marks if s.kind == "judge"), None)
            adj = next((s for s in marks if s.kind == "adjudication"), None)
            by_name = {s.name: s for s in marks if s.kind == "human"}
            human = safe(" ".join(f"{h[:6]}:{_short_error(by_name.get(h))}" for h in humans)
                         or "-")
            model = safe(one_line(resp.model + ("" if resp.variant == "base"
                                                else f" ({resp.variant})"), 28))
            if resp.blinded:
                hidden = Text("hidden", style="dim italic")
                table.add_row(Text(str(n)), model, hidden, hidden, hidden, Text(""),
                              key=resp.id)
                continue
            table.add_row(Text(str(n)), model, verdict_text(judge), human,
                          verdict_text(adj), Text(flag_summary(self.item.item, marks)),
                          key=resp.id)
        if self.responses:
            table.move_cursor(row=min(keep, len(self.responses) - 1), animate=False)
        self._show_response()

    def current_response(self) -> ItemResponse | None:
        table = self.query_one("#responses-table", DataTable)
        if not self.responses or not table.row_count:
            return None
        return self.responses[min(table.cursor_row, len(self.responses) - 1)]

    def _show_response(self) -> None:
        assert self.item is not None
        resp = self.current_response()
        pos = ""
        if resp is not None:
            pos = f"response {self.responses.index(resp) + 1}/{len(self.responses)}"
            if self.item.response_total > len(self.responses):
                pos += f" (first {len(self.responses)} of {self.item.response_total})"
        self.query_one(ResponseView).show(self.item.item, resp, self.judge, pos)

    @on(DataTable.RowHighlighted, "#responses-table")
    def _response_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_response()
        self.query_one("#response-scroll").scroll_home(animate=False)

    @on(DataTable.RowSelected, "#responses-table")
    def _response_selected(self, event: DataTable.RowSelected) -> None:
        # Enter moves the keyboard into the response text so up/down/page keys scroll it.
        self.query_one("#response-scroll").focus()

    # ------------------------------------------------------------------ projections tab

    def _fill_projections(self) -> None:
        assert self.item is not None
        item, wid = self.item, self.item.item.world_id
        matrix = self.query_one("#projection-matrix", Static)
        table = self.query_one("#projections-table", DataTable)
        table.clear(columns=True)
        projections = item.projections
        if not projections:
            note = ("This item is itself a single-policy projection (p opens its parent)."
                    if item.parent else "This item has no single-policy projections.")
            matrix.update(Text(note, style="italic"))
            table.display = False
            return
        table.display = True
        matrix.update(self._matrix())
        table.add_column("projection", key="id")
        table.add_column("query", key="query")
        for p in projections:
            table.add_row(safe(short_id(p.id, wid, 40)), safe(one_line(p.query, 200)),
                          key=p.id)

    def _matrix(self) -> Table | Text:
        assert self.item is not None
        if self.judge is None:
            return Text("No judgments yet: nothing to compare.", style="italic")
        if self.blind:
            return Text("Hidden while labelling blind.", style="italic")
        projections = self.item.projections
        errors = item_views.projection_errors(
            self.app.db, [self.item_id, *[p.id for p in projections]],  # type: ignore[attr-defined]
            *self.judge)
        models = sorted({m for (_, m) in errors})
        table = Table(title=f"error by model ({self.judge[0]}, {self.judge[1]})",
                      title_justify="left", box=None, header_style="bold", expand=False)
        table.add_column("model")
        table.add_column("composed", justify="center")
        for k, _ in enumerate(projections, 1):
            table.add_column(f"p{k}", justify="center")
        table.add_column("composition-induced", justify="center")
        for m in models:
            comp = errors.get((self.item_id, m))
            proj = [errors.get((p.id, m)) for p in projections]
            induced = comp == 1 and all(e == 0 for e in proj)
            table.add_row(safe(one_line(m, 30)), _err(comp), *[_err(e) for e in proj],
                          Text("\u2691 yes", style="bold") if induced else Text("\u00b7"))
        if not models:
            return Text("The selected judge has not judged these responses.", style="italic")
        return table

    @on(DataTable.RowSelected, "#projections-table")
    def _projection_selected(self, event: DataTable.RowSelected) -> None:
        self.app.action_open(  # type: ignore[attr-defined]
            "item", item_id=str(event.row_key.value), judge=self.judge)

    # ------------------------------------------------------------------ actions

    def _focus_tab(self) -> None:
        if self.item is None:
            return
        active = self.query_one(TabbedContent).active
        target = {"overview": "#overview-scroll", "responses": "#responses-table",
                  "projections": "#projections-table"}[active]
        widget = self.query_one(target)
        if widget.display:
            widget.focus()

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self.call_after_refresh(self._focus_tab)

    def action_tab(self, name: str) -> None:
        # Focus follows in _tab_changed (TabActivated), once the pane is shown.
        if self.item is not None:
            tabs = self.query_one(TabbedContent)
            if tabs.active == name:
                self._focus_tab()
            tabs.active = name

    def action_next_judge(self) -> None:
        if not self.judges or self.item is None:
            self.notify("no judge has judged this item yet")
            return
        pos = self.judges.index(self.judge) if self.judge in self.judges else -1
        self.set_judge(self.judges[(pos + 1) % len(self.judges)])

    def set_judge(self, judge: tuple[str, str]) -> None:
        self.judge = judge
        self._fill()

    def action_step(self, delta: int) -> None:
        if self.item is None or not self.responses:
            return
        self.action_tab("responses")
        table = self.query_one("#responses-table", DataTable)
        table.move_cursor(row=max(0, min(len(self.responses) - 1, table.cursor_row + delta)))

    def action_read_page(self, delta: int) -> None:
        if self.item is None:
            return
        active = self.query_one(TabbedContent).active
        pane = self.query_one({"overview": "#overview-scroll", "responses": "#response-scroll",
                               "projections": "#projections-scroll"}[active], VerticalScroll)
        if delta > 0:
            pane.scroll_page_down(animate=False)
        else:
            pane.scroll_page_up(animate=False)

    def action_read_part(self, delta: int) -> None:
        """`>`/`<` on the responses tab: the response's next (previous) part."""
        if self.item is None or self.query_one(TabbedContent).active != "responses" or \
                not self.query_one(ResponseView).move_part(delta):
            self.app.bell()
            return
        self.query_one("#response-scroll").scroll_home(animate=False)

    def action_parent(self) -> None:
        parent = None if self.item is None else self.item.parent
        if parent:
            self.app.action_open(  # type: ignore[attr-defined]
                "item", item_id=parent.id, judge=self.judge)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "parent":
            return self.item is not None and self.item.parent is not None
        if action == "next_judge":
            return len(self.judges) > 1 or None
        return True

    def action_back(self) -> None:
        self.app.pop_screen()

    def palette_commands(self) -> list[Command]:
        return [(f"Judge: {j} ({m})", "show this judge's marks on every response",
                 partial(self.set_judge, (j, m))) for j, m in self.judges]


def _short_error(mark: Source | None) -> str:
    return "-" if mark is None or mark.error is None else str(mark.error)


def _err(value: int | None) -> Text:
    if value is None:
        return Text("-", style="dim")
    return Text("\u2717 1", style="bold") if value else Text("\u2713 0")
