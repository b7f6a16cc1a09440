"""SQL of the traffic suite's human labels: every annotator's current label and every current
decision (adjudication) on the stored pairs that still hold their text, as typed rows
(`copal_tui.domain.traffic_rows.Vote`), optionally only on one campaign's pairs or on the pairs
of logs linked to some worlds. The labels are events of the annotation log
(store/annotation/annotations.py, suite "traffic", subject = `traffic_pairs.id`); "current" is
the log's rule (`CURRENT`, `CURRENT_DECISION`). A purged pair is left out, as the report leaves
it out of every figure.

What is made of them (agreement, each pair's reference label) is computed from these rows by
copal_tui.metrics.traffic_agreement.
"""

from __future__ import annotations

from collections.abc import Sequence

from copal_tui.domain.traffic_rows import Vote
from store.annotation.annotations import ADJUDICATOR, CURRENT, CURRENT_DECISION
from store.db import Database

_SQL = f"""
SELECT e.subject, p.source, e.annotator, e.role,
       json_extract(e.payload, '$.category'), json_extract(e.payload, '$.erroneous'),
       COALESCE(json_extract(e.payload, '$.sensitive'), 0)
FROM annotations e JOIN traffic_pairs p ON p.id = e.subject
WHERE e.suite = 'traffic' AND (({CURRENT}) OR ({CURRENT_DECISION})) AND p.purged_at IS NULL
      {{within}}
ORDER BY e.subject, e.role, e.annotator
"""


def votes(db: Database, *, campaign: str | None = None,
          worlds: Sequence[str] = ()) -> list[Vote]:
    """Every current traffic label and decision on a pair with its text, by pair (decisions
    first), then annotator; with `campaign`, on its pairs only; with `worlds`, on the pairs of
    logs linked to them."""
    within = ""
    params: list[str] = []
    if campaign is not None:
        within += " AND e.subject IN (SELECT subject FROM campaign_subjects WHERE campaign = ?)"
        params.append(campaign)
    if worlds:
        within += f" AND p.world_id IN ({','.join('?' * len(worlds))})"
        params += list(worlds)
    return [Vote(pair=str(r[0]), source=str(r[1]), annotator=str(r[2]),
                 category=None if r[4] is None else str(r[4]),
                 erroneous=None if r[5] is None else bool(r[5]), sensitive=bool(r[6]),
                 decision=r[3] == ADJUDICATOR)
            for r in db.tuples(_SQL.format(within=within), params)]
