"""SQL for adjudication: the candidates (responses where annotators disagree, or where a judge
disagrees with the annotators), the current decision on a response, and decisions and their
undo as appended `adjudications` rows (m003 added the `action` column and made
`current_adjudications` skip a retracted decision).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.db import Database, dumps, loads, utcnow

# Responses needing a human reference: annotators disagree on the error or on any item mark,
# or a judge's error differs from the annotators' (agreed) error. Marks are compared as sorted
# sets. One grouped query straight over label_events in response-id order (the
# (response_id, annotator, id) index), so the next candidate after an id is found by reading up
# to it, not by grouping every label first. SQLite forbids an outer aggregate inside a
# correlated subquery, hence the judge test per label row, aggregated with MAX.
_MARKS = ("(SELECT COALESCE(group_concat(value, ','), '') FROM "
          "(SELECT value FROM json_each(e.observed) ORDER BY value))")
_CANDIDATES = f"""
SELECT e.response_id,
       CASE WHEN MIN(e.error) != MAX(e.error) THEN 'annotators differ on error'
            WHEN COUNT(DISTINCT {_MARKS}) > 1 THEN 'annotators differ on items'
            ELSE 'judge differs from annotators' END AS reason,
       EXISTS (SELECT 1 FROM adjudications a WHERE a.response_id = e.response_id
               AND a.action = 'decide' AND NOT EXISTS (SELECT 1 FROM adjudications b
               WHERE b.response_id = a.response_id AND b.id > a.id)) AS decided,
       (SELECT r.model || ' ' || i.world_id || ' ' || COALESCE(i.pattern, '')
        FROM responses r JOIN items i ON i.id = r.item_id WHERE r.id = e.response_id) AS meta
FROM label_events e
WHERE {{range}} AND +e.action = 'label' AND NOT EXISTS (
    SELECT 1 FROM label_events u WHERE u.response_id = e.response_id
    AND u.annotator = e.annotator AND +u.action IN ('label', 'undo') AND u.id > e.id)
GROUP BY e.response_id
HAVING (MIN(e.error) != MAX(e.error) OR COUNT(DISTINCT {_MARKS}) > 1
        OR MAX(COALESCE((SELECT MAX(j.error != e.error) FROM judgments j
                         WHERE j.response_id = e.response_id AND j.error IS NOT NULL), 0)) = 1)
   AND (:search = '' OR e.response_id LIKE :like OR meta LIKE :like OR reason LIKE :like)
   {{extra}}
"""


def _candidates(range_sql: str, extra: str = "") -> str:
    return _CANDIDATES.format(range=range_sql, extra=extra)


def _search(search: str) -> dict[str, str]:
    s = search.strip()
    return {"search": s, "like": f"%{s}%"}


def adjudication_step(db: Database, *, after: str, forward: bool = True, pending: bool,
                      search: str = "", who: str = "", now: str = "") -> dict[str, Any] | None:
    """The next (or previous) candidate after response id `after`; `pending` skips decided ones
    and ones another adjudicator holds a live lease on. `search` matches id, model, world,
    pattern or reason."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    extra = ""
    if pending:
        extra = ("AND NOT decided AND NOT EXISTS (SELECT 1 FROM queue_leases k WHERE "
                 "k.queue = 'adjudicate' AND k.response_id = e.response_id "
                 "AND k.annotator != :who AND k.expires_at > :now)")
    row = db.execute(
        _candidates(f"e.response_id {op} :after", extra) +
        f" ORDER BY e.response_id {order} LIMIT 1",
        {**_search(search), "after": after, "who": who, "now": now}).fetchone()
    return None if row is None else dict(row)


def adjudication_counts(db: Database, search: str = "") -> dict[str, int]:
    """Candidates and how many are decided (reads every label: call it from a worker)."""
    row = db.execute(f"SELECT COUNT(*), COALESCE(SUM(decided), 0) FROM ({_candidates('1')})",
                     _search(search)).fetchone()
    return {"total": int(row[0]), "decided": int(row[1])}


def adjudication_reason(db: Database, response_id: str) -> str | None:
    row = db.execute(_candidates("e.response_id = :rid"),
                     {**_search(""), "rid": response_id}).fetchone()
    return None if row is None else str(row["reason"])


def current_adjudication(db: Database, response_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT * FROM current_adjudications WHERE response_id = ?",
                     (response_id,)).fetchone()
    return None if row is None else {**dict(row), "observed": loads(row["observed"])}


def latest_adjudication_by(db: Database, who: str) -> dict[str, Any] | None:
    """`who`'s most recent decision that is still the current one (what undo retracts)."""
    row = db.execute("SELECT * FROM current_adjudications WHERE adjudicator = ? "
                     "ORDER BY id DESC LIMIT 1", (who,)).fetchone()
    return None if row is None else {**dict(row), "observed": loads(row["observed"])}


def append_adjudication(db: Database, *, response_id: str, adjudicator: str, action: str,
                        observed: Sequence[str] | None = None, error: int | None = None,
                        direction: str | None = None, note: str | None = None,
                        content_sha256: str | None = None) -> int:
    cur = db.execute(
        "INSERT INTO adjudications (response_id, adjudicator, action, observed, error, "
        "direction, note, content_sha256, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (response_id, adjudicator, action, None if observed is None else dumps(list(observed)),
         error, direction, note, content_sha256, utcnow()))
    return int(cur.lastrowid or 0)
