"""SQL for adjudication: the candidates (responses where annotators disagree, or where a judge
disagrees with the annotators) and why each is one. Decisions and their undo are events of the
annotation log (store/annotation/annotations.py, suite "copal", role "adjudicator"); a subject's current
decision is `annotations.decision`.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.annotation.annotations import ADJUDICATOR, CURRENT, current_sql
from store.db import Database

# Responses needing a human reference: annotators disagree on the error or on any item mark,
# or a judge's error differs from the annotators' (agreed) error. Marks are compared as sorted
# sets. One grouped query straight over the log in subject order (the (suite, subject, role,
# annotator, id) index), so the next candidate after an id is found by reading up to it, not
# by grouping every label first. SQLite forbids an outer aggregate inside a correlated
# subquery, hence the judge test per label row, aggregated with MAX.
_ERROR = "json_extract(e.payload, '$.error')"
_MARKS = ("(SELECT COALESCE(group_concat(value, ','), '') FROM "
          "(SELECT value FROM json_each(e.payload, '$.observed') ORDER BY value))")
_CANDIDATES = f"""
SELECT e.subject AS response_id,
       CASE WHEN MIN({_ERROR}) != MAX({_ERROR}) THEN 'annotators differ on error'
            WHEN COUNT(DISTINCT {_MARKS}) > 1 THEN 'annotators differ on items'
            ELSE 'judge differs from annotators' END AS reason,
       EXISTS (SELECT 1 FROM annotations d WHERE d.suite = 'copal' AND d.subject = e.subject
               AND {current_sql("d", ADJUDICATOR)}) AS decided,
       (SELECT r.model || ' ' || i.world_id || ' ' || COALESCE(i.pattern, '')
        FROM responses r JOIN items i ON i.id = r.item_id WHERE r.id = e.subject) AS meta
FROM annotations e
WHERE e.suite = 'copal' AND {{range}} AND {CURRENT}
GROUP BY e.subject
HAVING (MIN({_ERROR}) != MAX({_ERROR}) OR COUNT(DISTINCT {_MARKS}) > 1
        OR MAX(COALESCE((SELECT MAX(j.error != {_ERROR}) FROM judgments j
                         WHERE j.response_id = e.subject AND j.error IS NOT NULL), 0)) = 1)
   AND (:search = '' OR e.subject LIKE :like OR meta LIKE :like OR reason LIKE :like)
   {{extra}}
"""


@dataclass(frozen=True)
class Candidate:
    """A response that needs a human reference, and why."""

    response_id: str
    reason: str
    decided: bool


@dataclass(frozen=True)
class Counts:
    total: int = 0
    decided: int = 0


def _candidates(range_sql: str, extra: str = "") -> str:
    return _CANDIDATES.format(range=range_sql, extra=extra)


def _search(search: str) -> dict[str, str]:
    s = search.strip()
    return {"search": s, "like": f"%{s}%"}


def adjudication_step(db: Database, *, after: str, forward: bool = True, pending: bool,
                      search: str = "", who: str = "", now: str = "") -> Candidate | None:
    """The next (or previous) candidate after response id `after`; `pending` skips decided ones
    and ones another adjudicator holds a live lease on. `search` matches id, model, world,
    pattern or reason."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    extra = ""
    if pending:
        extra = ("AND NOT decided AND NOT EXISTS (SELECT 1 FROM annotation_leases k WHERE "
                 "k.suite = 'copal' AND k.subject = e.subject AND k.role = 'adjudicator' "
                 "AND k.annotator != :who AND k.expires_at > :now)")
    row = db.execute(
        _candidates(f"e.subject {op} :after", extra) +
        f" ORDER BY e.subject {order} LIMIT 1",
        {**_search(search), "after": after, "who": who, "now": now}).fetchone()
    return None if row is None else Candidate(str(row["response_id"]), str(row["reason"]),
                                              bool(row["decided"]))


def adjudication_counts(db: Database, search: str = "") -> Counts:
    """Candidates and how many are decided (reads every label: call it from a worker)."""
    row = db.execute(f"SELECT COUNT(*), COALESCE(SUM(decided), 0) FROM ({_candidates('1')})",
                     _search(search)).fetchone()
    return Counts(int(row[0]), int(row[1]))


def adjudication_reason(db: Database, response_id: str) -> str | None:
    row = db.execute(_candidates("e.subject = :rid"),
                     {**_search(""), "rid": response_id}).fetchone()
    return None if row is None else str(row["reason"])
