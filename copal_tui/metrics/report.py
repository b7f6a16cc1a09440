"""The report as one document: checks the options, starts the reads of
`store.metrics_sql.BulkReads` and hands their rows to `copal_tui.metrics.sections`.

This module owns the choices that span sections: which judge is primary (default: the
contract-mode judge with the most usable judgments), which is the reference for judge-family
sensitivity (default: the primary), and the scope (worlds). The returned dict holds floats that
may be NaN, each with a sibling `<key>_reason`; `copal_tui.export.jsondoc` turns NaN into null.

It imports no numpy at module level, so that importing it is cheap and the numpy import of
`build_report` overlaps the reads (DESIGN section 7: a full report in under a second).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store import metrics_sql as q
from store.db import Database

REPORT_FORMAT = "copal-report/1"
MODES = ("contract", "full_policy")


class ReportError(Exception):
    """A report option the store cannot satisfy (unknown world or judge)."""


@dataclass(frozen=True)
class ReportOptions:
    worlds: tuple[str, ...] = ()
    judge: str | None = None
    mode: str = "contract"
    reference_judge: str | None = None
    bootstrap: int = 1000
    seed: int = 0


def parse_setting(text: str) -> tuple[str, str | None]:
    """`judge` or `judge@mode` (judge names may contain ':' as in ollama tags, never '@mode')."""
    for mode in MODES:
        if text.endswith(f"@{mode}"):
            return text[: -len(mode) - 1], mode
    return text, None


def pick(settings: Sequence[tuple[str, str, int, int]], judge: str | None,
         mode: str | None, what: str) -> tuple[str, str] | None:
    """The setting named by `judge` (and `mode`), or the one with the most usable judgments."""
    usable = [s for s in settings if s[2] > 0]
    if judge is not None:
        found = [s for s in usable if s[0] == judge and (mode is None or s[1] == mode)]
        if not found:
            known = ", ".join(f"{s[0]}@{s[1]}" for s in usable) or "none"
            raise ReportError(f"no usable judgments by {what} {judge!r}"
                              f"{f' in {mode} mode' if mode else ''} (judge settings: {known})")
    else:
        found = [s for s in usable if mode is None or s[1] == mode] or usable
    if not found:
        return None
    # Most usable judgments first; ties by name so the choice is stable.
    best = sorted(found, key=lambda s: (-s[2], s[0], s[1]))[0]
    return best[0], best[1]


def build_report(db: Database, opts: ReportOptions) -> dict[str, Any]:
    worlds = sorted(set(opts.worlds)) or None
    known = q.known_worlds(db)
    if worlds:
        unknown = sorted(set(worlds) - set(known))
        if unknown:
            raise ReportError(f"unknown world(s): {', '.join(unknown)}")
    reads = q.BulkReads(db, worlds)
    # Imported only now: numpy and the metric modules load while the reads run in threads.
    from copal_tui.metrics import sections

    doc = sections.build(reads, worlds, worlds or known, opts)
    from copal_tui.metrics import pas_sections  # COMPASS keys (issue 7); none without a suite

    pas_sections.add_to_report(db, worlds, doc)
    from copal_tui.metrics import dialogue_sections  # dialogue judging (issue 8); none without

    dialogue_sections.add_to_report(db, doc)
    return doc
