"""SQL for the jobs screen: the paged, filterable list of pipeline runs, one run's manifest, and
the choices offered when starting a job (worlds, model and judge names already in the store).

The run list follows insertion order (rowid, newest first), which needs no sort, and selects
every column but the manifest: a manifest can be large (errors, options, prompt versions) and is
read only for the run the user opens. User input never becomes SQL text: free words are LIKE
parameters and `stage:`/`status:` filters are `=` parameters. Transactions are the service's
(`copal_tui.services.jobs`), never begun here.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from store.db import Database

RUN_COLUMNS = ("id", "stage", "status", "started_at", "finished_at", "calls", "cache_hits",
               "failures", "cost")
# Filters the search box understands as `key:value` (each an exact match on one column).
RUN_FILTERS = {"stage": "stage = ?", "status": "status = ?"}


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
class RunDetail(RunRow):
    """One run with its manifest: decoded JSON, or the stored text when it does not parse (a
    damaged manifest is still worth showing)."""

    manifest: dict[str, Any] | str = ""


@dataclass(frozen=True)
class RunPage:
    rows: list[RunRow]
    total: int
    offset: int
    limit: int


def _run_row(r: Any) -> RunRow:
    return RunRow(*(r[k] for k in RUN_COLUMNS))


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def run_filter(search: str) -> tuple[str, list[Any]]:
    """WHERE clause and parameters for a search such as `respond status:done harbor`.

    Free words must each match the id, stage or status (AND across words); an unknown
    `key:value` is treated as a free word so nothing the user types is an error.
    """
    parts: list[str] = []
    params: list[Any] = []
    for word in search.split():
        key, sep, value = word.partition(":")
        if sep and key.lower() in RUN_FILTERS and value:
            parts.append(RUN_FILTERS[key.lower()])
            params.append(value)
            continue
        parts.append("(id LIKE ? ESCAPE '\\' OR stage LIKE ? ESCAPE '\\' "
                     "OR status LIKE ? ESCAPE '\\')")
        params += [_like(word)] * 3
    return (" WHERE " + " AND ".join(parts)) if parts else "", params


def runs_page(db: Database, search: str = "", *, offset: int = 0, limit: int = 100) -> RunPage:
    where, params = run_filter(search)
    total = int(db.execute(f"SELECT COUNT(*) FROM runs{where}", params).fetchone()[0])
    cols = ", ".join(RUN_COLUMNS)
    rows = [_run_row(r) for r in db.execute(
        f"SELECT {cols} FROM runs{where} ORDER BY rowid DESC LIMIT ? OFFSET ?",
        [*params, int(limit), int(offset)])]
    return RunPage(rows, total, offset, limit)


def run_detail(db: Database, run_id: str) -> RunDetail | None:
    """One run with its manifest parsed (None when the id is unknown)."""
    row = db.execute(f"SELECT {', '.join(RUN_COLUMNS)}, manifest FROM runs WHERE id = ?",
                     (run_id,)).fetchone()
    if row is None:
        return None
    manifest: dict[str, Any] | str = row["manifest"] or ""
    # A damaged manifest stays text: it is still worth showing.
    with contextlib.suppress(ValueError):
        manifest = json.loads(row["manifest"] or "{}")
    return RunDetail(**{k: row[k] for k in RUN_COLUMNS}, manifest=manifest)


def world_choices(db: Database, limit: int = 500) -> list[tuple[str, str]]:
    """(id, name) of the worlds a job can be restricted to, in import order."""
    return [(r["id"], r["name"]) for r in db.execute(
        "SELECT id, name FROM worlds ORDER BY rowid LIMIT ?", (int(limit),))]


def known_models(db: Database, limit: int = 200) -> list[str]:
    """Target models that already answered something (each distinct value read off its index)."""
    return [r[0] for r in db.execute(
        "SELECT DISTINCT model FROM responses ORDER BY model LIMIT ?", (int(limit),))]


def known_judges(db: Database, limit: int = 200) -> list[str]:
    return [r[0] for r in db.execute(
        "SELECT DISTINCT judge FROM judgments ORDER BY judge LIMIT ?", (int(limit),))]

