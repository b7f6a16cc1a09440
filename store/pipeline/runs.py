"""Runs: one row per pipeline stage execution, with its manifest, counters and heartbeat.

A run's row is also its claim on the stage: `claim` inserts it only when no live run of the same
stage covers an overlapping scope (worlds x models, stored in the manifest as `scope`), inside
one `BEGIN IMMEDIATE` transaction, so two identical `copal run` cannot both start the stage.

Counters land while the run works (`add_calls` in the call log's transaction, `progress` in the
results' transaction), each refreshing `heartbeat_at`. A run whose process is gone (same host,
pid not alive) or whose heartbeat is older than `STALE_AFTER` (another host, or a process stuck
that long) is dead: `reap` marks it 'interrupted' with its last heartbeat as `finished_at`, and it
no longer holds its stage. A run's `Heartbeat` thread keeps a live run's stamp fresh meanwhile,
and `ended` words how a run stopped: a run stopped with Ctrl-C is 'interrupted' too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.db import Database, StoreError, connect, dumps, utcnow, write

# How often a working run refreshes its heartbeat when nothing else wrote to its row.
HEARTBEAT_EVERY = 5.0
# Generous: on the host that started it a run is judged by its pid; this only decides for runs
# of other hosts (or a pid that was reused), and a slow write can block a run's loop for 30 s.
STALE_AFTER = 300.0


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One row of `runs`, its manifest decoded."""

    id: str
    stage: str
    status: str
    started_at: str
    finished_at: str | None
    heartbeat_at: str | None
    calls: int
    cache_hits: int
    failures: int
    cost: float
    manifest: dict[str, Any]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RunRecord:
        return cls(id=row["id"], stage=row["stage"], status=row["status"],
                   started_at=row["started_at"], finished_at=row["finished_at"],
                   heartbeat_at=row["heartbeat_at"], calls=row["calls"],
                   cache_hits=row["cache_hits"], failures=row["failures"], cost=row["cost"],
                   manifest=json.loads(row["manifest"]))


@dataclass(frozen=True, slots=True)
class RunHolder:
    """The live run that holds a stage's claim: which process, where, since when."""

    id: str
    pid: int | None
    host: str | None
    started_at: str


def start(db: Database, run_id: str, stage: str, manifest: dict[str, Any]) -> None:
    with write(db):
        _insert(db, run_id, stage, manifest)


def _insert(db: Database, run_id: str, stage: str, manifest: dict[str, Any]) -> None:
    now = utcnow()
    db.execute(
        "INSERT INTO runs (id, stage, status, started_at, heartbeat_at, manifest) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (run_id, stage, "running", now, now, dumps(manifest)),
    )


def claim(db: Database, run_id: str, stage: str, manifest: dict[str, Any]) -> RunHolder | None:
    """Start the run, or return the live run of the same stage whose scope overlaps (nothing is
    written for this run then). Dead runs found on the way are marked interrupted."""
    scope = manifest.get("scope")
    with write(db):
        reap(db)
        for other in running(db):
            if other.stage == stage and overlaps(scope, other.manifest.get("scope")):
                m = other.manifest
                return RunHolder(id=other.id, pid=m.get("pid"), host=m.get("host"),
                                 started_at=other.started_at)
        _insert(db, run_id, stage, manifest)
    return None


def overlaps(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two scopes share a unit; a missing scope or dimension (None) means all."""
    for key in ("worlds", "models"):
        x, y = (a or {}).get(key), (b or {}).get(key)
        if x is not None and y is not None and not set(x) & set(y):
            return False
    return True


def add_calls(db: Database, run_id: str, *, calls: int, cache_hits: int, cost: float) -> None:
    """Add logged calls to a run's counters (called in the call log's own transaction)."""
    db.execute(
        "UPDATE runs SET calls = calls + ?, cache_hits = cache_hits + ?, cost = cost + ?, "
        "heartbeat_at = ? WHERE id = ?",
        (calls, cache_hits, cost, utcnow(), run_id),
    )


def progress(db: Database, run_id: str, *, failures: int,
             manifest: dict[str, Any] | None = None) -> None:
    """Heartbeat with the failures so far (and the manifest, when given) of a running run."""
    with write(db):
        db.execute(
            "UPDATE runs SET heartbeat_at = ?, failures = ?, manifest = COALESCE(?, manifest) "
            "WHERE id = ? AND status = 'running'",
            (utcnow(), failures, None if manifest is None else dumps(manifest), run_id),
        )


def heartbeat(db: Database, run_id: str) -> None:
    """Refresh a running run's heartbeat alone."""
    with write(db):
        db.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ? AND status = 'running'",
                   (utcnow(), run_id))


class Heartbeat:
    """A running run's heartbeat from a thread of its own, with its own connection (opened only
    if the run lasts): refreshed whenever the run's own writes (`last`: when they last did, on
    the monotonic clock) have not for HEARTBEAT_EVERY. So a slow stage (long calls, nothing to
    write, or a step that holds its event loop, such as compose's planning over a large world)
    never looks dead to other runs."""

    def __init__(self, path: Path, run_id: str, last: Callable[[], float]) -> None:
        self.path, self.run_id, self.last = path, run_id, last
        self._stop = threading.Event()
        self._beaten = 0.0
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {run_id}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        db: Database | None = None
        try:
            while not self._stop.wait(HEARTBEAT_EVERY):
                if time.monotonic() - max(self.last(), self._beaten) < HEARTBEAT_EVERY:
                    continue
                # A busy or unreachable store only delays a beat.
                with contextlib.suppress(sqlite3.Error, StoreError):
                    db = db or connect(self.path)
                    heartbeat(db, self.run_id)
                    self._beaten = time.monotonic()
        finally:
            if db is not None:
                db.conn.close()


def ended(exc_type: type[BaseException] | None, *, cancelled: bool) -> str:
    """How a run stopped: 'cancelled' (asked to stop), 'interrupted' (Ctrl-C, which asyncio
    delivers as a cancelled task, or the process told to exit: as a killed run is shown),
    'failed' (an error), else 'done'."""
    if cancelled:
        return "cancelled"
    if exc_type is None:
        return "done"
    if issubclass(exc_type, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
        return "interrupted"
    return "failed"


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
        now = utcnow()
        db.execute(
            "UPDATE runs SET status = ?, finished_at = ?, heartbeat_at = ?, calls = ?, "
            "cache_hits = ?, failures = ?, cost = ?, manifest = ? WHERE id = ?",
            (status, now, now, calls, cache_hits, failures, cost, dumps(manifest), run_id),
        )


def running(db: Database) -> list[RunRecord]:
    return [RunRecord.from_row(r)
            for r in db.execute("SELECT * FROM runs WHERE status = 'running'")]


def is_dead(run: RunRecord, host: str | None = None, now: datetime | None = None) -> bool:
    """A running run whose process is gone, or whose heartbeat went stale."""
    m = run.manifest
    pid = m.get("pid")
    if m.get("host") == (host or socket.gethostname()) and isinstance(pid, int):
        return not _alive(pid)
    try:
        beat = _parse(run.heartbeat_at or run.started_at)
    except ValueError:  # not a stamp this store wrote: nothing says the run is alive
        return True
    return ((now or datetime.now(UTC)) - beat).total_seconds() > STALE_AFTER


def reap(db: Database) -> list[str]:
    """Mark dead running runs 'interrupted' (finished at their last heartbeat); their ids."""
    dead = [r for r in running(db) if is_dead(r)]
    if dead:
        with write(db):
            for r in dead:
                db.execute(
                    "UPDATE runs SET status = 'interrupted', finished_at = ? WHERE id = ? "
                    "AND status = 'running'",
                    (r.heartbeat_at or r.started_at, r.id),
                )
    return [r.id for r in dead]


def all_runs(db: Database, limit: int | None = None) -> list[RunRecord]:
    sql = "SELECT * FROM runs ORDER BY started_at DESC, id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [RunRecord.from_row(row) for row in db.execute(sql)]


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True
