"""The report document from the bulk reads: the COPAL sections (`sections`), then the COMPASS
and dialogue sections when the store has them (`pas_sections`, `dialogue_sections`), the
observed facets (`facets`), the provenance of the figures and the structured-output counts
(`provenance`).

`copal_tui.metrics.report.build_document` imports this module once the reads are running: it
loads numpy, pydantic and the metric libraries, which then overlap the reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from copal_tui.metrics import provenance
from copal_tui.metrics.dialogue_sections import add_dialogues
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.facets import observed_facets_section
from copal_tui.metrics.options import ReportOptions
from copal_tui.metrics.pas_sections import add_compass
from copal_tui.metrics.sections import Exclusions, build_with_frame
from store.db import Database


def document(db: Database, reads: Mapping[str, Any], worlds: list[str] | None,
             shown: list[str], opts: ReportOptions) -> ReportDocument:
    """The report over `worlds` (None: all); `shown` is the scope's list of worlds."""
    doc, frame = build_with_frame(reads, worlds, shown, opts)
    exclusions = Exclusions(doc.exclusions)
    compass = add_compass(doc, db, worlds, exclusions.add)
    dialogues = add_dialogues(doc, db, exclusions.add)
    present = {"copal": True, "compass": compass, "dialogues": dialogues}
    chosen = doc.scope.primary_judge
    doc.observed_facets = observed_facets_section(
        db, worlds, None if chosen is None else (chosen.judge, chosen.mode), reads, frame)
    prefilters, imported = reads["provenance_extras"]
    used = reads["provenance_runs"]
    found = provenance.build(used, prefilters, imported, chosen.judge if chosen else None)
    doc.scope.provenance = {k: v for k, v in found.items() if present[k]}
    doc.structured_outputs = provenance.output_counts(used)
    return doc
