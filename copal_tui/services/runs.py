"""`copal runs`: the pipeline runs with their counters, a killed run shown as interrupted, and
the structured-answer tallies of each run's manifest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copal_tui.services import reading
from copal_tui.services.jobs import RunRow
from store.db import Database
from store.pipeline import runs


@dataclass(frozen=True)
class RunCounters(RunRow):
    """One run as `copal runs` lists it. `repaired`: structured answers that needed the repair
    round; `invalid`: those that stayed unusable; `outputs`: the manifest's tallies per stage
    task (the source of both); `counts`: the manifest's stage counters (such as `judged` or
    `quotes_not_in_response`)."""

    repaired: int = 0
    invalid: int = 0
    outputs: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def list_runs(db: Database, limit: int | None = None) -> list[RunCounters]:
    """Runs, newest first. On a writable database, runs whose process died are first marked
    interrupted (finished at their last heartbeat), so none shows as running forever."""
    if not db.readonly:
        runs.reap(db)
    with reading(db):
        rows = runs.all_runs(db, limit=limit)
    out = []
    for r in rows:
        outputs = r.manifest.get("outputs") or {}
        tallies = [t for tasks in outputs.values() for t in tasks.values()]
        out.append(RunCounters(
            id=r.id, stage=r.stage, status=r.status, started_at=r.started_at,
            finished_at=r.finished_at, calls=r.calls, cache_hits=r.cache_hits,
            failures=r.failures, cost=r.cost,
            repaired=sum(t.get("repaired", 0) for t in tallies),
            invalid=sum(t.get("failed", 0) for t in tallies), outputs=outputs,
            counts=dict(r.manifest.get("counts") or {})))
    return out
