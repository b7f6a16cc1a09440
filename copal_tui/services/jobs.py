"""The jobs screen's reads: the paged, searchable list of pipeline runs, one run with its
manifest, and the choices offered when starting a job (worlds, and the model and judge names
already in the store)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from copal_tui.services import reading
from store.db import Database
from store.pipeline import jobs_sql


@dataclass(frozen=True)
class RunRow:
    """One run of the list (everything but its manifest, which can be large)."""

    id: str
    stage: str
    status: str
    started_at: str
    finished_at: str | None
    calls: int
    cache_hits: int
    failures: int
    cost: float


@dataclass(frozen=True)
class RunPage:
    rows: list[RunRow]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class RunDetail(RunRow):
    """One run with its manifest: a dict, or the stored text when it does not parse (a
    damaged manifest is still worth showing)."""

    manifest: dict[str, Any] | str = ""


@dataclass(frozen=True)
class JobChoices:
    worlds: list[tuple[str, str]]  # (id, name), in import order
    models: list[str]  # target models that already answered something
    judges: list[str]


def _row(r: dict[str, Any]) -> RunRow:
    return RunRow(**{k: r[k] for k in jobs_sql.RUN_COLUMNS})


def runs_page(db: Database, search: str = "", *, offset: int = 0, limit: int = 100) -> RunPage:
    """Runs matching `search` (free words, `stage:`, `status:`), newest first. An offset past
    the end gives the last page instead (the filter shrank the list under the current page)."""
    with reading(db):
        page = jobs_sql.runs_page(db, search, offset=offset, limit=limit)
        if page.total and offset >= page.total:
            offset = max(0, (page.total - 1) // limit * limit)
            page = jobs_sql.runs_page(db, search, offset=offset, limit=limit)
    return RunPage([_row(r) for r in page.rows], page.total, page.offset, page.limit)


def run_detail(db: Database, run_id: str) -> RunDetail | None:
    with reading(db):
        r = jobs_sql.run_detail(db, run_id)
    if r is None:
        return None
    return RunDetail(**{k: r[k] for k in jobs_sql.RUN_COLUMNS}, manifest=r["manifest"])


def job_choices(db: Database) -> JobChoices:
    with reading(db):
        return JobChoices(jobs_sql.world_choices(db), jobs_sql.known_models(db),
                          jobs_sql.known_judges(db))
