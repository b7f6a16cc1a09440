"""The report document from the report's reads (`copal_tui.domain.report_rows.ReportReads`):
the COPAL sections (`copal_sections`), then the COMPASS and dialogue sections when the store has
them (`compass_sections`, `dialogue_sections`), the observed facets (`facets`), the provenance
of the figures and the structured-output counts (`provenance`).

`copal_tui.services.report.build_document` imports this module once the reads are running: it
loads numpy, pydantic and the metric libraries, which then overlap the reads.
"""

from __future__ import annotations

from copal_tui.domain.report_rows import ReportReads
from copal_tui.metrics import provenance
from copal_tui.metrics.compass_sections import add_compass
from copal_tui.metrics.copal_sections import Exclusions, build
from copal_tui.metrics.dialogue_sections import add_dialogues
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.facets import observed_facets_section
from copal_tui.metrics.options import ReportOptions


def document(reads: ReportReads, worlds: list[str] | None, shown: list[str],
             opts: ReportOptions) -> ReportDocument:
    """The report over `worlds` (None: all); `shown` is the scope's list of worlds."""
    doc, frame = build(reads, worlds, shown, opts)
    exclusions = Exclusions(doc.exclusions)
    compass = add_compass(doc, reads, worlds, exclusions.add)
    dialogues = add_dialogues(doc, reads.dialogues, exclusions.add)
    present = {"copal": True, "compass": compass, "dialogue": dialogues}
    chosen = doc.scope.primary_judge
    doc.observed_facets = observed_facets_section(
        reads, frame, None if chosen is None else (chosen.judge, chosen.mode))
    prefilters, imported = reads.provenance_extras
    used = reads.provenance_runs
    found = provenance.build(used, prefilters, imported, chosen.judge if chosen else None)
    doc.scope.provenance = {k: v for k, v in found.items() if present[k]}
    doc.structured_outputs = provenance.output_counts(used)
    return doc
