"""The dashboard: the typed report (copal_tui.metrics.document.ReportDocument) on screen, one
tab per section (error matrix, facet atlas, paired contrast, judge validity with confusion
matrices, human agreement, and each other suite's tab its descriptor names when the report has
its sections: the real-traffic audit's), a primary-judge
selector, and export of the same report into a folder. Enter on a cell of the error matrix, the
facet atlas, the judge-validity table or a confusion matrix lists the responses behind that
count (the cases screen); on a cell of Table 11, it names the `copal cases --suite traffic`
line that lists the pairs behind it.

The report is computed in a thread worker with its own connection (it reads every judged
response, so it never runs in the UI thread); export runs the same way, through the code
`copal export` uses (copal_tui.services.export.export_folder), so the files are the same.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from copal_tui.domain.suites import SUITES, load
from copal_tui.metrics.document import ReportDocument
from copal_tui.tui.safe import one_line
from copal_tui.tui.widgets import dashboard_sections as sections
from copal_tui.tui.widgets.dashboard_export import ExportDialog
from copal_tui.tui.widgets.dashboard_table import DashboardTable
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.screen_commands import Command, ScreenCommands

# Each suite's tab (its descriptor's `Report.dashboard`: a pane widget with a TITLE and
# `show(doc, sections)`), named as the suite: shown (with its key) only when the report has the
# suite's sections.
SUITE_PANES: list[tuple[str, Any]] = [
    (name, load(spec.report.dashboard)) for name, spec in SUITES.items()
    if spec.report is not None and spec.report.dashboard is not None]
SUITE_TABS = tuple(name for name, _pane in SUITE_PANES)
TABS = [("errors", "Errors"), ("facets", "Facets"), ("contrast", "Contrast"),
        ("validity", "Validity"), ("agreement", "Agreement"),
        *((name, pane.TITLE) for name, pane in SUITE_PANES)]


class ReportReady(Message):
    def __init__(self, generation: int, doc: ReportDocument | None, error: str = "") -> None:
        super().__init__()
        self.generation, self.doc, self.error = generation, doc, error


class ExportDone(Message):
    def __init__(self, folder: Path, files: list[Path], manifest: Path | None,
                 error: str = "") -> None:
        super().__init__()
        self.folder, self.files, self.manifest, self.error = folder, files, manifest, error


class DashboardScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    BINDINGS = [
        *(Binding(str(i), f"tab('{tab}')", title, id=f"dashboard.{tab}")
          for i, (tab, title) in enumerate(TABS, start=1)),
        Binding("j", "next_judge", "Judge", id="dashboard.judge"),
        Binding("e", "export", "Export", id="dashboard.export"),
        Binding("r", "reload", "Recompute", show=False, id="dashboard.reload"),
        Binding("escape,b", "back", "Back", id="dashboard.back"),
    ]
    DEFAULT_CSS = """
    DashboardScreen #dash-status { height: auto; padding: 0 1; }
    DashboardScreen #dash-tabs { height: 1fr; }
    DashboardScreen TabPane { padding: 0; }
    DashboardScreen .dash-pane { height: 1fr; padding: 0 1; }
    DashboardScreen .dash-block { height: auto; margin-top: 1; }
    """

    def __init__(self, judge: str | None = None, mode: str = "contract",
                 bootstrap: int = 1000, seed: int = 0, tab: str = "errors") -> None:
        super().__init__()
        # Same defaults as `copal report` / `copal export`, so the screen and the files agree.
        self.judge, self.mode, self.bootstrap, self.seed = judge, mode, bootstrap, seed
        self.initial_tab = tab if tab in dict(TABS) else "errors"
        # A suite's tab is hidden until a report with its sections arrives, then opened.
        self.pending_tab = tab if tab in SUITE_TABS else None
        if self.pending_tab is not None:
            self.initial_tab = "errors"
        self.doc: ReportDocument | None = None
        self.error = ""
        self.generation = 0
        self.last_export: Path | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="dash-status")
        with TabbedContent(initial=self.initial_tab, id="dash-tabs"):
            with TabPane("1 Errors", id="errors"), VerticalScroll(classes="dash-pane"):
                yield DashboardTable("Error rate on composed items: model x pattern",
                                     id="dash-errors", cursor="cell", first_column=1)
            with TabPane("2 Facets", id="facets"), VerticalScroll(classes="dash-pane"):
                yield DashboardTable("Facet atlas: share of judgments that are under-, over-"
                                     "enforcement or mixed errors", id="dash-facets",
                                     cursor="cell", first_column=2)
            with TabPane("3 Contrast", id="contrast"), VerticalScroll(classes="dash-pane"):
                yield DashboardTable("Paired contrast: single-policy projections vs the "
                                     "composed item", id="dash-contrast")
            with TabPane("4 Validity", id="validity"), VerticalScroll(classes="dash-pane"):
                yield DashboardTable("Judge validity against the human reference",
                                     id="dash-validity", cursor="cell", first_column=1)
                yield DashboardTable(sections.CONFUSION_TITLE, id="dash-confusion",
                                     cursor="cell", first_column=2)
            with TabPane("5 Agreement", id="agreement"), VerticalScroll(classes="dash-pane"):
                yield Static("", id="dash-agreement", classes="dash-block")
                yield DashboardTable("Pairwise agreement between annotators", id="dash-pairs")
            for number, (name, pane) in enumerate(SUITE_PANES, start=len(TABS)
                                                  - len(SUITE_PANES) + 1):
                with TabPane(f"{number} {pane.TITLE}", id=name), \
                        VerticalScroll(classes="dash-pane"):
                    yield pane(id=f"dash-{name}")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "copal \u00b7 dashboard"
        for tab in SUITE_TABS:
            self.query_one(TabbedContent).hide_tab(tab)
        self.compute()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A suite's tab key exists only while its tab is shown (and stays out of `?` otherwise).
        if action == "tab" and parameters and parameters[0] in SUITE_TABS:
            return self.suite_sections(str(parameters[0])) is not None
        return True

    def suite_sections(self, tab: str) -> Any:
        """The sections of the suite shown on `tab`, when the report has them."""
        return None if self.doc is None else self.doc.suites.get(tab)

    # ---------------------------------------------------------------- the report

    def options(self) -> Any:
        from copal_tui.metrics.options import ReportOptions

        return ReportOptions(judge=self.judge, mode=self.mode, bootstrap=self.bootstrap,
                             seed=self.seed)

    def compute(self) -> None:
        self.generation += 1
        self.doc = None
        self.query_one("#dash-tabs").loading = True
        judge = "the default judge" if self.judge is None else one_line(
            f"{self.judge}@{self.mode}")
        self._status(Text(f"Computing the report ({judge}, bootstrap {self.bootstrap})\u2026"))
        self._build(self.generation, self.options())

    @work(thread=True, exclusive=True, group="dashboard.report")
    def _build(self, generation: int, opts: Any) -> None:
        from copal_tui.metrics.options import ReportError
        from copal_tui.services.report import build_document

        with self.app.worker_db() as db:  # type: ignore[attr-defined]
            try:
                self.post_message(ReportReady(generation, build_document(db, opts)))
            except ReportError as exc:
                self.post_message(ReportReady(generation, None, str(exc)))

    def on_report_ready(self, message: ReportReady) -> None:
        if message.generation != self.generation:
            return  # a newer request (another judge) superseded this one
        self.query_one("#dash-tabs").loading = False
        if message.doc is None:
            self.error = message.error
            self._status(Text(f"The report could not be computed: {one_line(message.error, 300)}",
                              style="bold red"))
            return
        self.error = ""
        self.doc = doc = message.doc
        if (primary := doc.scope.primary_judge) is not None:
            self.judge, self.mode = primary.judge, primary.mode
        self._status(sections.scope_line(doc))
        self.query_one("#dash-errors", DashboardTable).show(sections.error_matrix(doc))
        self.query_one("#dash-facets", DashboardTable).show(sections.facet_atlas(doc))
        self.query_one("#dash-contrast", DashboardTable).show(sections.paired_contrast(doc))
        self.query_one("#dash-validity", DashboardTable).show(sections.judge_validity(doc))
        self.query_one("#dash-confusion", DashboardTable).show(sections.confusion(doc))
        pairs = sections.pairwise(doc)
        self.query_one("#dash-agreement", Static).update(
            sections.agreement_summary(doc, pairs.notes))
        self.query_one("#dash-pairs", DashboardTable).show(pairs)
        for name, _pane in SUITE_PANES:
            self._show_suite(name)
        self.refresh_bindings()
        if self.pending_tab is not None and self.suite_sections(self.pending_tab) is not None:
            self.query_one(TabbedContent).active = self.pending_tab
        self.pending_tab = None
        self._focus_tab(self.query_one(TabbedContent).active)

    def _show_suite(self, name: str) -> None:
        """A suite's tab: hidden without its sections, else shown with them."""
        tabs, found = self.query_one(TabbedContent), self.suite_sections(name)
        if found is None:
            if tabs.active == name:
                tabs.active = "errors"
            tabs.hide_tab(name)
            return
        tabs.show_tab(name)
        self.query_one(f"#dash-{name}").show(self.doc, found)  # type: ignore[attr-defined]

    def _status(self, text: Text) -> None:
        self.query_one("#dash-status", Static).update(text)

    # ---------------------------------------------------------------- actions

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name
        self._focus_tab(name)

    def _focus_tab(self, name: str) -> None:
        tables = self.query_one(f"TabPane#{name}").query(DataTable)
        if tables:
            tables.first().focus()

    def judges(self) -> list[tuple[str, str]]:
        return [] if self.doc is None else sections.judge_choices(self.doc)

    def action_next_judge(self) -> None:
        choices = self.judges()
        if len(choices) < 2:
            self.notify("Only one judge setting has usable judgments." if choices else
                        "No judge setting has usable judgments yet.", severity="warning")
            return
        current = (self.judge, self.mode)
        i = choices.index(current) if current in choices else -1
        self.use_judge(*choices[(i + 1) % len(choices)])

    def use_judge(self, judge: str, mode: str) -> None:
        self.judge, self.mode = judge, mode
        self.compute()

    def action_reload(self) -> None:
        self.compute()

    def action_export(self) -> None:
        if self.doc is None:
            self.notify("The report is not ready yet.", severity="warning")
            return
        doc = self.doc

        def chosen(result: tuple[Path, str, bool] | None) -> None:
            if result is not None:
                self.last_export = result[0]
                self._status(Text(f"Exporting {result[1]} to {one_line(str(result[0]), 200)}"
                                  "\u2026"))
                self._export(doc, result[0], result[1], result[2])

        self.app.push_screen(ExportDialog(str(self.last_export or "")), chosen)

    @work(thread=True, group="dashboard.export")
    def _export(self, doc: ReportDocument, folder: Path, fmt: str, force: bool = False) -> None:
        from copal_tui.export.safe_paths import OutputGuard
        from copal_tui.services.export import export_folder

        with self.app.worker_db() as db:  # type: ignore[attr-defined]
            try:
                files, manifest = export_folder(db, fmt, folder, doc,
                                                guard=OutputGuard(force=force))
                self.post_message(ExportDone(folder, files, manifest))
            except OSError as exc:
                self.post_message(ExportDone(folder, [], None, str(exc)))

    def on_export_done(self, message: ExportDone) -> None:
        if message.manifest is None:
            self.notify(f"Export failed: {one_line(message.error, 200)}", severity="error",
                        markup=False)
            self._status(Text(f"Export failed: {one_line(message.error, 300)}", style="red"))
            return
        done = (f"Wrote {len(message.files)} file(s) and {message.manifest.name} to "
                f"{one_line(str(message.folder), 200)}")
        self.notify(done, markup=False)
        if self.doc is not None:
            self._status(sections.scope_line(self.doc).append(f"\n{done}"))

    @on(DataTable.CellSelected)
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        # Enter on a count: the list of the responses behind it.
        owner = event.data_table.parent
        if self.doc is None or not isinstance(owner, DashboardTable) or owner.id is None:
            return
        found = sections.cases_behind(self.doc, owner.id.removeprefix("dash-"),
                                      str(event.cell_key.row_key.value), event.coordinate.column)
        if found is None:
            self.notify("No responses are counted in this cell.")
            return
        self.app.action_open("cases", spec=found.spec,  # type: ignore[attr-defined]
                             filter_text=found.filter_text, what=found.what)

    def action_back(self) -> None:
        # Never pop down to the app's blank default screen (the bottom of the stack).
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    def palette_commands(self) -> list[Command]:
        return [(f"Judge: {one_line(j)}@{m}", "use this judge setting as the primary judge",
                 partial(self.use_judge, j, m)) for j, m in self.judges()]
