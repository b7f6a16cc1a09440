"""Runs: one row per pipeline stage execution, with its manifest and counters."""

from __future__ import annotations

import json
from typing import Any

from store.db import Database, dumps, utcnow, write


def start(db: Database, run_id: str, stage: str, manifest: dict[str, Any]) -> None:
    with write(db):
        db.execute(
            "INSERT INTO runs (id, stage, status, started_at, manifest) VALUES (?, ?, ?, ?, ?)",
            (run_id, stage, "running", utcnow(), dumps(manifest)),
        )


def finish(
    db: Database,
    run_id: str,
    *,
    status: str,
    calls: int,
    cache_hits: int,
    failures: int,
    cost: float,
    manifest: dict[str, Any],
) -> None:
    with write(db):
        db.execute(
            "UPDATE runs SET status = ?, finished_at = ?, calls = ?, cache_hits = ?, "
            "failures = ?, cost = ?, manifest = ? WHERE id = ?",
            (status, utcnow(), calls, cache_hits, failures, cost, dumps(manifest), run_id),
        )


def running(db: Database) -> list[dict[str, Any]]:
    return [
        {**dict(r), "manifest": json.loads(r["manifest"])}
        for r in db.execute("SELECT * FROM runs WHERE status = 'running'")
    ]


def mark_interrupted(db: Database, run_ids: list[str]) -> None:
    """Runs whose process died (killed, dropped session) are marked so, never left 'running'."""
    with write(db):
        for rid in run_ids:
            db.execute(
                "UPDATE runs SET status = 'interrupted', finished_at = ? WHERE id = ? "
                "AND status = 'running'",
                (utcnow(), rid),
            )


def all_runs(db: Database, limit: int | None = None) -> list[dict[str, Any]]:
    sql = "SELECT * FROM runs ORDER BY started_at DESC, id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    out = []
    for row in db.execute(sql):
        d = dict(row)
        d["manifest"] = json.loads(d["manifest"])
        out.append(d)
    return out
