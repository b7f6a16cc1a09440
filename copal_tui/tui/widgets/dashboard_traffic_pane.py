"""The traffic suite's tab of the dashboard (its descriptor's `Report.dashboard`): Table 11 under
a caption saying whose labels it counts, the multi/single ratio, the annotators' agreement, the
automatic labeller (its HEURISTIC caveat above it when offline) with the corrected figures, and
Table 12; a section the report lacks is not shown. Enter on a count of Table 11 names the
`copal cases --suite traffic` line that lists the pairs behind it. The tables are
`dashboard_traffic`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from copal_tui.tui.safe import one_line
from copal_tui.tui.widgets import dashboard_traffic as traffic
from copal_tui.tui.widgets.dashboard_table import DashboardTable

if TYPE_CHECKING:  # its module loads the agreement libraries: only the report loads them
    from copal_tui.metrics.document import ReportDocument
    from copal_tui.metrics.document_traffic import TrafficSections


class TrafficPane(Vertical):
    TITLE: ClassVar[str] = "Traffic"
    DEFAULT_CSS = "TrafficPane { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.found: TrafficSections | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="dash-traffic-caption", classes="dash-block")
        yield DashboardTable("Real traffic (Table 11): cases and errors per source and policy "
                             "category", id="dash-traffic-audit", cursor="cell", first_column=2)
        yield DashboardTable("Multi-policy over single-policy error rate",
                             id="dash-traffic-ratio")
        yield DashboardTable("Annotators' agreement on the category and the error",
                             id="dash-traffic-agreement")
        yield Static("", id="dash-traffic-caveat", classes="dash-block")
        yield DashboardTable("Automatic labeller against the human reference (its sample; "
                             "erroneous is positive)", id="dash-traffic-labeller")
        yield DashboardTable("The whole log by the labeller, corrected for its mistakes on "
                             "the sample", id="dash-traffic-corrected")
        yield DashboardTable("Deployed chatbots probed over HTTP (Table 12)",
                             id="dash-traffic-probes")

    def show(self, doc: ReportDocument, found: TrafficSections) -> None:
        self.found = found
        self.query_one("#dash-traffic-caption", Static).update(traffic.audit_caption(found))
        caveat = traffic.labeller_caveat(found)
        shown = self.query_one("#dash-traffic-caveat", Static)
        shown.update(caveat)
        shown.display = bool(caveat.plain)
        for key, section in (("audit", traffic.audit(found)), ("ratio", traffic.ratios(found)),
                             ("agreement", traffic.annotators(found)),
                             ("labeller", traffic.labeller(found)),
                             ("corrected", traffic.corrected(found)),
                             ("probes", traffic.probes(found))):
            table = self.query_one(f"#dash-traffic-{key}", DashboardTable)
            table.display = bool(section.rows)  # a section the report lacks is not shown
            table.show(section)

    @on(DataTable.CellSelected)
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        owner = event.data_table.parent
        if self.found is None or owner is None or owner.id != "dash-traffic-audit":
            return
        event.stop()
        line = traffic.cases_command(self.found, str(event.cell_key.row_key.value),
                                     event.coordinate.column)
        if line is not None:
            self.notify(f"The pairs behind this count: {one_line(line, 300)}", markup=False,
                        timeout=10)
