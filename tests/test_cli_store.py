"""Store commands through the public CLI: init/migrate, pragmas, stats, schema, backup, errors."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest
from sqlite_utils import Database

from copal_tui import __version__
from copal_tui.domain.annotation.payloads import DialogueReview
from copal_tui.services.annotation.queue import AnnotationQueue
from store import schema_state
from store.db import connect
from store.migrations.apply import MIGRATIONS, pending
from tests.db_support import query_rows
from tests.dialogue_tui_support import build_dialogue_db


def test_blank_database_migrates_to_latest(cli, db_path):
    sqlite3.connect(db_path).close()  # an empty file: only `copal init` makes it a database
    refused = cli("stats")
    assert refused.exit_code != 0
    assert "copal init" in refused.stderr and "Traceback" not in refused.stderr
    done = cli("init")
    assert done.exit_code == 0, done.output
    db = connect(db_path)
    assert pending(db) == []
    names = [m.name for m in MIGRATIONS.applied(Database(db.conn))]
    assert names == [m.name for m in MIGRATIONS._migrations]
    assert schema_state.applied(db) == names  # the light reader agrees with sqlite-utils
    assert cli("stats", "--json").exit_code == 0


def test_migration_names_come_from_the_step_functions_without_sqlite_utils():
    # One list: the names the start-up check reads are the registered step functions' own,
    # and reading them loads no sqlite-utils (every command's start-up path does this).
    code = ("import sys; from store import schema_state; "
            "from store.migrations.registry import STEPS; "
            "assert list(schema_state.NAMES) == [s.__name__ for s in STEPS], 'names'; "
            "assert 'sqlite_utils' not in sys.modules, 'sqlite_utils loaded'; "
            "print(len(STEPS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(MIGRATIONS._migrations)
    assert list(schema_state.NAMES) == [m.name for m in MIGRATIONS._migrations]


def test_a_step_reusing_a_number_or_misnamed_is_refused_when_registered():
    from store.migrations import registry

    saved = list(registry.STEPS)
    try:
        def m002_other(db: object) -> None:  # m002_item_gate_route has that number
            pass

        def add_column(db: object) -> None:
            pass

        with pytest.raises(ValueError, match="has the number of m002_item_gate_route"):
            registry.migration(m002_other)
        with pytest.raises(ValueError, match="mNNN_what_it_does"):
            registry.migration(add_column)
        assert saved == registry.STEPS  # nothing registered
    finally:
        registry.STEPS[:] = saved


def test_connection_pragmas(initialised):
    db = connect(initialised)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 30000


def test_every_foreign_key_is_indexed(initialised):
    # Each foreign key (a composite one as a whole) must be the leading columns of an index,
    # or a cascade/delete scans the child table.
    db = Database(connect(initialised).conn)
    for table in db.table_names():
        prefixes = []
        for idx in db.execute(f"PRAGMA index_list([{table}])").fetchall():
            cols = db.execute(f"PRAGMA index_info([{idx['name']}])").fetchall()
            prefixes.append([c["name"] for c in sorted(cols, key=lambda c: c["seqno"])])
        fks: dict[int, list[str]] = {}
        for fk in db.execute(f"PRAGMA foreign_key_list([{table}])").fetchall():
            fks.setdefault(fk["id"], []).append(fk["from"])
        for cols in fks.values():
            assert any(p[:len(cols)] == cols for p in prefixes), f"{table}.{cols} has no index"


def test_stats_json_has_integer_counts(cli, initialised, samples):
    cli("import", str(samples))
    stats = json.loads(cli("stats", "--json").stdout)
    for key in ("worlds", "policies", "clauses", "compositions", "items", "selected_items",
                "responses", "judgments", "label_events", "labels"):
        assert isinstance(stats[key], int), key
    conn = sqlite3.connect(initialised)
    assert stats["policies"] == conn.execute("SELECT COUNT(*) FROM policies").fetchone()[0]
    assert stats["labels"] == conn.execute(
        "SELECT COUNT(DISTINCT subject || '|' || annotator) FROM annotations "
        "WHERE suite = 'copal' AND role = 'annotator'").fetchone()[0]


def test_version_and_schema(cli):
    assert __version__ in cli("--version").stdout
    doc = json.loads(cli("schema").stdout)
    world = doc["world_file"]
    assert set(world["required"]) >= {"id", "name", "industry", "use_case", "risk_tier",
                                      "context", "policies"}
    tags = json.dumps(doc["interchange_record"])
    for t in ("world", "policy", "clause", "composition", "item", "response", "judgment",
              "label", "adjudication"):
        assert f'"const": "{t}"' in tags or f'"{t}"' in tags


def test_backup_is_a_consistent_copy(cli, initialised, samples, tmp_path):
    cli("import", str(samples / "harbor_clinics.yaml"))
    out = tmp_path / "b" / "copy.db"
    result = cli("backup", str(out))
    assert result.exit_code == 0 and "quick_check: ok" in result.stdout
    conn = sqlite3.connect(out)
    assert conn.execute("SELECT COUNT(*) FROM policies").fetchone()[0] == 23
    again = cli("backup", str(out))
    assert again.exit_code != 0 and "already exists" in again.stderr


def test_missing_database_is_one_line_error(cli, tmp_path):
    result = cli("stats", db=tmp_path / "nope.db")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "copal init" in lines[0]


def test_older_database_is_refused_then_upgraded_keeping_data(cli, db_path, samples):
    db = Database(connect(db_path, create=True).conn)
    MIGRATIONS.apply(db, stop_before="m002_item_gate_route")
    db.execute("INSERT INTO worlds (id, name, industry, use_case, risk_tier, context, created_at) "
               "VALUES ('w', 'W', 'i', 'u', 'low', 'c', 'now')")
    db.conn.close()
    refused = cli("import", str(samples / "skyline_air.yaml"))
    assert refused.exit_code != 0 and "m002_item_gate_route" in refused.stderr
    assert "copal migrate" in refused.stderr
    assert "m002_item_gate_route" in cli("migrate").stdout
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    assert json.loads(cli("stats", "--json").stdout)["worlds"] == 2


def test_dialogue_import_of_several_paths_is_one_transaction(cli, initialised, samples,
                                                             tmp_path):
    # The sample conversations import, then a malformed file among the PATHs: nothing stays.
    bad = tmp_path / "bad" / "conversation_00001.json"
    bad.parent.mkdir()
    bad.write_text("{oops", encoding="utf-8")
    result = cli("import", "--from", "complibench", str(samples / "complibench"), str(bad))
    assert result.exit_code != 0
    assert connect(initialised).execute("SELECT COUNT(*) FROM dialogues").fetchone()[0] == 0
    result = cli("import", "--from", "complibench", str(samples / "complibench"))
    assert result.exit_code == 0, result.output
    stored = connect(initialised).execute("SELECT COUNT(*) FROM dialogues").fetchone()[0]
    assert stored > 0 and f"imported {stored} conversation(s)" in result.output


def _attempts(db, judge: str) -> tuple[int, int]:
    """(attempts, predictions) of `judge` stored in `db`."""
    return (query_rows(db, "SELECT COUNT(*) AS n FROM dialogue_attempts WHERE judge = ?",
                       (judge,))[0]["n"],
            query_rows(db, "SELECT COUNT(*) AS n FROM dialogue_predictions WHERE judge = ?",
                       (judge,))[0]["n"])


def test_delete_attempts_removes_a_judges_attempts_and_refuses_what_names_nothing(cli,
                                                                                 tmp_path):
    db = build_dialogue_db(tmp_path)
    kept = _attempts(db, "judge-b")
    before = _attempts(db, "judge-a")
    assert before[0] > 0 and before[1] > 0 and kept[0] > 0
    # A judge, domain or dialogue that names nothing: exit 2, one line naming the close one.
    for args, named in ((["--judge", "judge-c"], "judge-a"),
                        (["--judge", "judge-a", "--domain", "airlines"], "airline"),
                        (["--judge", "judge-a", "--dialogue", "retail/d4"], "retail/d3")):
        refused = cli("delete-attempts", *args, "--yes", db=db)
        assert refused.exit_code == 2, refused.output
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and named in lines[0] and args[-1] in lines[0], refused.stderr
    assert _attempts(db, "judge-a") == before
    # Asked first; a no deletes nothing.
    declined = cli("delete-attempts", "--judge", "judge-a", db=db, input="n\n")
    assert declined.exit_code == 1 and _attempts(db, "judge-a") == before
    # One domain's attempts, then the rest.
    retail = query_rows(db, "SELECT COUNT(*) AS n FROM dialogue_attempts a JOIN dialogues d "
                            "ON d.id = a.dialogue_id WHERE a.judge = 'judge-a' "
                            "AND d.domain = 'retail'")[0]["n"]
    assert 0 < retail < before[0]
    done = cli("delete-attempts", "--judge", "judge-a", "--domain", "retail", "--yes", db=db)
    assert done.exit_code == 0, done.output
    assert f"deleted {retail} attempt(s)" in done.stdout
    assert _attempts(db, "judge-a")[0] == before[0] - retail
    done = cli("delete-attempts", "--judge", "judge-a", db=db, input="y\n")
    assert done.exit_code == 0, done.output
    assert _attempts(db, "judge-a") == (0, 0)
    assert _attempts(db, "judge-b") == kept  # another judge's attempts stay
    assert query_rows(db, "SELECT COUNT(*) AS n FROM dialogues")[0]["n"] == 3
    # Now nothing of judge-a is stored: naming it again is an error, not an empty success.
    again = cli("delete-attempts", "--judge", "judge-a", "--yes", db=db)
    assert again.exit_code == 2 and "judge-a" in again.stderr


def test_delete_attempts_keeps_reviewed_attempts(cli, tmp_path):
    db = build_dialogue_db(tmp_path)
    conn = connect(db)
    queue = AnnotationQueue(conn, "dialogue", "ana", judge="judge-b", overlap=5)
    queue.prepare()
    first = queue.candidate(0)
    assert first is not None
    queue.submit(first, DialogueReview(error_type="other", note=None))
    conn.close()
    before = _attempts(db, "judge-b")
    refused = cli("delete-attempts", "--judge", "judge-b", "--yes", db=db)
    assert refused.exit_code == 2, refused.output
    assert "review" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert _attempts(db, "judge-b") == before
