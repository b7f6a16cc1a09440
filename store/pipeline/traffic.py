"""SQL the traffic suite's stages need beyond `store.artifacts.traffic`: which pairs a run of the
automatic labeller covers and which of them a judge has still to label, and what the
de-identification of a probe changed before it was sent to a deployed chatbot.

A run's scope is the pairs whose text is stored (a purged pair is never judged), of the sources
asked (all when none), and with `sampled` only those drawn into some traffic campaign. A pair
is done for a judge once it has a judgment without a failure; a failed one is asked again and
replaced (`store.artifacts.traffic.replace_judgment`). Callers open write transactions with
`store.db.write`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from store.db import Database, dumps

SUITE = "traffic"


@dataclass(frozen=True, slots=True)
class PairToJudge:
    """A stored pair as the labeller sees it; `context` as [(role, content)], oldest first."""

    id: str
    source: str
    world_id: str | None
    context: list[tuple[str, str]]
    query: str
    response: str


def _scope(sources: Sequence[str], sampled: bool) -> tuple[str, list[object]]:
    where = "p.purged_at IS NULL"
    params: list[object] = []
    if sources:
        where += f" AND p.source IN ({','.join('?' * len(sources))})"
        params += list(sources)
    if sampled:
        where += (" AND EXISTS (SELECT 1 FROM campaign_subjects s JOIN campaigns c "
                  "ON c.name = s.campaign WHERE s.subject = p.id AND c.suite = ?)")
        params.append(SUITE)
    return where, params


def count_in_scope(db: Database, *, sources: Sequence[str] = (), sampled: bool = False) -> int:
    """Pairs with text of these sources (all when none), only sampled ones with `sampled`."""
    where, params = _scope(sources, sampled)
    return int(db.execute(f"SELECT COUNT(*) FROM traffic_pairs p WHERE {where}",
                          params).fetchone()[0])


def pairs_to_judge(db: Database, judge: str, *, sources: Sequence[str] = (),
                   sampled: bool = False) -> list[PairToJudge]:
    """The pairs in scope that `judge` has not labelled yet (no judgment, or a failed one),
    by id."""
    where, params = _scope(sources, sampled)
    rows = db.tuples(
        f"SELECT p.id, p.source, p.world_id, p.context, p.query, p.response "
        f"FROM traffic_pairs p WHERE {where} AND NOT EXISTS (SELECT 1 FROM traffic_judgments j "
        f"WHERE j.pair_id = p.id AND j.judge = ? AND j.failure IS NULL) ORDER BY p.id",
        [*params, judge])
    return [PairToJudge(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]),
                        [(str(role), str(text)) for role, text in json.loads(str(r[3] or "[]"))],
                        str(r[4] or ""), str(r[5] or "")) for r in rows]


def set_response_redactions(db: Database, response_id: str,
                            redactions: dict[str, int]) -> None:
    """What de-identification changed in the query sent to a deployed chatbot for this
    response, by type (`{}`: nothing; a response of any other target keeps NULL)."""
    db.execute("UPDATE responses SET redactions = ? WHERE id = ?",
               (dumps(dict(sorted(redactions.items()))), response_id))
