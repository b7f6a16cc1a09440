"""The jobs screen's reads: the paged, searchable list of pipeline runs, one run with its
manifest, and the choices offered when starting a job (worlds, and the model and judge names
already in the store)."""

from __future__ import annotations

from dataclasses import dataclass

from copal_tui.services import reading
from store.db import Database
from store.pipeline import jobs
from store.pipeline.jobs import RunDetail, RunPage, RunRow

# The rows are the store's frozen dataclasses, named here so screens need no SQL module.
__all__ = ["JobChoices", "RunDetail", "RunPage", "RunRow", "job_choices", "run_detail",
           "runs_page"]


@dataclass(frozen=True)
class JobChoices:
    worlds: list[tuple[str, str]]  # (id, name), in import order
    models: list[str]  # target models that already answered something
    judges: list[str]


def runs_page(db: Database, search: str = "", *, offset: int = 0, limit: int = 100) -> RunPage:
    """Runs matching `search` (free words, `stage:`, `status:`), newest first. An offset past
    the end gives the last page instead (the filter shrank the list under the current page)."""
    with reading(db):
        page = jobs.runs_page(db, search, offset=offset, limit=limit)
        if page.total and offset >= page.total:
            offset = max(0, (page.total - 1) // limit * limit)
            page = jobs.runs_page(db, search, offset=offset, limit=limit)
    return page


def run_detail(db: Database, run_id: str) -> RunDetail | None:
    with reading(db):
        return jobs.run_detail(db, run_id)


def job_choices(db: Database) -> JobChoices:
    with reading(db):
        return JobChoices(jobs.world_choices(db), jobs.known_models(db),
                          jobs.known_judges(db))
