"""Migration m014 on a store written at m013: the dialogue suite's stored name becomes
`dialogue` in the log, the leases and the campaigns (its default campaigns renamed with their
subjects, starts and log rows), other suites' rows are untouched, no foreign key is left
dangling, the suite CHECK is gone (a suite the code registers needs no rebuild) and deleting a
dialogue still deletes its annotations, leases and campaign places."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database as SUDatabase
from sqlite_utils import Migrations

from store.migrations.apply import MIGRATIONS
from store.migrations.registry import STEPS
from store.schema_state import SET

NOW = "2026-01-01T00:00:00Z"
SUBJECT = '["d1","judge-a",1,0]'
OTHER_SUBJECT = '["d2","judge-a",1,0]'


def _store_at_m013(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    before = Migrations(SET)
    for step in STEPS:
        if step.__name__ < "m014":
            before()(step)
    before.apply(SUDatabase(conn))
    for did in ("d1", "d2"):
        conn.execute("INSERT INTO dialogues (id, domain, created_at) VALUES (?, 'bank', ?)",
                     (did, NOW))
    campaigns = [("default:dialogues:judge-a", "dialogues", "default"),
                 ("default:dialogues", "dialogues", "default"),
                 ("my-dialogues", "dialogues", "sample"),
                 ("default:copal", "copal", "default")]
    for name, suite, kind in campaigns:
        conn.execute("INSERT INTO campaigns (name, suite, kind, created_at) VALUES (?, ?, ?, ?)",
                     (name, suite, kind, NOW))
        subject = "r1" if suite == "copal" else SUBJECT
        conn.execute("INSERT INTO campaign_subjects (campaign, position, subject, stratum) "
                     "VALUES (?, 1, ?, 's')", (name, subject))
        conn.execute("INSERT INTO campaign_starts (campaign, annotator, cutoff, frozen_at) "
                     "VALUES (?, 'ann', 1, ?)", (name, NOW))
    log = [("dialogues", SUBJECT, "default:dialogues:judge-a"),
           ("dialogues", OTHER_SUBJECT, "my-dialogues"),
           ("copal", "r1", "default:copal")]
    for suite, subject, campaign in log:
        conn.execute("INSERT INTO annotations (suite, subject, annotator, action, payload, "
                     "campaign, created_at) VALUES (?, ?, 'ann', 'label', '{}', ?, ?)",
                     (suite, subject, campaign, NOW))
    conn.execute("INSERT INTO annotation_leases (suite, subject, role, slot, annotator, "
                 "leased_at, expires_at) VALUES ('dialogues', ?, 'annotator', 0, 'ann', ?, ?)",
                 (SUBJECT, NOW, NOW))
    return conn


def test_m014_renames_the_dialogue_suite_and_its_default_campaigns(tmp_path: Path) -> None:
    conn = _store_at_m013(tmp_path / "old.db")
    MIGRATIONS.apply(SUDatabase(conn))

    assert conn.execute("SELECT name, suite FROM campaigns ORDER BY name").fetchall() == [
        ("default:copal", "copal"), ("default:dialogue", "dialogue"),
        ("default:dialogue:judge-a", "dialogue"), ("my-dialogues", "dialogue")]
    assert conn.execute("SELECT campaign FROM campaign_subjects ORDER BY campaign").fetchall() \
        == [("default:copal",), ("default:dialogue",), ("default:dialogue:judge-a",),
            ("my-dialogues",)]
    assert conn.execute("SELECT campaign FROM campaign_starts ORDER BY campaign").fetchall() \
        == [("default:copal",), ("default:dialogue",), ("default:dialogue:judge-a",),
            ("my-dialogues",)]
    assert conn.execute("SELECT suite, subject, campaign FROM annotations ORDER BY id"
                        ).fetchall() == [("dialogue", SUBJECT, "default:dialogue:judge-a"),
                                         ("dialogue", OTHER_SUBJECT, "my-dialogues"),
                                         ("copal", "r1", "default:copal")]
    assert conn.execute("SELECT suite FROM annotation_leases").fetchall() == [("dialogue",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_m014_drops_the_suite_check_and_keeps_the_dialogue_trigger(tmp_path: Path) -> None:
    conn = _store_at_m013(tmp_path / "old.db")
    try:
        conn.execute("INSERT INTO annotations (suite, subject, annotator, action, created_at) "
                     "VALUES ('toy', 'x', 'ann', 'skip', ?)", (NOW,))
    except sqlite3.IntegrityError as exc:
        assert "CHECK" in str(exc)
    else:
        raise AssertionError("m013's CHECK accepted an unknown suite")
    MIGRATIONS.apply(SUDatabase(conn))
    conn.execute("INSERT INTO annotations (suite, subject, annotator, action, created_at) "
                 "VALUES ('toy', 'x', 'ann', 'skip', ?)", (NOW,))
    conn.execute("INSERT INTO campaigns (name, suite, kind, created_at) "
                 "VALUES ('toy-c', 'toy', 'sample', ?)", (NOW,))

    conn.execute("DELETE FROM dialogues WHERE id = 'd1'")
    assert conn.execute("SELECT COUNT(*) FROM annotations WHERE subject = ?",
                        (SUBJECT,)).fetchone() == (0,)
    assert conn.execute("SELECT COUNT(*) FROM annotation_leases").fetchone() == (0,)
    assert conn.execute("SELECT campaign FROM campaign_subjects WHERE subject = ?",
                        (SUBJECT,)).fetchall() == []
    # d2's review and the other suites' rows stay.
    assert conn.execute("SELECT suite, subject FROM annotations ORDER BY id").fetchall() == [
        ("dialogue", OTHER_SUBJECT), ("copal", "r1"), ("toy", "x")]
