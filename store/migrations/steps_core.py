"""Migrations m001-m003: the COPAL tables (worlds to judgments, labels and the first queue).

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
def m001_initial(db: Database) -> None:
    _exec(
        db,
        """
        CREATE TABLE worlds (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            industry TEXT NOT NULL,
            use_case TEXT NOT NULL,
            risk_tier TEXT NOT NULL,
            context TEXT NOT NULL,
            source_path TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE policies (
            pk INTEGER PRIMARY KEY,
            world_id TEXT NOT NULL REFERENCES worlds(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('allow', 'deny', 'procedure')),
            text TEXT NOT NULL,
            position INTEGER NOT NULL,
            UNIQUE (world_id, id)
        );
        CREATE INDEX idx_policies_kind ON policies(kind);

        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            stage TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            calls INTEGER NOT NULL DEFAULT 0,
            cache_hits INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0,
            manifest TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX idx_runs_stage ON runs(stage);
        CREATE INDEX idx_runs_status ON runs(status);

        CREATE TABLE clauses (
            id TEXT PRIMARY KEY,
            world_id TEXT NOT NULL REFERENCES worlds(id) ON DELETE CASCADE,
            policy_ids TEXT NOT NULL,
            trigger TEXT NOT NULL,
            scope TEXT NOT NULL,
            effect TEXT,
            source_span TEXT NOT NULL,
            confidence REAL,
            audit_note TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_clauses_world ON clauses(world_id);
        CREATE INDEX idx_clauses_effect ON clauses(effect);
        CREATE INDEX idx_clauses_run ON clauses(run_id);

        CREATE TABLE compositions (
            id TEXT PRIMARY KEY,
            world_id TEXT NOT NULL REFERENCES worlds(id) ON DELETE CASCADE,
            clause_ids TEXT NOT NULL,
            pattern TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'confirmed'
                CHECK (status IN ('proposed', 'confirmed', 'rejected', 'failed')),
            reason TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_compositions_world ON compositions(world_id);
        CREATE INDEX idx_compositions_pattern ON compositions(pattern);
        CREATE INDEX idx_compositions_status ON compositions(status);
        CREATE INDEX idx_compositions_run ON compositions(run_id);

        CREATE TABLE items (
            id TEXT PRIMARY KEY,
            world_id TEXT NOT NULL REFERENCES worlds(id) ON DELETE CASCADE,
            composition_id TEXT REFERENCES compositions(id) ON DELETE CASCADE,
            pattern TEXT,
            facet TEXT,
            query TEXT NOT NULL,
            required TEXT NOT NULL,
            forbidden TEXT NOT NULL,
            method TEXT NOT NULL,
            parent_item_id TEXT REFERENCES items(id) ON DELETE CASCADE,
            selected INTEGER NOT NULL DEFAULT 0,
            trap TEXT,
            screening TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_items_world ON items(world_id);
        CREATE INDEX idx_items_composition ON items(composition_id);
        CREATE INDEX idx_items_parent ON items(parent_item_id);
        CREATE INDEX idx_items_run ON items(run_id);
        CREATE INDEX idx_items_pattern_facet ON items(pattern, facet);
        CREATE INDEX idx_items_facet ON items(facet);
        CREATE INDEX idx_items_method ON items(method);
        CREATE INDEX idx_items_selected ON items(world_id, selected);

        CREATE TABLE responses (
            id TEXT PRIMARY KEY,
            item_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            variant TEXT NOT NULL DEFAULT 'base',
            text TEXT,
            failure TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            UNIQUE (item_id, model, variant)
        );
        CREATE INDEX idx_responses_model ON responses(model);
        CREATE INDEX idx_responses_run ON responses(run_id);

        CREATE TABLE judgments (
            id TEXT PRIMARY KEY,
            response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
            judge TEXT NOT NULL,
            mode TEXT NOT NULL CHECK (mode IN ('contract', 'full_policy')),
            observed TEXT,
            error INTEGER CHECK (error IN (0, 1)),
            direction TEXT,
            evidence TEXT,
            facet TEXT,
            rationale TEXT,
            failure TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            UNIQUE (response_id, judge, mode)
        );
        CREATE INDEX idx_judgments_judge_mode ON judgments(judge, mode);
        CREATE INDEX idx_judgments_error ON judgments(error);
        CREATE INDEX idx_judgments_run ON judgments(run_id);

        CREATE TABLE label_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
            annotator TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('label', 'undo', 'skip', 'flag', 'note')),
            observed TEXT,
            error INTEGER CHECK (error IN (0, 1)),
            direction TEXT,
            facet TEXT,
            note TEXT,
            flag TEXT,
            content_sha256 TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_label_events_response ON label_events(response_id, annotator, id);
        CREATE INDEX idx_label_events_annotator ON label_events(annotator, id);
        CREATE INDEX idx_label_events_action ON label_events(action);

        CREATE TABLE adjudications (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
            adjudicator TEXT NOT NULL,
            observed TEXT,
            error INTEGER CHECK (error IN (0, 1)),
            direction TEXT,
            facet TEXT,
            note TEXT,
            content_sha256 TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_adjudications_response ON adjudications(response_id, id);
        CREATE INDEX idx_adjudications_adjudicator ON adjudications(adjudicator);

        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            request_hash TEXT NOT NULL,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            model TEXT NOT NULL,
            request TEXT NOT NULL,
            response TEXT,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_ms REAL,
            cost REAL,
            error TEXT,
            cached INTEGER NOT NULL DEFAULT 0,
            attempt INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_llm_calls_hash ON llm_calls(request_hash);
        CREATE INDEX idx_llm_calls_run ON llm_calls(run_id);
        CREATE INDEX idx_llm_calls_model ON llm_calls(model);

        -- The response cache: one successful answer per request hash.
        CREATE TABLE llm_cache (
            request_hash TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            response TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

        -- Each annotator's current label on a response: their latest label/undo event.
        -- An undo as the latest event means no current label.
        CREATE VIEW current_labels AS
        SELECT e.* FROM label_events e
        JOIN (
            SELECT response_id, annotator, MAX(id) AS id FROM label_events
            WHERE action IN ('label', 'undo')
            GROUP BY response_id, annotator
        ) last ON last.id = e.id
        WHERE e.action = 'label';

        CREATE VIEW current_adjudications AS
        SELECT a.* FROM adjudications a
        JOIN (SELECT response_id, MAX(id) AS id FROM adjudications GROUP BY response_id) last
          ON last.id = a.id;
        """,
    )


@migration
def m002_item_gate_route(db: Database) -> None:
    # The prerequisite a gated item must ask for and the route a transfer item must name, as
    # the generator stated them (the contract items carry them too, as kind gate/route).
    db.execute("ALTER TABLE items ADD COLUMN gate TEXT")
    db.execute("ALTER TABLE items ADD COLUMN route TEXT")


@migration
def m003_label_queue(db: Database) -> None:
    # The label queue (copal_tui.labelqueue). `queue_order` fixes each response's place once, so
    # the order is stable when responses are added later (new ones append); it repeats the
    # item id so walking the queue never reads the (large) response rows. `queue_leases` holds
    # numbered slots: a response is labelled by up to `overlap` annotators, slot k of a response
    # belongs to one annotator at a time (primary key), an annotator holds at most one slot of a
    # response, and a lease that expired without a label frees its slot for someone else.
    # Adjudications gain an action so an adjudicator's undo appends a row (nothing is edited in
    # place), and `current_adjudications` skips a retracted decision like `current_labels` does.
    _exec(
        db,
        """
        CREATE TABLE queue_order (
            response_id TEXT PRIMARY KEY REFERENCES responses(id) ON DELETE CASCADE,
            item_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            position INTEGER NOT NULL UNIQUE,
            stratum TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_queue_order_item ON queue_order(item_id);
        CREATE TABLE queue_leases (
            queue TEXT NOT NULL CHECK (queue IN ('label', 'adjudicate')),
            response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
            slot INTEGER NOT NULL CHECK (slot >= 0),
            annotator TEXT NOT NULL,
            leased_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            PRIMARY KEY (queue, response_id, slot),
            UNIQUE (queue, response_id, annotator)
        );
        CREATE INDEX idx_queue_leases_annotator ON queue_leases(queue, annotator, expires_at);
        CREATE INDEX idx_queue_leases_response ON queue_leases(response_id);

        ALTER TABLE adjudications ADD COLUMN action TEXT NOT NULL DEFAULT 'decide'
            CHECK (action IN ('decide', 'undo'));
        DROP VIEW current_adjudications;
        CREATE VIEW current_adjudications AS
        SELECT a.* FROM adjudications a
        JOIN (SELECT response_id, MAX(id) AS id FROM adjudications GROUP BY response_id) last
          ON last.id = a.id
        WHERE a.action = 'decide';
        """,
    )
