"""The report as one document: `build_document` checks the options, starts the reads of
`store.report.reads.BulkReads` and hands them to `copal_tui.metrics.assemble`, which
builds the typed `ReportDocument` (`copal_tui.metrics.document`) from every section builder;
`copal_tui.export.jsondoc` writes its JSON (an undefined figure as null with its reason).

The options and the choice of judges are `copal_tui.metrics.options` (re-exported here).

It imports no numpy or pydantic at module level, so that importing it is cheap and the imports
of the metric modules overlap the reads (the target: a full report over 100,000 responses and
300,000 judgments in under a second, see BENCHMARKS.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from copal_tui.metrics.options import (
    MODES,
    REPORT_FORMAT,
    ReportError,
    ReportOptions,
    parse_setting,
    pick,
    why_primary,
)
from store.db import Database
from store.report import reads as q

if TYPE_CHECKING:
    from copal_tui.metrics.document import ReportDocument

__all__ = ["MODES", "REPORT_FORMAT", "ReportError", "ReportOptions", "build_document",
           "parse_setting", "pick", "why_primary"]


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

        return assemble.document(db, reads, worlds, worlds or known, opts)
    finally:
        reads.close()
