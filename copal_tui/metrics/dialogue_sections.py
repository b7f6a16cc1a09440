"""The dialogue-judging sections of the report: `dialogue_judging` (CompliBench metrics per
judge and domain, from `copal_tui.metrics.dialogue`) and `dialogue_error_taxonomy` (humans'
reviews of judge mistakes, counted per judge, domain and error type).

Left out when no dialogue has a judge attempt. Failed attempts go to the report's `exclusions`
with their reason. Dialogues are not tied to worlds: a `--world` filter does not narrow them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from copal_tui.domain.report_rows import DialogueRows
from copal_tui.metrics.dialogue import dialogue_judging
from copal_tui.metrics.dialogue_document import DialogueSections, ErrorTypeCount

if TYPE_CHECKING:
    from copal_tui.metrics.suite_report import Given


def build(given: Given, stored: DialogueRows) -> DialogueSections | None:
    """The dialogue sections (None, leaving them out, without any attempt)."""
    judged = dialogue_judging(stored)
    if not judged.rows and not judged.exclusions:
        return None
    reasons = Counter((e.judge, e.reason or "") for e in judged.exclusions)
    for (judge, reason), count in sorted(reasons.items()):
        given.exclude("dialogue_judging", f"failed attempts of {judge}", reason, count)
    return DialogueSections(
        dialogue_judging=judged.rows,
        dialogue_error_taxonomy=[ErrorTypeCount.model_validate(r, from_attributes=True)
                                 for r in stored.error_types])
