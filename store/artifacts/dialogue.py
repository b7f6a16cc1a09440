"""SQL for dialogue judging (migrations m006_dialogues, m013_dialogue_judge_parsing): dialogues
with their guideline documents and per-turn truth, judge attempts with per-turn predictions (and
how each attempt's answer was read), and what the report reads (its rows typed in
`copal_tui.domain.report_rows`).

Values arrive checked by `copal_tui.interchange.complibench` / `copal_tui.domain.dialogue`.
Callers open the transaction with `store.db.write`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from copal_tui.domain.report_rows import AttemptRow, PredictionRow, TruthTurn
from store.db import Database, dumps, loads, utcnow


@dataclass(frozen=True, slots=True)
class StoredPrediction:
    """One turn's prediction of a stored judge attempt, as `attempt_predictions` returns it."""

    turn_index: int
    category: int | None
    key: str | None
    phase: int | None
    violation: int
    reason: str | None


@dataclass(frozen=True, slots=True)
class GuidelineRow:
    """One entry of a dialogue's guideline document, in document order."""

    category: int
    key: str
    phase: int | None
    text: str


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One turn of a stored dialogue with its truth (table `dialogue_turns`)."""

    dialogue_id: str
    turn_index: int
    role: str
    content: str
    category: int | None
    key: str | None
    phase: int | None
    violation: int
    guideline_text: str | None
    evidence: str | None


@dataclass(frozen=True, slots=True)
class StoredDialogue:
    """A dialogue's row (`overrides` decoded) with its guideline document and its turns."""

    id: str
    domain: str
    source_path: str | None
    source_sha256: str | None
    overrides: dict[str, Any]
    variant_of: str | None
    run_id: str | None
    created_at: str
    guidelines: tuple[GuidelineRow, ...]
    turns: tuple[TurnRow, ...]


def _columns(row_type: type) -> str:
    return ", ".join(f.name for f in fields(row_type))


# ------------------------------------------------------------------ writes


def insert_dialogue(db: Database, d: dict[str, Any], guidelines: Iterable[dict[str, Any]],
                    turns: Iterable[dict[str, Any]], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO dialogues (id, domain, source_path, source_sha256, overrides, variant_of, "
        "run_id, created_at) VALUES (?,?,?,?,?,?,?,?)",
        (d["id"], d["domain"], d.get("source_path"), d.get("source_sha256"),
         dumps(d.get("overrides") or {}), d.get("variant_of"), run_id, utcnow()),
    )
    db.conn.executemany(
        "INSERT INTO dialogue_guidelines (dialogue_id, position, category, key, phase, text) "
        "VALUES (?,?,?,?,?,?)",
        [(d["id"], k, g["category"], g["key"], g.get("phase"), g["text"])
         for k, g in enumerate(guidelines)],
    )
    db.conn.executemany(
        "INSERT INTO dialogue_turns (dialogue_id, turn_index, role, content, category, key, "
        "phase, violation, guideline_text, evidence) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(d["id"], t["turn_index"], t["role"], t["content"], t.get("category"), t.get("key"),
          t.get("phase"), int(bool(t.get("violation"))), t.get("guideline_text"),
          t.get("evidence")) for t in turns],
    )


def dialogue_sha(db: Database, dialogue_id: str) -> str | None | bool:
    """The stored source hash; False when the dialogue does not exist."""
    row = db.execute("SELECT source_sha256 FROM dialogues WHERE id = ?",
                     (dialogue_id,)).fetchone()
    return False if row is None else row[0]


def replace_attempt(db: Database, a: dict[str, Any], predictions: Iterable[dict[str, Any]],
                    run_id: str | None = None) -> None:
    """Store one judge attempt (replacing an earlier one with the same key) and its turns."""
    key = (a["dialogue_id"], a["judge"], a["attempt"])
    db.execute("DELETE FROM dialogue_attempts WHERE dialogue_id = ? AND judge = ? AND "
               "attempt = ?", key)
    db.execute(
        "INSERT INTO dialogue_attempts (dialogue_id, judge, attempt, binary_verdicts, source, "
        "source_path, failure, run_id, created_at, repaired, unparsed, first_answer) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (*key, int(bool(a.get("binary"))), a["source"], a.get("source_path"), a.get("failure"),
         run_id, utcnow(), int(bool(a.get("repaired"))), int(bool(a.get("unparsed"))),
         a.get("first_answer")),
    )
    db.conn.executemany(
        "INSERT INTO dialogue_predictions (dialogue_id, judge, attempt, turn_index, category, "
        "key, phase, violation, reason) VALUES (?,?,?,?,?,?,?,?,?)",
        [(*key, p["turn_index"], p.get("category"), p.get("key"), p.get("phase"),
          int(bool(p["violation"])), p.get("reason")) for p in predictions],
    )


def attempt_predictions(db: Database, dialogue_id: str, judge: str,
                        attempt: int) -> list[StoredPrediction] | None:
    """The stored predictions of one attempt (None when the attempt does not exist)."""
    if db.execute("SELECT 1 FROM dialogue_attempts WHERE dialogue_id = ? AND judge = ? AND "
                  "attempt = ?", (dialogue_id, judge, attempt)).fetchone() is None:
        return None
    return [StoredPrediction(*r) for r in db.execute(
        "SELECT turn_index, category, key, phase, violation, reason FROM dialogue_predictions "
        "WHERE dialogue_id = ? AND judge = ? AND attempt = ? ORDER BY turn_index",
        (dialogue_id, judge, attempt))]


# ------------------------------------------------------------------ reads


def dialogue_ids(db: Database, domain: str | None = None) -> list[str]:
    if domain is None:
        return [r[0] for r in db.execute("SELECT id FROM dialogues ORDER BY id")]
    return [r[0] for r in db.execute("SELECT id FROM dialogues WHERE domain = ? ORDER BY id",
                                     (domain,))]


def stored_dialogue(db: Database, dialogue_id: str) -> StoredDialogue | None:
    """A dialogue with its guideline document and turns; None when it does not exist."""
    row = db.execute("SELECT id, domain, source_path, source_sha256, overrides, variant_of, "
                     "run_id, created_at FROM dialogues WHERE id = ?", (dialogue_id,)).fetchone()
    if row is None:
        return None
    overrides = loads(row["overrides"])
    guidelines = tuple(GuidelineRow(*r) for r in db.execute(
        f"SELECT {_columns(GuidelineRow)} FROM dialogue_guidelines WHERE dialogue_id = ? "
        "ORDER BY position", (dialogue_id,)))
    turns = tuple(TurnRow(*r) for r in db.execute(
        f"SELECT {_columns(TurnRow)} FROM dialogue_turns WHERE dialogue_id = ? "
        "ORDER BY turn_index", (dialogue_id,)))
    return StoredDialogue(row["id"], row["domain"], row["source_path"], row["source_sha256"],
                          overrides if isinstance(overrides, dict) else {}, row["variant_of"],
                          row["run_id"], row["created_at"], guidelines, turns)


def truth_turns(db: Database) -> list[TruthTurn]:
    """The truth of every turn."""
    return [TruthTurn(*r) for r in db.execute(
        "SELECT t.dialogue_id, d.domain, t.turn_index, t.role, t.category, t.key, t.phase, "
        "t.violation FROM dialogue_turns t JOIN dialogues d ON d.id = t.dialogue_id "
        "ORDER BY t.dialogue_id, t.turn_index")]


def attempts(db: Database) -> list[AttemptRow]:
    """Every judge attempt."""
    return [AttemptRow(*r) for r in db.execute(
        f"SELECT {_columns(AttemptRow)} FROM dialogue_attempts "
        "ORDER BY judge, attempt, dialogue_id")]


def predictions(db: Database) -> list[PredictionRow]:
    """Every turn prediction of every attempt."""
    return [PredictionRow(*r) for r in db.execute(
        "SELECT dialogue_id, judge, attempt, turn_index, category, key, phase, violation "
        "FROM dialogue_predictions ORDER BY judge, attempt, dialogue_id, turn_index")]
