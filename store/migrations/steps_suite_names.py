"""Migration m014: the annotation log and campaigns name a suite as its descriptor does.

Append-only like the others: never edit it once it has landed, add a new step.

What it does, in the migration's one transaction:
- the dialogue suite is spelled `dialogue` (it was stored as `dialogues`) in `annotations`,
  `annotation_leases` and `campaigns`; its default campaigns are renamed to match
  (`default:dialogue`, `default:dialogue:<judge>`), with their subjects, starts and the log's
  `campaign` column;
- `annotations.suite` and `campaigns.suite` lose the CHECK that listed three names: which suites
  exist is the code's registry of suite descriptors (`copal_tui.domain.suites`), checked by the
  annotation queue before every write, so a new suite needs no rebuild of the log.
- the trigger that deletes a dialogue's annotations with the dialogue matches the new name.

The CHECK is removed by rewriting the tables' definitions in `sqlite_schema` (SQLite's
documented procedure for dropping a CHECK constraint: the stored rows are unchanged, and every
row already satisfies the looser definition), because rebuilding `campaigns` would fire the
ON DELETE CASCADE of its subjects and starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

from store.migrations.registry import migration
from store.migrations.script import run_script as _exec

OLD_CHECK = "suite TEXT NOT NULL CHECK (suite IN ('copal', 'compass', 'dialogues'))"
OLD_DEFAULT = "default:dialogues"
NEW_DEFAULT = "default:dialogue"

_TRIGGER = """
DROP TRIGGER annotations_dialogue_gone;
-- A dialogue subject is a JSON array whose first element is the dialogue id; the CASE keeps
-- json_extract off other suites' subjects, which need not be JSON.
CREATE TRIGGER annotations_dialogue_gone AFTER DELETE ON dialogues BEGIN
    DELETE FROM annotations WHERE suite = 'dialogue'
        AND (CASE WHEN suite = 'dialogue' THEN json_extract(subject, '$[0]') END) = OLD.id;
    DELETE FROM annotation_leases WHERE suite = 'dialogue'
        AND (CASE WHEN suite = 'dialogue' THEN json_extract(subject, '$[0]') END) = OLD.id;
    DELETE FROM campaign_subjects
        WHERE campaign IN (SELECT name FROM campaigns WHERE suite = 'dialogue')
        AND (CASE WHEN json_valid(subject) THEN json_extract(subject, '$[0]') END) = OLD.id;
END;
"""


@migration
def m014_suite_names(db: Database) -> None:
    _drop_suite_checks(db)
    _rename_dialogue_campaigns(db)
    for table in ("annotations", "annotation_leases", "campaigns"):
        db.execute(f"UPDATE {table} SET suite = 'dialogue' WHERE suite = 'dialogues'")
    _exec(db, _TRIGGER)


def _drop_suite_checks(db: Database) -> None:
    version = db.execute("PRAGMA schema_version").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    try:
        for table in ("annotations", "campaigns"):
            sql = db.execute("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?",
                             [table]).fetchone()[0]
            if OLD_CHECK not in sql:
                raise RuntimeError(f"m014: {table} is not as m010 created it")
            db.execute("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?",
                       [sql.replace(OLD_CHECK, "suite TEXT NOT NULL"), table])
        # A new schema version makes every connection re-read the definitions.
        db.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")


def _rename_dialogue_campaigns(db: Database) -> None:
    # campaign_subjects and campaign_starts refer to campaigns(name) without ON UPDATE: the
    # checks wait for the end of the transaction, when parent and children agree again.
    db.execute("PRAGMA defer_foreign_keys = ON")
    names = [r[0] for r in db.execute(
        "SELECT name FROM campaigns WHERE suite = 'dialogues' AND (name = ? OR name LIKE ?)",
        [OLD_DEFAULT, OLD_DEFAULT + ":%"]).fetchall()]
    for old in names:
        new = NEW_DEFAULT + old[len(OLD_DEFAULT):]
        for table, column in (("campaigns", "name"), ("campaign_subjects", "campaign"),
                              ("campaign_starts", "campaign"), ("annotations", "campaign")):
            db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", [new, old])
