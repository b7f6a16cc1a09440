"""All SQL for the model call log (`llm_calls`) and the response cache (`llm_cache`).

The LLM client buffers rows in memory and hands them here in batches (one transaction per flush):
a commit per call with synchronous=FULL would cost an fsync each. Rows arrive already scrubbed of
secrets; nothing here ever sees an API key. Each batch also adds its calls, cache hits and
cost to the counters of the runs it belongs to (`store.pipeline.runs.add_calls`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store.db import Database, write
from store.pipeline import runs


@dataclass(frozen=True)
class CallRow:
    """One provider attempt (or one cache hit, with `cached` set) as stored in `llm_calls`."""

    request_hash: str
    run_id: str | None
    model: str
    request: str
    response: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float | None
    cost: float | None
    error: str | None
    cached: bool
    attempt: int
    created_at: str


@dataclass(frozen=True)
class CacheRow:
    request_hash: str
    model: str
    response: str
    created_at: str


def cache_get(db: Database, request_hash: str) -> str | None:
    row = db.execute(
        "SELECT response FROM llm_cache WHERE request_hash = ?", (request_hash,)
    ).fetchone()
    return None if row is None else str(row[0])


def cache_delete(db: Database, request_hash: str) -> None:
    with write(db):
        db.execute("DELETE FROM llm_cache WHERE request_hash = ?", (request_hash,))


def cache_keys(db: Database) -> set[str]:
    return {r[0] for r in db.execute("SELECT request_hash FROM llm_cache")}


def flush(db: Database, calls: Sequence[CallRow], cache: Sequence[CacheRow]) -> None:
    """Write a batch of call-log and cache rows in one transaction."""
    if not calls and not cache:
        return
    with write(db):
        db.conn.executemany(
            "INSERT INTO llm_calls (request_hash, run_id, model, request, response, prompt_tokens, "
            "completion_tokens, latency_ms, cost, error, cached, attempt, created_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (c.request_hash, c.run_id, c.model, c.request, c.response, c.prompt_tokens,
                 c.completion_tokens, c.latency_ms, c.cost, c.error, int(c.cached), c.attempt,
                 c.created_at)
                for c in calls
            ],
        )
        # First answer wins: a concurrent identical request must not replace the answer that
        # earlier callers were already given.
        db.conn.executemany(
            "INSERT OR IGNORE INTO llm_cache (request_hash, model, response, created_at) "
            "VALUES (?,?,?,?)",
            [(c.request_hash, c.model, c.response, c.created_at) for c in cache],
        )
        # The run's counters move with its log rows, in the same transaction: a killed run
        # shows exactly the calls it logged.
        for run_id, (calls_n, hits, cost) in _per_run(calls).items():
            runs.add_calls(db, run_id, calls=calls_n, cache_hits=hits, cost=cost)


def _per_run(calls: Sequence[CallRow]) -> dict[str, tuple[int, int, float]]:
    """(provider calls, cache hits, cost) of a batch, by run id (rows without one skipped)."""
    out: dict[str, tuple[int, int, float]] = {}
    for c in calls:
        if c.run_id is None:
            continue
        n, hits, cost = out.get(c.run_id, (0, 0, 0.0))
        out[c.run_id] = (n + (not c.cached), hits + c.cached, cost + (c.cost or 0.0))
    return out


@dataclass(frozen=True)
class LoggedCall(CallRow):
    """A row of `llm_calls` as read back: the stored attempt with its log id."""

    id: int = 0


_LOGGED = ("SELECT id, request_hash, run_id, model, request, response, prompt_tokens, "
           "completion_tokens, latency_ms, cost, error, cached, attempt, created_at "
           "FROM llm_calls")


def _logged(r: Any) -> LoggedCall:
    return LoggedCall(r["request_hash"], r["run_id"], r["model"], r["request"], r["response"],
                      r["prompt_tokens"], r["completion_tokens"], r["latency_ms"], r["cost"],
                      r["error"], bool(r["cached"]), r["attempt"], r["created_at"], id=r["id"])


def calls_for_hash(db: Database, request_hash: str) -> list[LoggedCall]:
    return [_logged(r) for r in db.execute(f"{_LOGGED} WHERE request_hash = ? ORDER BY id",
                                           (request_hash,))]


def calls_for_run(db: Database, run_id: str) -> list[LoggedCall]:
    return [_logged(r) for r in db.execute(f"{_LOGGED} WHERE run_id = ? ORDER BY id",
                                           (run_id,))]


@dataclass(frozen=True)
class RunTotals:
    calls: int  # provider calls (cache hits not counted)
    cache_hits: int
    failed_attempts: int
    cost: float


def run_totals(db: Database, run_id: str) -> RunTotals:
    """Provider calls, cache hits, failed attempts and cost logged for a run."""
    row = db.execute(
        "SELECT COALESCE(SUM(cached = 0), 0), COALESCE(SUM(cached = 1), 0), "
        "COALESCE(SUM(error IS NOT NULL), 0), COALESCE(SUM(cost), 0.0) "
        "FROM llm_calls WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    return RunTotals(int(row[0]), int(row[1]), int(row[2]), float(row[3]))
