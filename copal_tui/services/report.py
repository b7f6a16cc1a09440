"""The report service: the one place that reads what a report computes from.

`build_document` checks the options against the store (`ReportError` for an unknown world),
starts every read of the report at once (`store.report.reads.BulkReads`, threaded, typed as
`copal_tui.domain.report_rows.ReportReads`) and hands them to the metrics
(`copal_tui.metrics.assemble`), which build the typed `ReportDocument` from those reads alone;
between the metrics' two steps it reads the observed-facet names they ask for.
`dialogue_judging` reads the dialogues alone and scores them, `traffic_audit` the traffic's
Table 11 (the demo's summary).

It imports no numpy or pydantic at module level, so that importing it is cheap and the imports
of the metric modules overlap the reads (the target: a full report over 100,000 responses and
300,000 judgments in under a second, see BENCHMARKS.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from copal_tui.metrics.options import ReportError, ReportOptions
from store.db import Database
from store.report import reads as q
from store.report.dialogue import dialogue_rows
from store.report.facets import other_facets

if TYPE_CHECKING:
    from copal_tui.metrics.dialogue import DialogueJudging
    from copal_tui.metrics.document import ReportDocument
    from copal_tui.metrics.document_traffic import TrafficAudit


def build_document(db: Database, opts: ReportOptions) -> ReportDocument:
    """The report over `opts.worlds` (all when empty); `ReportError` for an unknown world or
    judge."""
    worlds = sorted(set(opts.worlds)) or None
    known = q.known_worlds(db)
    if worlds:
        unknown = sorted(set(worlds) - set(known))
        if unknown:
            raise ReportError(f"unknown world(s): {', '.join(unknown)}")
    reads = q.BulkReads(db, worlds)
    try:
        # Imported only now, for speed: numpy, pydantic and the metric libraries load while
        # the reads run in threads.
        from copal_tui.metrics import assemble

        draft = assemble.draft(reads, worlds, worlds or known, opts)
        names = other_facets(db, *draft.unnamed) if draft.unnamed else {}
        return assemble.finish(draft, reads, names)
    finally:
        reads.close()


def dialogue_judging(db: Database) -> DialogueJudging:
    """CompliBench's figures per judge and domain over the stored attempts, and the failed
    attempts (the report's `dialogue_judging` section and its exclusions)."""
    # Imported here for start-up speed: the metric module loads pydantic.
    from copal_tui.metrics.dialogue import dialogue_judging as judging

    return judging(dialogue_rows(db))


def traffic_audit(db: Database) -> TrafficAudit | None:
    """Table 11 of the whole store's traffic, as the report's `traffic_audit` gives it (the
    demo's summary); None without traffic."""
    from copal_tui.metrics.traffic_sections import audit
    from store.report.traffic import report_rows

    rows = report_rows(db, None)
    return None if rows is None else audit(rows)
