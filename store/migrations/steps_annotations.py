"""Migration m010: one annotation log for every suite, one lease table, frozen campaigns.

Listed in `store.migrations` after m009. Append-only like the others: never edit it once it
has landed, add a new step.

What it does, in one transaction:
- creates `annotations` (the log; see copal_tui.domain.annotation.subjects for subjects, roles,
  actions and payloads), the `current_annotations` view, `annotation_leases`, `campaigns`,
  `campaign_subjects`, `campaign_starts` and `annotation_origins`;
- copies every event of `label_events`, `adjudications`, `compass_label_events` and
  `dialogue_review_events` into the log: label events keep their ids, the others follow in
  that order, each table in its own id order (so every "latest event" is the same one as
  before), with their annotators, timestamps, content hashes and every column in the payload;
  `annotation_origins` maps each copied row to its table and old id;
- turns the COPAL queue order (`queue_order`, the responses still eligible) into the default
  COPAL campaign with the same positions, and freezes every annotator who had labelled or held
  a lease at its whole length (their queue and denominator are what they were), and carries the
  live and expired leases over;
- drops the four event tables, their four "current" views, `queue_order` and `queue_leases`.
  No compatibility views are left: a view named like an old table would look writable to old
  SQL and keep a second vocabulary alive, and nothing outside the code reads them.
Deleting a response, a COMPASS response or a dialogue still deletes its annotations, leases
and campaign places, as the old foreign keys' cascades did (triggers, since a subject is a
suite-specific key no foreign key can name).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

from store.migrations.registry import migration
from store.migrations.script import run_script as _exec

_SCHEMA = """
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    suite TEXT NOT NULL CHECK (suite IN ('copal', 'compass', 'dialogues')),
    subject TEXT NOT NULL,
    annotator TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'annotator' CHECK (role IN ('annotator', 'adjudicator')),
    action TEXT NOT NULL CHECK (action IN ('label', 'undo', 'skip', 'note', 'flag')),
    payload TEXT CHECK (payload IS NULL OR json_valid(payload)),
    content_sha256 TEXT,
    campaign TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_annotations_subject ON annotations(suite, subject, role, annotator, id);
CREATE INDEX idx_annotations_annotator ON annotations(annotator, suite, role, id);

-- Where each event copied by m010 came from (rows written later have none): `id` is the
-- event's id in `annotations` (no foreign key: this is a record of history, and an event
-- deleted with its response leaves the record of where it came from).
CREATE TABLE annotation_origins (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    source_id INTEGER NOT NULL,
    UNIQUE (source, source_id)
);

-- Current labels (role annotator: per subject and annotator) and current decisions (role
-- adjudicator: per subject): the latest label/undo event when it is a label.
CREATE VIEW current_annotations AS
SELECT e.* FROM annotations e
WHERE e.action = 'label' AND NOT EXISTS (
    SELECT 1 FROM annotations u WHERE u.suite = e.suite AND u.subject = e.subject
    AND u.role = e.role AND (u.role = 'adjudicator' OR u.annotator = e.annotator)
    AND u.id > e.id AND u.action IN ('label', 'undo'));

-- Numbered slots per subject: a subject is labelled by up to `overlap` annotators (one
-- adjudicator), slot k belongs to one person at a time, a person holds one slot of a subject.
CREATE TABLE annotation_leases (
    suite TEXT NOT NULL,
    subject TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('annotator', 'adjudicator')),
    slot INTEGER NOT NULL CHECK (slot >= 0),
    annotator TEXT NOT NULL,
    leased_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (suite, subject, role, slot),
    UNIQUE (suite, subject, role, annotator)
);
CREATE INDEX idx_annotation_leases_annotator
    ON annotation_leases(suite, role, annotator, expires_at);

-- A campaign is a frozen, ordered list of subjects of one suite. `sample` campaigns are drawn
-- once (`copal campaign create`); a `default` campaign is a suite's queue order, appended to
-- when new subjects become eligible, of which each annotator sees the prefix frozen when they
-- started (`campaign_starts.cutoff`).
CREATE TABLE campaigns (
    name TEXT PRIMARY KEY,
    suite TEXT NOT NULL CHECK (suite IN ('copal', 'compass', 'dialogues')),
    kind TEXT NOT NULL CHECK (kind IN ('sample', 'default')),
    spec TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE TABLE campaign_subjects (
    campaign TEXT NOT NULL REFERENCES campaigns(name) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position >= 1),
    subject TEXT NOT NULL,
    stratum TEXT NOT NULL,
    PRIMARY KEY (campaign, position),
    UNIQUE (campaign, subject)
);
CREATE INDEX idx_campaign_subjects_subject ON campaign_subjects(subject);
CREATE TABLE campaign_starts (
    campaign TEXT NOT NULL REFERENCES campaigns(name) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    cutoff INTEGER NOT NULL,
    frozen_at TEXT NOT NULL,
    PRIMARY KEY (campaign, annotator)
);

CREATE TRIGGER annotations_copal_gone AFTER DELETE ON responses BEGIN
    DELETE FROM annotations WHERE suite = 'copal' AND subject = OLD.id;
    DELETE FROM annotation_leases WHERE suite = 'copal' AND subject = OLD.id;
    DELETE FROM campaign_subjects WHERE subject = OLD.id
        AND campaign IN (SELECT name FROM campaigns WHERE suite = 'copal');
END;
CREATE TRIGGER annotations_compass_gone AFTER DELETE ON compass_responses BEGIN
    DELETE FROM annotations WHERE suite = 'compass' AND subject = OLD.id;
    DELETE FROM annotation_leases WHERE suite = 'compass' AND subject = OLD.id;
    DELETE FROM campaign_subjects WHERE subject = OLD.id
        AND campaign IN (SELECT name FROM campaigns WHERE suite = 'compass');
END;
-- A dialogue subject is a JSON array whose first element is the dialogue id; the CASE keeps
-- json_extract off other suites' subjects, which need not be JSON.
CREATE TRIGGER annotations_dialogue_gone AFTER DELETE ON dialogues BEGIN
    DELETE FROM annotations WHERE suite = 'dialogues'
        AND (CASE WHEN suite = 'dialogues' THEN json_extract(subject, '$[0]') END) = OLD.id;
    DELETE FROM annotation_leases WHERE suite = 'dialogues'
        AND (CASE WHEN suite = 'dialogues' THEN json_extract(subject, '$[0]') END) = OLD.id;
    DELETE FROM campaign_subjects
        WHERE campaign IN (SELECT name FROM campaigns WHERE suite = 'dialogues')
        AND (CASE WHEN json_valid(subject) THEN json_extract(subject, '$[0]') END) = OLD.id;
END;
"""

_DROP = """
DROP VIEW current_labels;
DROP VIEW current_adjudications;
DROP VIEW current_compass_labels;
DROP VIEW current_dialogue_reviews;
DROP TABLE label_events;
DROP TABLE adjudications;
DROP TABLE compass_label_events;
DROP TABLE dialogue_review_events;
DROP TABLE queue_leases;
DROP TABLE queue_order;
"""

# The payload keys of a label per suite, in the payload models' order, with the SQL that reads
# each from the old row (COMPASS flags become JSON booleans, marks a JSON array).
_COPAL = [("observed", "json(observed)"), ("error", "error"), ("direction", "direction"),
          ("facet", "facet"), ("note", "note")]
_COMPASS = [("refused", "json(CASE refused WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)"),
            ("compliant", "json(CASE compliant WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)"),
            ("failure_mode", "failure_mode"), ("note", "note")]
_REMARK = [("note", "note"), ("flag", "flag")]


def _payload(full: list[tuple[str, str]], extra: list[tuple[str, str]]) -> str:
    """SQL for a payload with every key of `full` (nulls kept, as the models write them) and
    each column of `extra` added when it is not null: no old column is dropped."""
    out = "json_object(" + ", ".join(f"'{k}', {v}" for k, v in full) + ")" if full else "'{}'"
    for key, value in extra:
        out = f"CASE WHEN {value} IS NULL THEN {out} ELSE json_set({out}, '$.{key}', {value}) END"
    return out if full else f"NULLIF({out}, '{{}}')"


def _by_action(label: str, remark: str, bare: str) -> str:
    return (f"CASE WHEN action IN ('label', 'decide') THEN {label} "
            f"WHEN action IN ('note', 'flag') THEN {remark} ELSE {bare} END")


@migration
def m010_annotation_log(db: Database) -> None:
    _exec(db, _SCHEMA)
    flag = [("flag", "flag")]
    copal = _by_action(_payload(_COPAL, flag), _payload(_REMARK, _COPAL[:4]),
                       _payload([], _COPAL + flag))
    _copy(db, "label_events", "'copal'", "response_id", "annotator", "'annotator'", "action",
          copal)
    adjudication = _by_action(_payload(_COPAL, []), "NULL", _payload([], _COPAL))
    _copy(db, "adjudications", "'copal'", "response_id", "adjudicator", "'adjudicator'",
          "CASE action WHEN 'decide' THEN 'label' ELSE action END", adjudication)
    compass = _by_action(_payload(_COMPASS, []), "NULL", _payload([], _COMPASS))
    _copy(db, "compass_label_events", "'compass'", "response_id", "annotator", "'annotator'",
          "action", compass)
    _copy_reviews(db)
    db.execute("INSERT INTO annotation_leases (suite, subject, role, slot, annotator, "
               "leased_at, expires_at) SELECT 'copal', response_id, CASE queue WHEN 'label' "
               "THEN 'annotator' ELSE 'adjudicator' END, slot, annotator, leased_at, "
               "expires_at FROM queue_leases")
    _default_campaign(db)
    _exec(db, _DROP)


def _base(db: Database) -> int:
    return int(db.execute("SELECT COALESCE(MAX(id), 0) FROM annotations").fetchone()[0])


def _copy(db: Database, table: str, suite: str, subject: str, who: str, role: str,
          action: str, payload: str) -> None:
    # Label events keep their ids (the base is 0 then and ROW_NUMBER would renumber them, so
    # they are copied as they are); the other tables are numbered on after the last id.
    base = _base(db)
    new_id = "id" if table == "label_events" else f"{base} + ROW_NUMBER() OVER (ORDER BY id)"
    db.execute(
        "INSERT INTO annotations (id, suite, subject, annotator, role, action, payload, "
        f"content_sha256, created_at) SELECT {new_id}, {suite}, {subject}, {who}, {role}, "
        f"{action}, {payload}, content_sha256, created_at FROM {table} ORDER BY id")
    db.execute(f"INSERT INTO annotation_origins (id, source, source_id) SELECT {new_id}, "
               f"'{table}', id FROM {table} ORDER BY id")


def _copy_reviews(db: Database) -> None:
    # In Python: the subject must be written exactly as copal_tui.domain.annotation.subjects
    # writes it (compact JSON), which SQLite's json_array matches only for plain text.
    from copal_tui.domain.annotation.subjects import dialogue_subject

    base = _base(db)
    rows = db.execute("SELECT id, dialogue_id, judge, attempt, turn_index, reviewer, action, "
                      "error_type, note, created_at FROM dialogue_review_events "
                      "ORDER BY id").fetchall()
    out, origins = [], []
    for n, (old, did, judge, attempt, turn, reviewer, action, error_type, note,
            created) in enumerate(rows, 1):
        if action == "label":
            payload: dict | None = {"error_type": error_type, "note": note}
        else:
            payload = {k: v for k, v in (("error_type", error_type), ("note", note))
                       if v is not None} or None
        out.append((base + n, "dialogues", dialogue_subject(did, judge, attempt, turn),
                    reviewer, action, None if payload is None else
                    json.dumps(payload, ensure_ascii=False, separators=(",", ":")), created))
        origins.append((base + n, "dialogue_review_events", old))
    db.conn.executemany("INSERT INTO annotations (id, suite, subject, annotator, role, action, "
                        "payload, created_at) VALUES (?, ?, ?, ?, 'annotator', ?, ?, ?)", out)
    db.conn.executemany("INSERT INTO annotation_origins (id, source, source_id) "
                        "VALUES (?, ?, ?)", origins)


def _default_campaign(db: Database) -> None:
    # The responses the old queue still offered (its walk re-checked the selection), at their
    # positions; everyone who had started it keeps all of it as their frozen queue.
    now = db.execute("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')").fetchone()[0]
    placed = db.execute("SELECT COUNT(*) FROM queue_order").fetchone()[0]
    if not placed:
        return
    db.execute("INSERT INTO campaigns (name, suite, kind, spec, created_at) "
               "VALUES ('default:copal', 'copal', 'default', '{}', ?)", [now])
    db.execute(
        "INSERT INTO campaign_subjects (campaign, position, subject, stratum) "
        "SELECT 'default:copal', q.position, q.response_id, q.stratum FROM queue_order q "
        "JOIN responses r ON r.id = q.response_id JOIN items i ON i.id = q.item_id "
        "LEFT JOIN items p ON p.id = i.parent_item_id WHERE (i.selected = 1 OR p.selected = 1) "
        "AND r.text IS NOT NULL AND r.failure IS NULL ORDER BY q.position")
    db.execute(
        "INSERT INTO campaign_starts (campaign, annotator, cutoff, frozen_at) "
        "SELECT 'default:copal', annotator, (SELECT COALESCE(MAX(position), 0) FROM "
        "campaign_subjects WHERE campaign = 'default:copal'), ? FROM ("
        "SELECT annotator FROM label_events UNION SELECT annotator FROM queue_leases "
        "WHERE queue = 'label')", [now])
