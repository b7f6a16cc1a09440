"""Migration m016: the real-traffic audit's tables (the `traffic` suite).

- `traffic_imports`: one row per imported log: its source name, the world whose policies the
  chatbot follows (optional), the file's name and sha256, its layout and reading options, what
  was read and kept, and what the de-identification removed, by type.
- `traffic_pairs`: the de-identified pairs (context, query, response), each with the file line
  it came from and what was removed from it; `content_key` finds duplicates: an HMAC-SHA256
  of the pair as read, under the store's own random key (`traffic_key`), so two imports of
  the same record meet while the value says nothing about the text. `purged_at` is set when a
  pair's text was removed for good (the texts are then NULL).
- `traffic_key`: that key, made at the first import.
- `traffic_judgments`: the automatic labeller's prediction per pair and judge (category,
  error, the policies it names, its reason), or the failure of its call.
- `responses.redactions`: what de-identification changed in a probe's query before it was sent
  to a deployed chatbot (an http target), by type (`{}` when nothing); NULL for any other target.
- m017 `compass_responses.redactions`: the same for a COMPASS query (and its few-shot
  demonstrations) sent to a deployed chatbot.

Append-only: never edit a step once it has landed on main; add a new one (see the list in
`store.migrations`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

from store.migrations.registry import migration
from store.migrations.script import run_script as _exec


@migration
def m016_traffic(db: Database) -> None:
    _exec(
        db,
        """
        CREATE TABLE traffic_imports (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            world_id TEXT REFERENCES worlds(id),
            file_name TEXT NOT NULL,
            file_sha256 TEXT NOT NULL,
            layout TEXT NOT NULL,
            options TEXT NOT NULL DEFAULT '{}',
            records INTEGER NOT NULL,
            pairs INTEGER NOT NULL,
            duplicates INTEGER NOT NULL,
            redactions TEXT NOT NULL DEFAULT '{}',
            deidentifier TEXT NOT NULL DEFAULT '{}',
            run_id TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE traffic_pairs (
            id TEXT PRIMARY KEY,
            import_id TEXT NOT NULL REFERENCES traffic_imports(id),
            source TEXT NOT NULL,
            world_id TEXT REFERENCES worlds(id),
            line INTEGER NOT NULL,
            turn INTEGER,
            context TEXT,
            query TEXT,
            response TEXT,
            content_key TEXT NOT NULL UNIQUE,
            redactions TEXT NOT NULL DEFAULT '{}',
            purged_at TEXT
        );
        CREATE INDEX traffic_imports_world ON traffic_imports(world_id);
        CREATE INDEX traffic_pairs_source ON traffic_pairs(source, id);
        CREATE INDEX traffic_pairs_world ON traffic_pairs(world_id);
        CREATE INDEX traffic_pairs_import ON traffic_pairs(import_id, line);
        CREATE TABLE traffic_key (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            key BLOB NOT NULL
        );
        CREATE TABLE traffic_judgments (
            pair_id TEXT NOT NULL REFERENCES traffic_pairs(id),
            judge TEXT NOT NULL,
            category TEXT CHECK (category IN ('none', 'single', 'multi')),
            erroneous INTEGER CHECK (erroneous IN (0, 1)),
            policies TEXT,
            reason TEXT,
            failure TEXT,
            run_id TEXT,
            created_at TEXT NOT NULL,
            PRIMARY KEY (pair_id, judge)
        );
        ALTER TABLE responses ADD COLUMN redactions TEXT;
        """,
    )


@migration
def m017_compass_probe_redactions(db: Database) -> None:
    _exec(db, "ALTER TABLE compass_responses ADD COLUMN redactions TEXT;")
