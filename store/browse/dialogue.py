"""SQL for browsing judged dialogues (migration m006_dialogues): the paged, filterable list of
dialogues, one dialogue's turns with the selected judge attempt's prediction on each, and the
per-turn verdict on that prediction (`KIND`) that the review queue (store/annotation/dialogue_reviews.py)
walks as well.

The verdict is the dialogue-judging metrics' own rule (copal_tui/domain/dialogue.py's
`turn_kind`, the rule `score_files` counts), not a restatement: `prepare` registers
`sql_turn_kind` as the SQL function `copal_dialogue_kind`, which reads the stored columns into
the domain's types and asks the domain for the kind (its names, MISTAKES among them, are the
domain's too). Which rows are judged is the domain's as well: `copal_scored_turn` asks
`is_scored_turn` (an assistant turn tagged with a category and a non-empty key),
`copal_scored_attempt` asks `scored_attempt` (failed attempts are not scored), and
`copal_judge_binary` asks `judge_is_binary` about one attempt alone (a judge is binary when
none of its attempts says otherwise: the rule is a conjunction over attempts).

Lists follow store/browse/lists.py: one page of keys, aggregates for that page only, user input
only ever as parameters.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from copal_tui.domain.dialogue import (
    MISTAKES,
    Guideline,
    TurnPrediction,
    TurnTruth,
    is_scored_turn,
    judge_is_binary,
    scored_attempt,
    turn_kind,
)
from store.artifacts.dialogue import StoredPrediction
from store.browse.lists import (
    Filter,
    Page,
    PageRequest,
    flag_value,
    like_escape,
    prefix_filter,
    read_page,
    where_clause,
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


@lru_cache(maxsize=4096)
def sql_scored_turn(role: Any, category: Any, key: Any) -> int:
    """1 when the metrics score the turn (the domain's `is_scored_turn`). Cached: a handful of
    (role, category, key) values recur on every dialogue."""
    return int(is_scored_turn(str(role), _guideline(category, key, None)))


def sql_scored_attempt(failure: Any) -> int:
    """1 when the judge attempt is scored (the domain's `scored_attempt`)."""
    return int(scored_attempt(None if failure is None else str(failure)))


def sql_judge_binary(binary_verdicts: Any, failure: Any) -> int:
    """1 when this attempt alone leaves its judge binary (the domain's `judge_is_binary` over
    it): a judge is binary when every attempt of it does."""
    return int(judge_is_binary([(bool(binary_verdicts),
                                 None if failure is None else str(failure))]))


def prepare(db: Database) -> None:
    """Register the domain's rules on the connection (`copal_dialogue_kind`,
    `copal_scored_turn`, `copal_scored_attempt`, `copal_judge_binary`); every read that uses
    JUDGED, KIND or IS_MISTAKE calls this first."""
    conn: sqlite3.Connection = db.conn
    conn.create_function("copal_dialogue_kind", 10, sql_turn_kind, deterministic=True)
    conn.create_function("copal_scored_turn", 3, sql_scored_turn, deterministic=True)
    conn.create_function("copal_scored_attempt", 1, sql_scored_attempt, deterministic=True)
    conn.create_function("copal_judge_binary", 2, sql_judge_binary, deterministic=True)


# Per judge, whether it is binary. The distinct judges come from a skip-scan of
# idx_dialogue_attempts_judge (one probe per judge, not a pass over every attempt); the NOT
# EXISTS stops at the judge's first attempt the domain says is not binary. DISTINCT keeps the
# subquery from being flattened into the join: it is materialized, each judge's rule asked
# once per statement instead of once per judged row (a binary judge's rule reads all of its
# attempts).
_BINARY = (
    "(WITH RECURSIVE j(judge) AS (SELECT MIN(judge) FROM dialogue_attempts UNION ALL "
    "SELECT (SELECT MIN(x.judge) FROM dialogue_attempts x WHERE x.judge > j.judge) FROM j "
    "WHERE j.judge IS NOT NULL) "
    "SELECT DISTINCT judge AS bj_judge, NOT EXISTS (SELECT 1 FROM dialogue_attempts b "
    "WHERE b.judge = j.judge AND NOT copal_judge_binary(b.binary_verdicts, b.failure)) "
    "AS binary_judge FROM j WHERE judge IS NOT NULL) bj"
)


def judged(lead: str = "") -> str:
    """FROM and WHERE over every scored turn of every scored attempt: `a` attempts, `t` truth
    turns, `p` the prediction or NULLs, `bj.binary_judge`; callers append `AND ...`.

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
        "AND copal_scored_attempt(a.failure) AND copal_scored_turn(t.role, t.category, t.key)"
    )


JUDGED = judged()
KIND = ("copal_dialogue_kind(t.violation, t.category, t.key, t.phase, "
        "p.turn_index IS NOT NULL, p.violation, p.category, p.key, p.phase, bj.binary_judge)")
IS_MISTAKE = f"({KIND}) IN ({', '.join(repr(k) for k in MISTAKES)})"


# ------------------------------------------------------------------ the list


def _judged_mistake(alias: str) -> str:
    return (f"EXISTS (SELECT 1 {JUDGED} AND a.dialogue_id = {alias}.id AND {IS_MISTAKE})")


DIALOGUE_FILTERS: dict[str, Filter] = {
    "domain": prefix_filter("domain"),
    "judge": ("EXISTS (SELECT 1 FROM dialogue_attempts x WHERE x.dialogue_id = dialogues.id "
              "AND x.judge LIKE ? ESCAPE '\\')",
              lambda v: like_escape(v) + "%"),
    "violation": ("EXISTS (SELECT 1 FROM dialogue_turns x WHERE x.dialogue_id = dialogues.id "
                  "AND x.violation = 1) = ?", flag_value),
    "variant": ("(variant_of IS NOT NULL) = ?", flag_value),
    "wrong": (f"{_judged_mistake('dialogues')} = ?", flag_value),
}
# Free words match the id, domain, the dialogue it is a variant of, and any turn's text.
SEARCH = ["id", "domain", "COALESCE(variant_of, '')",
          "(SELECT group_concat(x.content, ' ') FROM dialogue_turns x "
          " WHERE x.dialogue_id = dialogues.id)"]


def dialogues_page(db: Database, req: PageRequest) -> Page:
    """Dialogues by id with their turn, violation, judge and attempt counts."""
    prepare(db)
    return read_page(
        db, req, table="dialogues", keys="id AS _ord, id, domain, variant_of", order="id",
        where=where_clause(req, SEARCH, DIALOGUE_FILTERS),
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


def wrong_counts(db: Database, dialogue_ids: list[str]) -> dict[str, int]:
    """Per dialogue: its wrong predictions over every judge and attempt (a second pass over
    the shown page: PagedTable's `decorate`)."""
    prepare(db)
    out = dict.fromkeys(dialogue_ids, 0)
    if not dialogue_ids:
        return out
    marks = ",".join("?" * len(dialogue_ids))
    for did, n in db.execute(
            f"SELECT a.dialogue_id, COUNT(*) {JUDGED} AND a.dialogue_id IN ({marks}) "
            f"AND {IS_MISTAKE} GROUP BY a.dialogue_id", dialogue_ids):
        out[did] = int(n)
    return out


# ------------------------------------------------------------------ one dialogue


@dataclass(frozen=True, slots=True)
class JudgeAttempt:
    """One judge attempt on a dialogue: whether it gave verdicts only (`binary`), where it
    came from (`source`: import or run) and its failure if it failed."""

    judge: str
    attempt: int
    binary: bool
    source: str
    failure: str | None


def judge_attempts(db: Database, dialogue_id: str) -> list[JudgeAttempt]:
    """The dialogue's judge attempts by judge and attempt (failed ones too, with `failure`)."""
    return [JudgeAttempt(r[0], int(r[1]), bool(r[2]), r[3], r[4]) for r in db.execute(
        "SELECT judge, attempt, binary_verdicts, source, failure FROM dialogue_attempts "
        "WHERE dialogue_id = ? ORDER BY judge, attempt", (dialogue_id,))]


def turn_verdicts(db: Database, dialogue_id: str, judge: str, attempt: int) -> dict[int, str]:
    """turn index -> the kind of the attempt's prediction on that scored turn ('right',
    'flagged_elsewhere' or one of MISTAKES); turns the metrics do not score (untagged, a
    failed attempt) are absent."""
    prepare(db)
    return {int(r[0]): str(r[1]) for r in db.execute(
        f"SELECT t.turn_index, {KIND} AS kind {JUDGED} AND a.dialogue_id = ? AND a.judge = ? "
        "AND a.attempt = ?", (dialogue_id, judge, attempt))}


def predictions_of(db: Database, dialogue_id: str, judge: str,
                   attempt: int) -> dict[int, StoredPrediction]:
    """turn index -> the attempt's prediction (every turn it named, scored or not)."""
    return {r[0]: StoredPrediction(*r) for r in db.execute(
        "SELECT turn_index, category, key, phase, violation, reason FROM dialogue_predictions "
        "WHERE dialogue_id = ? AND judge = ? AND attempt = ?", (dialogue_id, judge, attempt))}
