"""The report document from the report's reads (`copal_tui.domain.report_rows.ReportReads`), in
two steps around the one read that depends on computed figures. `draft`: the COPAL sections
(`copal_sections`), then every other suite's sections when the store has them
(`suite_report`: the builders the suites' descriptors name), and whether the primary judge
named observed facets the judgments' bulk read codes without a name. `finish`: the observed facets (`facets`), given
those names, the provenance of the figures and the structured-output counts (`provenance`).

`copal_tui.services.report.build_document` imports this module once the reads are running: it
loads numpy, pydantic and the metric libraries, which then overlap the reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from copal_tui.domain.report_rows import ReportReads
from copal_tui.metrics import provenance
from copal_tui.metrics.copal_sections import Exclusions, build
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.facets import observed_facets_section, unnamed_facets
from copal_tui.metrics.frame import Frame
from copal_tui.metrics.options import ReportOptions
from copal_tui.metrics.suite_report import Given, add_suites


@dataclass
class Draft:
    """The report before its observed facets and provenance. `unnamed`: the primary judge
    setting when some of its observed facets must be read by name first."""

    doc: ReportDocument
    frame: Frame
    present: dict[str, bool]  # which suites have sections
    unnamed: tuple[str, str] | None


def draft(reads: ReportReads, worlds: list[str] | None, shown: list[str],
          opts: ReportOptions) -> Draft:
    """The report over `worlds` (None: all); `shown` is the scope's list of worlds."""
    doc, frame = build(reads, worlds, shown, opts)
    exclusions = Exclusions(doc.exclusions)
    present = add_suites(Given(doc, reads, frame, worlds, exclusions.add))
    chosen = doc.scope.primary_judge
    setting = None if chosen is None else (chosen.judge, chosen.mode)
    return Draft(doc, frame, present, setting if unnamed_facets(reads, frame, setting) else None)


def finish(d: Draft, reads: ReportReads, names: Mapping[int, str]) -> ReportDocument:
    """The report of draft `d`; `names`: {response rowid: stored observed facet} of the
    judgments `d.unnamed` asks for."""
    doc = d.doc
    chosen = doc.scope.primary_judge
    doc.observed_facets = observed_facets_section(
        reads, d.frame, None if chosen is None else (chosen.judge, chosen.mode), names)
    stored, imported = reads.provenance_extras
    used = reads.provenance_runs
    found = provenance.build(used, stored, imported, chosen.judge if chosen else None)
    for name, section in doc.suites.items():
        removed = section.provenance_counts()
        if removed:
            found[name] = found[name].model_copy(update={"removed": removed})
    doc.scope.provenance = {k: v for k, v in found.items() if d.present.get(k)}
    doc.structured_outputs = provenance.output_counts(used)
    return doc
