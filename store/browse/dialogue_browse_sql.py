"""SQL for browsing judged dialogues (migration m006_dialogues): the paged, filterable list of
dialogues, one dialogue's turns with the selected judge attempt's prediction on each, and the
per-turn verdict on that prediction (`KIND`) that the review queue (store/annotation/dialogue_reviews.py)
walks as well.

The verdict is the dialogue-judging metrics' own rule (copal_tui/domain/dialogue.py's
`turn_kind`, the rule `score_files` counts), not a restatement: `prepare` registers
`sql_turn_kind` as the SQL function `copal_dialogue_kind`, which reads the stored columns into
the domain's types and asks the domain for the kind (its names, MISTAKES among them, are the
domain's too). Every assistant turn tagged with a category and key is scored (`judged`); failed
attempts are not scored; a judge is binary (verdicts only, its guidelines never compared) when
every scored attempt of it is.

Lists follow store/browse/browse_sql.py: one page of keys, aggregates for that page only, user input
only ever as parameters.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from typing import Any

from copal_tui.domain.dialogue import (
    MISTAKES,
    Guideline,
    TurnPrediction,
    TurnTruth,
    turn_kind,
)
from store.browse.browse_sql import (
    Filter,
    Page,
    PageRequest,
    _flag,
    _page,
    _prefix,
    _where,
    like_escape,
)
from store.db import Database


def _guideline(category: Any, key: Any, phase: Any) -> Guideline:
    try:
        return Guideline.of(category, key, phase)
    except ValueError:  # a stored value the domain would not accept: compared as stored
        return Guideline(category, None if key is None else str(key), phase)


@lru_cache(maxsize=65536)
def sql_turn_kind(violation: Any, category: Any, key: Any, phase: Any, predicted: Any,
                  p_violation: Any, p_category: Any, p_key: Any, p_phase: Any,
                  binary: Any) -> str:
    """The kind of one judge attempt's prediction on one scored turn (`predicted` false: it
    gave none), from the stored columns: the domain's `turn_kind`. A prediction naming no
    category and no key names no guideline. Cached: the same few guidelines recur on every
    dialogue."""
    truth = TurnTruth(0, _guideline(category, key, phase), bool(violation))
    pred = None if not predicted else TurnPrediction(
        0, None if p_category is None and p_key is None else _guideline(p_category, p_key,
                                                                       p_phase),
        bool(p_violation))
    return turn_kind(truth, pred, binary=bool(binary))


def prepare(db: Database) -> None:
    """Register `copal_dialogue_kind` (`sql_turn_kind`) on the connection; every read that
    uses KIND or IS_MISTAKE calls this first."""
    conn: sqlite3.Connection = db.conn
    conn.create_function("copal_dialogue_kind", 10, sql_turn_kind, deterministic=True)


# Per judge, whether it is binary: no scored attempt of it names guidelines. The distinct
# judges come from a skip-scan of idx_dialogue_attempts_judge (one probe per judge, not a pass
# over every attempt); the NOT EXISTS stops at the judge's first attempt with guidelines.
_BINARY = (
    "(WITH RECURSIVE j(judge) AS (SELECT MIN(judge) FROM dialogue_attempts UNION ALL "
    "SELECT (SELECT MIN(x.judge) FROM dialogue_attempts x WHERE x.judge > j.judge) FROM j "
    "WHERE j.judge IS NOT NULL) "
    "SELECT judge AS bj_judge, NOT EXISTS (SELECT 1 FROM dialogue_attempts b "
    "WHERE b.judge = j.judge AND b.binary_verdicts = 0 AND b.failure IS NULL) AS binary_judge "
    "FROM j WHERE judge IS NOT NULL) bj"
)


def judged(lead: str = "") -> str:
    """FROM and WHERE over every scored assistant turn of every scored attempt: `a` attempts,
    `t` truth turns, `p` the prediction or NULLs, `bj.binary_judge`; callers append `AND ...`.

    CROSS JOIN fixes the loop order, attempts (walked on their primary key: dialogue, judge,
    attempt) then their turns (turn order), so `ORDER BY a.dialogue_id, a.judge, a.attempt,
    t.turn_index ... LIMIT 1` stops at the first match instead of judging every turn and
    sorting. `lead` puts other tables first (`annotations e CROSS JOIN `) when the
    caller starts from a few known keys."""
    return (
        f"FROM {lead}dialogue_attempts a CROSS JOIN dialogue_turns t "
        "LEFT JOIN dialogue_predictions p ON p.dialogue_id = a.dialogue_id "
        "  AND p.judge = a.judge AND p.attempt = a.attempt AND p.turn_index = t.turn_index "
        f"CROSS JOIN {_BINARY} "
        "WHERE bj.bj_judge = a.judge AND t.dialogue_id = a.dialogue_id "
        "AND t.role = 'assistant' AND a.failure IS NULL "
        "AND t.category IS NOT NULL AND t.key IS NOT NULL AND t.key <> ''"
    )


JUDGED = judged()
KIND = ("copal_dialogue_kind(t.violation, t.category, t.key, t.phase, "
        "p.turn_index IS NOT NULL, p.violation, p.category, p.key, p.phase, bj.binary_judge)")
IS_MISTAKE = f"({KIND}) IN ({', '.join(repr(k) for k in MISTAKES)})"


# ------------------------------------------------------------------ the list


def _judged_mistake(alias: str) -> str:
    return (f"EXISTS (SELECT 1 {JUDGED} AND a.dialogue_id = {alias}.id AND {IS_MISTAKE})")


DIALOGUE_FILTERS: dict[str, Filter] = {
    "domain": _prefix("domain"),
    "judge": ("EXISTS (SELECT 1 FROM dialogue_attempts x WHERE x.dialogue_id = dialogues.id "
              "AND x.judge LIKE ? ESCAPE '\\')",
              lambda v: like_escape(v) + "%"),
    "violation": ("EXISTS (SELECT 1 FROM dialogue_turns x WHERE x.dialogue_id = dialogues.id "
                  "AND x.violation = 1) = ?", _flag),
    "variant": ("(variant_of IS NOT NULL) = ?", _flag),
    "wrong": (f"{_judged_mistake('dialogues')} = ?", _flag),
}
# Free words match the id, domain, the dialogue it is a variant of, and any turn's text.
SEARCH = ["id", "domain", "COALESCE(variant_of, '')",
          "(SELECT group_concat(x.content, ' ') FROM dialogue_turns x "
          " WHERE x.dialogue_id = dialogues.id)"]


def dialogues_page(db: Database, req: PageRequest) -> Page:
    """Dialogues by id with their turn, violation, judge and attempt counts."""
    prepare(db)
    return _page(
        db, req, table="dialogues", keys="id AS _ord, id, domain, variant_of", order="id",
        where=_where(req, SEARCH, DIALOGUE_FILTERS),
        outer=(
            "SELECT p.*, "
            "(SELECT COUNT(*) FROM dialogue_turns t WHERE t.dialogue_id = p.id) AS turns, "
            "(SELECT COUNT(*) FROM dialogue_turns t WHERE t.dialogue_id = p.id "
            " AND t.violation = 1) AS violations, "
            "(SELECT COUNT(DISTINCT judge) FROM dialogue_attempts a WHERE a.dialogue_id = p.id)"
            " AS judges, "
            "(SELECT COUNT(*) FROM dialogue_attempts a WHERE a.dialogue_id = p.id) AS attempts"
        ),
    )


def wrong_counts(db: Database, dialogue_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per dialogue: `wrong`, the wrong predictions over every judge and attempt (a second
    pass over the shown page: PagedTable's `decorate`)."""
    prepare(db)
    out: dict[str, dict[str, Any]] = {d: {"wrong": 0} for d in dialogue_ids}
    if not dialogue_ids:
        return out
    marks = ",".join("?" * len(dialogue_ids))
    for did, n in db.execute(
            f"SELECT a.dialogue_id, COUNT(*) {JUDGED} AND a.dialogue_id IN ({marks}) "
            f"AND {IS_MISTAKE} GROUP BY a.dialogue_id", dialogue_ids):
        out[did] = {"wrong": int(n)}
    return out


# ------------------------------------------------------------------ one dialogue


def judge_attempts(db: Database, dialogue_id: str) -> list[dict[str, Any]]:
    """The dialogue's judge attempts by judge and attempt (failed ones too, with `failure`)."""
    return [dict(r) for r in db.execute(
        "SELECT judge, attempt, binary_verdicts, source, failure FROM dialogue_attempts "
        "WHERE dialogue_id = ? ORDER BY judge, attempt", (dialogue_id,))]


def turn_verdicts(db: Database, dialogue_id: str, judge: str,
                  attempt: int) -> dict[int, dict[str, Any]]:
    """turn index -> the attempt's prediction on that assistant turn (`p_*` columns, NULL when
    it gave none) and its `kind` ('right', 'flagged_elsewhere' or one of MISTAKES); turns the
    metrics do not score (Category 1, a failed attempt) are absent."""
    prepare(db)
    return {r["turn_index"]: dict(r) for r in db.execute(
        f"SELECT t.turn_index, {KIND} AS kind {JUDGED} AND a.dialogue_id = ? AND a.judge = ? "
        "AND a.attempt = ?", (dialogue_id, judge, attempt))}


def predictions_of(db: Database, dialogue_id: str, judge: str,
                   attempt: int) -> dict[int, dict[str, Any]]:
    """turn index -> the attempt's prediction (every turn it named, scored or not)."""
    return {r["turn_index"]: dict(r) for r in db.execute(
        "SELECT turn_index, category, key, phase, violation, reason FROM dialogue_predictions "
        "WHERE dialogue_id = ? AND judge = ? AND attempt = ?", (dialogue_id, judge, attempt))}
