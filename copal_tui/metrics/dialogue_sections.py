"""The dialogue-judging keys of the report: `dialogue_judging` (CompliBench metrics per
judge and domain, from `copal_tui.metrics.dialogue`) and `dialogue_error_taxonomy` (humans'
reviews of judge mistakes, counted per judge, domain and error type).

Nothing is added when no dialogue has a judge attempt, so a store without dialogues gives the
report it always gave. Failed attempts go to the report's `exclusions` with their reason.
Dialogues are not tied to worlds: a `--world` filter does not narrow these keys.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any

from copal_tui.metrics.dialogue import dialogue_judging
from store.db import Database


def add_to_report(db: Database, doc: dict[str, Any]) -> None:
    judged = dialogue_judging(db)
    if not judged["rows"] and not judged["exclusions"]:
        return
    doc["dialogue_judging"] = judged["rows"]
    reasons = Counter((e["judge"], e["reason"]) for e in judged["exclusions"])
    for (judge, reason), count in sorted(reasons.items()):
        doc["exclusions"].append({"section": "dialogue_judging",
                                  "what": f"failed attempts of {judge}", "reason": reason,
                                  "count": count})
    from store.annotation.dialogue_reviews import error_type_rows

    doc["dialogue_error_taxonomy"] = [asdict(r) for r in error_type_rows(db)]
