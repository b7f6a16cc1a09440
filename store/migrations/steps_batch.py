"""Migration m011: provider batches (`copal run ... --batch`), so a pending batch survives a crash.

Listed in `store.migrations` after m010. Append-only like the others: never edit it once it
has landed, add a new step.

`llm_batches` has one row per batch submitted to a provider (its id, the uploaded input file,
the model it was for, copal's state of it); `llm_batch_requests` the request hashes (cache keys)
it covers. Both are written before the batch is polled: a re-run after a kill finds the pending
batch of the requests it needs and polls it instead of submitting them again. The answers
themselves land where every answer does (`llm_cache`, `llm_calls`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

from store.migrations.registry import migration
from store.migrations.script import run_script as _exec


@migration
def m011_llm_batches(db: Database) -> None:
    _exec(db, """
        CREATE TABLE llm_batches (
            id TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            provider TEXT NOT NULL,
            input_file_id TEXT NOT NULL,
            output_file_id TEXT,
            error_file_id TEXT,
            -- copal's state: 'pending' until its answers are stored, then 'done' (or
            -- 'failed', 'expired', 'cancelled' as the provider ended it)
            status TEXT NOT NULL DEFAULT 'pending',
            provider_status TEXT,
            requests INTEGER NOT NULL,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT
        );
        CREATE INDEX idx_llm_batches_open ON llm_batches(status, model);
        CREATE INDEX idx_llm_batches_run ON llm_batches(run_id);

        CREATE TABLE llm_batch_requests (
            batch_id TEXT NOT NULL REFERENCES llm_batches(id) ON DELETE CASCADE,
            request_hash TEXT NOT NULL,
            PRIMARY KEY (batch_id, request_hash)
        );
        CREATE INDEX idx_llm_batch_requests_hash ON llm_batch_requests(request_hash);
    """)
