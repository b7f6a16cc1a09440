"""SQL the dialogue stages need beyond `store.artifacts.dialogue`: which dialogues a run covers, which
judge attempts are already done, and the rounds of the violation-variant loop
(`dialogue_variants` table of migration m006_dialogues).

Dialogues, guideline documents, turns and attempts themselves are written with
`store.artifacts.dialogue` (insert_dialogue, replace_attempt). Callers open write transactions with
`store.db.write`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.db import Database, utcnow
from store.pipeline.rows import VariantRound, columns


def select_dialogues(db: Database, domains: Sequence[str] | None = None,
                     ids: Sequence[str] | None = None, *,
                     originals_only: bool = False) -> list[str]:
    """Ids of the stored dialogues matching every filter given (sorted)."""
    where: list[str] = []
    params: list[str] = []
    if domains:
        where.append(f"domain IN ({','.join('?' * len(domains))})")
        params.extend(domains)
    if ids:
        where.append(f"id IN ({','.join('?' * len(ids))})")
        params.extend(ids)
    if originals_only:
        where.append("variant_of IS NULL")
    sql = "SELECT id FROM dialogues" + (f" WHERE {' AND '.join(where)}" if where else "")
    return [r[0] for r in db.execute(sql + " ORDER BY id", params)]


def completed_attempts(db: Database, judge: str) -> set[tuple[str, int]]:
    """(dialogue, attempt) of the judge's attempts that did not fail (imported or run)."""
    return {(r[0], r[1]) for r in db.execute(
        "SELECT dialogue_id, attempt FROM dialogue_attempts WHERE judge = ? AND failure IS NULL",
        (judge,))}


# ------------------------------------------------------------------ variant rounds


def variant_rounds(db: Database, dialogue_id: str) -> list[VariantRound]:
    """Every recorded round of the dialogue's variant loop, by turn then round."""
    return [VariantRound.from_row(r) for r in db.execute(
        f"SELECT {columns(VariantRound)} FROM dialogue_variants WHERE dialogue_id = ? "
        "ORDER BY turn_index, round", (dialogue_id,))]


def delete_failed_rounds(db: Database, dialogue_id: str, turn_index: int) -> None:
    db.execute("DELETE FROM dialogue_variants WHERE dialogue_id = ? AND turn_index = ? AND "
               "failure IS NOT NULL", (dialogue_id, turn_index))


def insert_round(db: Database, r: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO dialogue_variants (id, dialogue_id, turn_index, round, category, key, "
        "phase, original_guideline, modified_guideline, original_reply, new_reply, "
        "behaviour_changed, violation_detected, kept, reason, failure, run_id, created_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (r["id"], r["dialogue_id"], r["turn_index"], r["round"], r["category"], r["key"],
         r.get("phase"), r["original_guideline"], r.get("modified_guideline"),
         r["original_reply"], r.get("new_reply"), _flag(r.get("behaviour_changed")),
         _flag(r.get("violation_detected")), int(bool(r.get("kept"))), r.get("reason"),
         r.get("failure"), run_id, utcnow()),
    )


def _flag(value: object) -> int | None:
    return None if value is None else int(bool(value))
