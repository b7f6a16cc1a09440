"""Schema as append-only migrations (sqlite-utils `Migrations`).

Never edit a migration once it has landed on main: add a new `mNNN_...` step to `STEPS` instead. The
TUI and other interactive commands refuse a database with pending migrations (`require_current`)
rather than migrating under several annotators at once; `copal migrate` applies them. That check
lives in `store.schema_state` (no sqlite-utils import, so start-up stays light); a test keeps its
list of names equal to the migrations registered here.
"""

from __future__ import annotations

from sqlite_utils import Database, Migrations

from store import db as store_db
from store.db import write
from store.migrations import (
    steps_annotations,
    steps_batch,
    steps_core,
    steps_dialogue,
    steps_report,
    steps_suites,
)
from store.schema_state import require_current, schema_version

__all__ = ["MIGRATIONS", "latest", "migrate", "pending", "require_current", "schema_version"]

MIGRATIONS = Migrations("copal")

# The one list, in the order they apply. Each step is a plain function in a module grouped by
# what it creates; a new migration is a new function appended here (and its name appended to
# `store.schema_state.NAMES`).
STEPS = (
    steps_core.m001_initial,
    steps_core.m002_item_gate_route,
    steps_core.m003_label_queue,
    steps_suites.m005_compass,
    steps_suites.m006_dialogues,
    steps_suites.m007_run_progress,
    steps_suites.m008_compass_reference_rules,
    steps_suites.m009_direction_by_item_kind,
    steps_annotations.m010_annotation_log,
    steps_batch.m011_llm_batches,
    steps_report.m012_report_indexes,
    steps_dialogue.m013_dialogue_judge_parsing,
)
for _step in STEPS:
    MIGRATIONS()(_step)


def pending(db: store_db.Database) -> list[str]:
    return [m.name for m in MIGRATIONS.pending(Database(db.conn))]


def latest() -> str:
    return MIGRATIONS._migrations[-1].name


def migrate(db: store_db.Database) -> list[str]:
    """Apply pending migrations in one write transaction; returns the names applied."""
    todo = pending(db)
    if todo:
        with write(db):
            MIGRATIONS.apply(Database(db.conn))
    return todo
