"""The other suites' part of the report: each registered suite with a `Report.build` in its
descriptor (`copal_tui.domain.suites`) gets its sections built from its own read, after the
COPAL sections, and kept in `ReportDocument.suites` when it has any. Adding a suite adds its
sections here without a line of this module changing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from copal_tui.domain.report_rows import ReportReads
from copal_tui.domain.suites import SUITES, load
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_base import SuiteSections
from copal_tui.metrics.frame import Frame
from copal_tui.metrics.pas import Exclude


@dataclass(frozen=True)
class Given:
    """What a suite's builder is given besides its rows: the report with its COPAL sections
    (its scope, error rates and exclusions), the report's reads, the COPAL frame, the worlds
    in scope (None: all) and `exclude`, which records (section, what, reason, count) among the
    report's exclusions."""

    doc: ReportDocument
    reads: ReportReads
    frame: Frame
    worlds: list[str] | None
    exclude: Exclude


class Builder(Protocol):
    """A suite's `Report.build`: its sections from its rows, None when it has none."""

    def __call__(self, given: Given, rows: object, /) -> SuiteSections | None: ...


def add_suites(given: Given) -> dict[str, bool]:
    """Build every other suite's sections into `given.doc.suites`; which suites have
    sections (COPAL always)."""
    present = {}
    for name, spec in SUITES.items():
        if spec.report is None or spec.report.build is None:
            present[name] = spec.report is not None  # COPAL: the report's own fields
            continue
        build: Builder = load(spec.report.build)
        built = build(given, given.reads.suite(name))
        if built is not None:
            given.doc.suites[name] = built
        present[name] = built is not None
    return present
