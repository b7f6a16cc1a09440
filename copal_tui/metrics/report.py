"""The report as one document: checks the options, starts the reads of
`store.report.metrics_sql.BulkReads` and hands their rows to `copal_tui.metrics.sections`.

This module owns the choices that span sections: which judge is primary (default: the
contract-mode judge with the most usable judgments, a real model preferred over the offline
engine's heuristic judge; the report says which was taken and why), which is the reference for
judge-family sensitivity (default: the primary), the scope (worlds) and the provenance of the
figures (`copal_tui.metrics.provenance`). The returned dict holds floats that
may be NaN, each with a sibling `<key>_reason`; `copal_tui.metrics.document.build_document` gives
the same report as a typed model (`ReportDocument`), from which `copal_tui.export.jsondoc`
writes the JSON (NaN as null).

It imports no numpy at module level, so that importing it is cheap and the numpy import of
`build_report` overlaps the reads (the target: a full report over 100,000 responses and
300,000 judgments in under a second, see BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store.db import Database
from store.report import metrics_sql as q

REPORT_FORMAT = "copal-report/3"
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
    """The setting named by `judge` (and `mode`), or the one with the most usable judgments
    (a non-offline judge first)."""
    usable = [s for s in settings if s[2] > 0]
    if judge is not None:
        found = [s for s in usable if s[0] == judge and (mode is None or s[1] == mode)]
        if not found:
            known = ", ".join(f"{s[0]}@{s[1]}" for s in usable) or "none"
            raise ReportError(f"no usable judgments by {what} {judge!r}"
                              f"{f' in {mode} mode' if mode else ''} (judge settings: {known})")
    else:
        found = [s for s in usable if mode is None or s[1] == mode] or usable
        # A language-model judge over the offline engine's heuristic one, whatever the counts.
        found = [s for s in found if not s[0].startswith("offline/")] or found
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

    try:
        doc, frame = sections.build_with_frame(reads, worlds, worlds or known, opts)
        from copal_tui.metrics import pas_sections  # COMPASS keys; none without a suite

        pas_sections.add_to_report(db, worlds, doc)
        from copal_tui.metrics import dialogue_sections  # dialogue judging; none without

        dialogue_sections.add_to_report(db, doc)
        from copal_tui.metrics.facets import observed_facets_section  # target x observed

        chosen = doc["scope"].get("primary_judge")
        doc["observed_facets"] = observed_facets_section(
            db, worlds, None if chosen is None else (chosen["judge"], chosen["mode"]),
            reads, frame)
        _provenance(reads, doc)
    finally:
        reads.close()
    return doc


def why_primary(settings: Sequence[tuple[str, str, int, int]], chosen: tuple[str, str] | None,
                opts: ReportOptions) -> str:
    """In words, why the primary judge is the one it is."""
    if chosen is None:
        return "no usable judgments"
    if opts.judge is not None:
        return "named with --judge"
    usable = [s for s in settings if s[2] > 0 and s[1] == chosen[1]]
    real = [s for s in usable if not s[0].startswith("offline/")]
    if chosen[0].startswith("offline/"):
        return (f"no language-model judge in {chosen[1]} mode: the offline heuristic judge "
                "with the most usable judgments")
    if len(real) < len(usable):
        return (f"the language-model judge in {chosen[1]} mode with the most usable judgments "
                "(preferred over the offline heuristic judge)")
    return f"the judge in {chosen[1]} mode with the most usable judgments"


def _provenance(reads: q.BulkReads, doc: dict[str, Any]) -> None:
    from copal_tui.metrics import provenance

    primary = (doc["scope"].get("primary_judge") or {}).get("judge")
    prefilters, imported = reads["provenance_extras"]
    used = reads["provenance_runs"]
    found = provenance.build(used, prefilters, imported, primary)
    present = {"copal": True, "compass": "pas" in doc, "dialogue": "dialogue_judging" in doc}
    present["dialogues"] = present.pop("dialogue")
    doc["scope"]["provenance"] = {k: v for k, v in found.items() if present[k]}
    doc["structured_outputs"] = provenance.output_counts(used)
