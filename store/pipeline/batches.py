"""All SQL for provider batches (`llm_batches`, `llm_batch_requests`): what was submitted, for
which requests, and whether its answers are stored yet.

A batch is recorded (with every request hash it covers) right after the provider accepted it
and before it is polled, so a run killed while waiting leaves a pending row a re-run resumes.
Its answers are stored with the call log's own writer (`llm_log.flush`: cache rows, call rows,
the run's counters) in the same transaction that marks the batch finished, so a batch is either
pending with none of its answers stored by it, or finished with all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from store.db import Database, utcnow, write
from store.pipeline import llm_log

PENDING = "pending"


@dataclass(frozen=True)
class BatchRow:
    id: str
    model: str  # the model's name, as in llm_calls.model
    provider: str  # litellm's provider name (openai, azure, vertex_ai, ...)
    input_file_id: str
    requests: int
    run_id: str | None
    status: str = PENDING
    provider_status: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    created_at: str = ""


_COLUMNS = ("id", "model", "provider", "input_file_id", "requests", "run_id", "status",
            "provider_status", "output_file_id", "error_file_id", "created_at")


def record(db: Database, batch: BatchRow, keys: Sequence[str]) -> None:
    """A batch the provider accepted, with the request hashes it covers (one transaction)."""
    with write(db):
        db.execute(
            f"INSERT INTO llm_batches ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
            (batch.id, batch.model, batch.provider, batch.input_file_id, batch.requests,
             batch.run_id, batch.status, batch.provider_status, batch.output_file_id,
             batch.error_file_id, batch.created_at or utcnow()))
        db.conn.executemany(
            "INSERT OR IGNORE INTO llm_batch_requests (batch_id, request_hash) VALUES (?, ?)",
            [(batch.id, key) for key in keys])


def pending(db: Database, model: str) -> list[tuple[BatchRow, set[str]]]:
    """The model's batches whose answers are not stored yet, oldest first, with their keys."""
    rows = db.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM llm_batches WHERE status = ? AND model = ? "
        "ORDER BY created_at, id", (PENDING, model)).fetchall()
    out = []
    for r in rows:
        keys = {k for (k,) in db.execute(
            "SELECT request_hash FROM llm_batch_requests WHERE batch_id = ?", (r["id"],))}
        out.append((BatchRow(**{c: r[c] for c in _COLUMNS}), keys))
    return out


def seen(db: Database, batch_id: str, provider_status: str) -> None:
    """The provider's latest status of a pending batch (shown by `copal runs` readers)."""
    with write(db):
        db.execute("UPDATE llm_batches SET provider_status = ? WHERE id = ?",
                   (provider_status, batch_id))


def finish(db: Database, batch_id: str, *, status: str, provider_status: str | None,
           output_file_id: str | None, error_file_id: str | None,
           calls: Sequence[llm_log.CallRow], cache: Sequence[llm_log.CacheRow]) -> None:
    """Store a finished batch's answers and mark it finished, in one transaction."""
    with write(db):
        llm_log.flush(db, calls, cache)
        db.execute(
            "UPDATE llm_batches SET status = ?, provider_status = ?, output_file_id = ?, "
            "error_file_id = ?, finished_at = ? WHERE id = ?",
            (status, provider_status, output_file_id, error_file_id, utcnow(), batch_id))


def batches(db: Database) -> list[BatchRow]:
    """Every batch, newest first."""
    rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM llm_batches "
                      "ORDER BY created_at DESC, id DESC").fetchall()
    return [BatchRow(**{c: r[c] for c in _COLUMNS}) for r in rows]
