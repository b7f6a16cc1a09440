"""Migrations m005-m009: the COMPASS and dialogue-judging tables and later changes to them.

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
def m005_compass(db: Database) -> None:
    # COMPASS-style single-policy suites (copal_tui.domain.compass). A world imported from the
    # COMPASS layout keeps the organisation's own system prompt. Queries, responses, judgments
    # and labels get their own tables: a COMPASS query has no composition, contract or facet,
    # and mixing them into `items` would put single-policy rows into every composed statistic.
    # Labels are append-only events like `label_events` (undo appends).
    _exec(
        db,
        """
        ALTER TABLE worlds ADD COLUMN system_prompt TEXT;

        CREATE TABLE compass_queries (
            id TEXT PRIMARY KEY,
            world_id TEXT NOT NULL REFERENCES worlds(id) ON DELETE CASCADE,
            policy_id TEXT NOT NULL,
            query_type TEXT NOT NULL CHECK (query_type IN
                ('allowed_base', 'allowed_edge', 'denied_base', 'denied_edge')),
            strategy TEXT CHECK (strategy IS NULL OR strategy IN
                ('context_overflow', 'hypothetical_scenario', 'indirect_reference',
                 'educational_context', 'analogical_reasoning', 'regulatory_interpretation')),
            form TEXT CHECK (form IS NULL OR form IN ('short', 'long')),
            parent_id TEXT REFERENCES compass_queries(id) ON DELETE CASCADE,
            text TEXT NOT NULL,
            attributes TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'kept', 'rejected', 'failed')),
            matched TEXT,
            reason TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_compass_queries_world ON compass_queries(world_id, query_type, status);
        CREATE INDEX idx_compass_queries_policy ON compass_queries(world_id, policy_id);
        CREATE INDEX idx_compass_queries_parent ON compass_queries(parent_id);
        CREATE INDEX idx_compass_queries_run ON compass_queries(run_id);

        CREATE TABLE compass_responses (
            id TEXT PRIMARY KEY,
            query_id TEXT NOT NULL REFERENCES compass_queries(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            variant TEXT NOT NULL CHECK (variant IN
                ('base', 'explicit-refusal', 'few-shot', 'pre-filter')),
            text TEXT,
            prefilter TEXT CHECK (prefilter IS NULL OR prefilter IN ('ALLOW', 'DENY')),
            prefilter_model TEXT,
            prefilter_reason TEXT,
            failure TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            UNIQUE (query_id, model, variant)
        );
        CREATE INDEX idx_compass_responses_model ON compass_responses(model, variant);
        CREATE INDEX idx_compass_responses_run ON compass_responses(run_id);

        CREATE TABLE compass_judgments (
            id TEXT PRIMARY KEY,
            response_id TEXT NOT NULL REFERENCES compass_responses(id) ON DELETE CASCADE,
            judge TEXT NOT NULL,
            refused INTEGER CHECK (refused IN (0, 1)),
            compliant INTEGER CHECK (compliant IN (0, 1)),
            aligned INTEGER CHECK (aligned IN (0, 1)),
            failure_mode TEXT CHECK (failure_mode IS NULL OR failure_mode IN
                ('direct_violation', 'refusal_answer_hybrid', 'indirect_violation')),
            rationale TEXT,
            failure TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            UNIQUE (response_id, judge)
        );
        CREATE INDEX idx_compass_judgments_judge ON compass_judgments(judge);
        CREATE INDEX idx_compass_judgments_run ON compass_judgments(run_id);

        CREATE TABLE compass_label_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            response_id TEXT NOT NULL REFERENCES compass_responses(id) ON DELETE CASCADE,
            annotator TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('label', 'undo', 'skip')),
            refused INTEGER CHECK (refused IN (0, 1)),
            compliant INTEGER CHECK (compliant IN (0, 1)),
            failure_mode TEXT,
            note TEXT,
            content_sha256 TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_compass_label_events_response
            ON compass_label_events(response_id, annotator, id);
        CREATE INDEX idx_compass_label_events_annotator ON compass_label_events(annotator, id);

        CREATE VIEW current_compass_labels AS
        SELECT e.* FROM compass_label_events e
        JOIN (
            SELECT response_id, annotator, MAX(id) AS id FROM compass_label_events
            WHERE action IN ('label', 'undo')
            GROUP BY response_id, annotator
        ) last ON last.id = e.id
        WHERE e.action = 'label';
        """,
    )


@migration
def m006_dialogues(db: Database) -> None:
    # CompliBench-style dialogue judging (copal_tui.domain.dialogue). A dialogue keeps its
    # guideline document, its turns with the per-turn truth (governing guideline, violation),
    # and the judges' per-turn predictions by attempt (imported or produced by a run). A judge
    # attempt is recorded even when it failed or left turns out, so a missing turn counts as
    # wrong rather than vanishing. Reviews (humans labelling judge mistakes with the error
    # taxonomy) are append-only events. Violation variants keep every round of the
    # generate-regenerate-judge loop, kept or not.
    _exec(
        db,
        """
        CREATE TABLE dialogues (
            id TEXT PRIMARY KEY,
            domain TEXT NOT NULL,
            source_path TEXT,
            source_sha256 TEXT,
            overrides TEXT NOT NULL DEFAULT '{}',
            variant_of TEXT REFERENCES dialogues(id) ON DELETE CASCADE,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_dialogues_domain ON dialogues(domain);
        CREATE INDEX idx_dialogues_variant_of ON dialogues(variant_of);
        CREATE INDEX idx_dialogues_run ON dialogues(run_id);

        CREATE TABLE dialogue_guidelines (
            dialogue_id TEXT NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            category INTEGER NOT NULL CHECK (category IN (1, 2, 3)),
            key TEXT NOT NULL,
            phase INTEGER,
            text TEXT NOT NULL,
            PRIMARY KEY (dialogue_id, position)
        );

        CREATE TABLE dialogue_turns (
            dialogue_id TEXT NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
            turn_index INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            category INTEGER CHECK (category IS NULL OR category IN (1, 2, 3)),
            key TEXT,
            phase INTEGER,
            violation INTEGER NOT NULL DEFAULT 0 CHECK (violation IN (0, 1)),
            guideline_text TEXT,
            evidence TEXT,
            PRIMARY KEY (dialogue_id, turn_index)
        );

        CREATE TABLE dialogue_attempts (
            dialogue_id TEXT NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
            judge TEXT NOT NULL,
            attempt INTEGER NOT NULL CHECK (attempt >= 1),
            binary_verdicts INTEGER NOT NULL DEFAULT 0 CHECK (binary_verdicts IN (0, 1)),
            source TEXT NOT NULL CHECK (source IN ('import', 'run')),
            source_path TEXT,
            failure TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (dialogue_id, judge, attempt)
        );
        CREATE INDEX idx_dialogue_attempts_judge ON dialogue_attempts(judge, attempt);
        CREATE INDEX idx_dialogue_attempts_run ON dialogue_attempts(run_id);

        CREATE TABLE dialogue_predictions (
            dialogue_id TEXT NOT NULL,
            judge TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            turn_index INTEGER NOT NULL,
            category INTEGER CHECK (category IS NULL OR category IN (1, 2, 3)),
            key TEXT,
            phase INTEGER,
            violation INTEGER NOT NULL CHECK (violation IN (0, 1)),
            reason TEXT,
            PRIMARY KEY (dialogue_id, judge, attempt, turn_index),
            FOREIGN KEY (dialogue_id, judge, attempt)
                REFERENCES dialogue_attempts(dialogue_id, judge, attempt) ON DELETE CASCADE
        );

        CREATE TABLE dialogue_review_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            dialogue_id TEXT NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
            judge TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            turn_index INTEGER NOT NULL,
            reviewer TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('label', 'undo', 'skip')),
            error_type TEXT CHECK (error_type IS NULL OR error_type IN
                ('scope_misattribution', 'overly_strict', 'reasoning_chain',
                 'ignored_evidence', 'non_equivalent', 'other')),
            note TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_dialogue_review_events_turn
            ON dialogue_review_events(dialogue_id, judge, attempt, turn_index, reviewer, id);
        CREATE INDEX idx_dialogue_review_events_reviewer ON dialogue_review_events(reviewer, id);

        CREATE VIEW current_dialogue_reviews AS
        SELECT e.* FROM dialogue_review_events e
        JOIN (
            SELECT dialogue_id, judge, attempt, turn_index, reviewer, MAX(id) AS id
            FROM dialogue_review_events WHERE action IN ('label', 'undo')
            GROUP BY dialogue_id, judge, attempt, turn_index, reviewer
        ) last ON last.id = e.id
        WHERE e.action = 'label';

        CREATE TABLE dialogue_variants (
            id TEXT PRIMARY KEY,
            dialogue_id TEXT NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
            turn_index INTEGER NOT NULL,
            round INTEGER NOT NULL CHECK (round >= 1),
            category INTEGER NOT NULL CHECK (category IN (2, 3)),
            key TEXT NOT NULL,
            phase INTEGER,
            original_guideline TEXT NOT NULL,
            modified_guideline TEXT,
            original_reply TEXT NOT NULL,
            new_reply TEXT,
            behaviour_changed INTEGER CHECK (behaviour_changed IN (0, 1)),
            violation_detected INTEGER CHECK (violation_detected IN (0, 1)),
            kept INTEGER NOT NULL DEFAULT 0 CHECK (kept IN (0, 1)),
            reason TEXT,
            failure TEXT,
            run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_dialogue_variants_dialogue ON dialogue_variants(dialogue_id, turn_index);
        CREATE INDEX idx_dialogue_variants_run ON dialogue_variants(run_id);
        """,
    )


@migration
def m007_run_progress(db: Database) -> None:
    # A run's last sign of life, refreshed with the counters it writes as it works: a run whose
    # process is gone or whose heartbeat went stale is shown as interrupted and no longer holds
    # its stage against an identical run (store.pipeline.runs.claim).
    db.execute("ALTER TABLE runs ADD COLUMN heartbeat_at TEXT")


@migration
def m008_compass_reference_rules(db: Database) -> None:
    # The public COMPASS configuration gives the short denied-edge form its own strategies, one
    # of which (statistical_inference) m005's CHECK does not list; and an organisation may ship
    # its own explicit-refusal system prompt (system_prompts/explicit_refusal_prompts/<Org>.txt).
    # The CHECK is widened in place by SQLite's documented procedure for relaxing a constraint
    # (writable_schema, then a schema_version bump): rebuilding compass_queries inside the
    # migration's transaction would cascade-delete every response and judgment, since foreign
    # keys cannot be switched off inside a transaction. Rows that met the old CHECK meet this one.
    import re

    db.execute("ALTER TABLE worlds ADD COLUMN explicit_refusal_prompt TEXT")
    old = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' "
                     "AND name = 'compass_queries'").fetchone()[0]
    check = re.search(r"\bstrategy\s+IN\s*\(([^)]*)\)", old, re.IGNORECASE)
    if check is None:
        return
    strategies = ("context_overflow", "hypothetical_scenario", "indirect_reference",
                  "educational_context", "analogical_reasoning", "regulatory_interpretation",
                  "statistical_inference")
    new = old[:check.start(1)] + ", ".join(f"'{s}'" for s in strategies) + old[check.end(1):]
    version = int(db.execute("PRAGMA schema_version").fetchone()[0])
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' "
                   "AND name = 'compass_queries'", [new])
        db.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")


@migration
def m009_direction_by_item_kind(db: Database) -> None:
    # The direction of an error is derived from the marks and the contract items' kinds (a
    # missing required content item: over-enforcement; a missing gate, route or action item or
    # a present forbidden item: under-enforcement). Rows written before that rule counted any
    # missing required item as over-enforcement; this recomputes the derived column of every
    # judgment, label and adjudication that carries its marks. Nothing else changes (events
    # stay append-only: only the derived `direction` is brought in line with the marks).
    # Full-policy judgments carry no marks and keep their direction until judged again.
    import json

    from copal_tui.domain.contract import evaluate, item_kinds

    contracts = {
        rid: (json.loads(req), json.loads(forb))
        for rid, req, forb in db.execute(
            "SELECT r.id, i.required, i.forbidden FROM responses r JOIN items i "
            "ON i.id = r.item_id").fetchall()
    }
    for table, key in (("judgments", "id"), ("label_events", "id"), ("adjudications", "id")):
        rows = db.execute(f"SELECT {key}, response_id, observed FROM {table} "
                          "WHERE observed IS NOT NULL AND error = 1").fetchall()
        updates = []
        for row_id, response_id, observed in rows:
            contract = contracts.get(response_id)
            if contract is None:
                continue
            req, forb = contract
            verdict = evaluate([c["id"] for c in req], [c["id"] for c in forb],
                               json.loads(observed), item_kinds(req))
            updates.append((verdict.direction.value, row_id))
        db.conn.executemany(f"UPDATE {table} SET direction = ? WHERE {key} = ?", updates)
