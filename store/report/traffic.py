"""The traffic suite's read of `copal report` (its descriptor's `Report.read`): the stored pairs
by source, the current human labels and adjudications, the automatic labeller's predictions
(row by row on the labelled pairs, counted over the whole log), what de-identification
removed, and for Table 12 the targets answered over HTTP with their worlds' sizes. Typed as
`copal_tui.domain.traffic_rows.TrafficRows`; the figures are `copal_tui.metrics.traffic_sections`'.
"""

from __future__ import annotations

import json

from copal_tui.domain.traffic_rows import PredictedCount, Prediction, TrafficRows
from store.annotation import traffic_labels
from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.artifacts.traffic import redaction_counts
from store.db import Database
from store.report.scope import all_rows, world_scope

# The responses of deployed chatbots: an http target's response records what de-identification
# changed in its probe (an empty object when nothing), any other target's leaves it NULL.
_DEPLOYED = "redactions IS NOT NULL"
# The pairs a current label or decision flags as still holding sensitive content: left out of
# every figure.
_FLAGGED = ("SELECT e.subject FROM annotations e WHERE e.suite = 'traffic' "
            f"AND (({CURRENT}) OR ({CURRENT_DECISION})) "
            "AND json_extract(e.payload, '$.sensitive') = 1")
# A prediction the figures count (alias `j`): a call that answered with a category and a
# verdict, on a pair nobody flagged as sensitive.
USABLE = ("j.failure IS NULL AND j.category IS NOT NULL AND j.erroneous IS NOT NULL "
          f"AND j.pair_id NOT IN ({_FLAGGED})")


def report_rows(db: Database, worlds: list[str] | None) -> TrafficRows | None:
    """The traffic report's rows; None when no pair is in scope and no deployment was probed."""
    where, params = world_scope(worlds, "p.world_id")
    pairs = {str(s): int(n) for s, n in all_rows(
        db, f"SELECT p.source, COUNT(*) FROM traffic_pairs p WHERE p.purged_at IS NULL{where} "
            "GROUP BY p.source ORDER BY p.source", params)}
    purged = int(db.execute(f"SELECT COUNT(*) FROM traffic_pairs p WHERE p.purged_at IS NOT "
                            f"NULL{where}", params).fetchone()[0])
    deployments = [str(r[0]) for r in all_rows(
        db, f"SELECT DISTINCT CASE WHEN variant = 'base' THEN model ELSE model || '#' || variant "
            f"END FROM responses WHERE {_DEPLOYED} ORDER BY 1")]
    if not pairs and not purged and not deployments:
        return None
    votes = traffic_labels.votes(db, worlds=worlds or ())
    predictions = [Prediction(str(j), str(pid), str(src), str(c), bool(e))
                   for j, pid, src, c, e in all_rows(
                       db,
                       "SELECT j.judge, j.pair_id, p.source, j.category, j.erroneous "
                       "FROM traffic_judgments j JOIN traffic_pairs p ON p.id = j.pair_id "
                       f"WHERE {USABLE} AND p.purged_at IS NULL{where} AND j.pair_id IN "
                       "(SELECT subject FROM annotations WHERE suite = 'traffic') "
                       "ORDER BY j.judge, j.pair_id", params)]
    predicted = [PredictedCount(str(j), str(src), str(c), bool(e), int(n))
                 for j, src, c, e, n in all_rows(
                     db,
                     "SELECT j.judge, p.source, j.category, j.erroneous, COUNT(*) "
                     "FROM traffic_judgments j JOIN traffic_pairs p ON p.id = j.pair_id "
                     f"WHERE {USABLE} AND p.purged_at IS NULL{where} "
                     "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4", params)]
    flagged = int(db.execute(f"SELECT COUNT(*) FROM traffic_pairs p WHERE p.purged_at IS NULL "
                             f"AND p.id IN ({_FLAGGED}){where}", params).fetchone()[0])
    failed = {str(j): int(n) for j, n in all_rows(
        db, "SELECT j.judge, COUNT(*) FROM traffic_judgments j JOIN traffic_pairs p "
            f"ON p.id = j.pair_id WHERE NOT ({USABLE}) AND p.purged_at IS NULL "
            f"AND j.pair_id NOT IN ({_FLAGGED}){where} "
            "GROUP BY 1 ORDER BY 1", params)}
    return TrafficRows(pairs=pairs, purged=purged, flagged=flagged, votes=votes,
                       predictions=predictions, predicted=predicted, failed=failed,
                       redactions=_redactions(db, worlds) if worlds else redaction_counts(db),
                       deployments=deployments, world_sizes=_world_sizes(db, worlds))


def _redactions(db: Database, worlds: list[str]) -> dict[str, dict[str, int]]:
    """What de-identification removed, by source and type, over the imports linked to
    `worlds`."""
    where, params = world_scope(worlds, "world_id")
    out: dict[str, dict[str, int]] = {}
    for source, redactions in all_rows(db, f"SELECT source, redactions FROM traffic_imports "
                                           f"WHERE 1 = 1{where}", params):
        mine = out.setdefault(str(source), {})
        for kind, n in json.loads(str(redactions or "{}")).items():
            mine[kind] = mine.get(kind, 0) + int(n)
    return {s: dict(sorted(c.items())) for s, c in sorted(out.items())}


def _world_sizes(db: Database, worlds: list[str] | None) -> dict[str, tuple[int, int]]:
    """Each world's clauses and confirmed compositions."""
    where, params = world_scope(worlds, "w.id")
    return {str(w): (int(c), int(k)) for w, c, k in all_rows(
        db,
        "SELECT w.id, (SELECT COUNT(*) FROM clauses c WHERE c.world_id = w.id), "
        "(SELECT COUNT(*) FROM compositions k WHERE k.world_id = w.id "
        f"AND k.status = 'confirmed') FROM worlds w WHERE 1 = 1{where} ORDER BY w.id",
        params)}
