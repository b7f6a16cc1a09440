"""The report's options and the choices that span its sections: which judge is primary
(default: the contract-mode judge with the most usable judgments, a real model preferred over
the offline engine's heuristic judge; the report says which was taken and why) and which is
the reference for judge-family sensitivity (default: the primary).

Plain Python (no numpy, no pydantic), so that the report's service
(`copal_tui.services.report`), the commands and the dashboard stay cheap to import with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

REPORT_FORMAT = "copal-report/5"
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
    # Most usable judgments first; ties by name so the choice is stable.
    best = min(found, key=lambda s: (-s[2], s[0], s[1]), default=None)
    return None if best is None else (best[0], best[1])


def why_primary(settings: Sequence[tuple[str, str, int, int]], chosen: tuple[str, str] | None,
                opts: ReportOptions) -> str:
    """In words, why the primary judge is the one it is."""
    if chosen is None:
        return "no usable judgments"
    if opts.judge is not None:
        return "named with --judge"
    if chosen[0].startswith("offline/"):
        return (f"no language-model judge in {chosen[1]} mode: the offline heuristic judge "
                "with the most usable judgments")
    if any(s[2] > 0 and s[1] == chosen[1] and s[0].startswith("offline/") for s in settings):
        return (f"the language-model judge in {chosen[1]} mode with the most usable judgments "
                "(preferred over the offline heuristic judge)")
    return f"the judge in {chosen[1]} mode with the most usable judgments"
