"""`copal migrate` and `copal init` report the migrations they applied themselves: when another
process migrates the same old database first, the later run applied nothing and says so."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlite_utils import Database as SUDatabase

from store import schema_state
from store.db import connect
from store.migrations import apply
from store.migrations.apply import MIGRATIONS
from tests.db_support import query_rows

STOP_BEFORE = "m010_annotation_log"


def _old_database(path: Path) -> list[str]:
    """A database from before STOP_BEFORE; returns the names still pending on it."""
    db = connect(path, create=True)
    MIGRATIONS.apply(SUDatabase(db.conn), stop_before=STOP_BEFORE)
    todo = schema_state.pending_names(db)
    db.close()
    return todo


@pytest.mark.parametrize("command", ["migrate", "init"])
def test_a_migration_run_by_another_process_meanwhile_is_not_reported_again(
        cli, db_path, monkeypatch, command):
    todo = _old_database(db_path)
    assert len(todo) >= 2
    real_write = apply.write
    other: list[subprocess.CompletedProcess[str]] = []

    @contextmanager
    def another_migrate_first(db: object) -> Iterator[object]:
        # This run has seen the database as old; before it takes the write lock, a second
        # `copal migrate` (another process) upgrades the same file.
        if not other:
            other.append(subprocess.run(
                [sys.executable, "-m", "copal_tui", "--db", str(db_path), "migrate"],
                capture_output=True, text=True, timeout=120))
        with real_write(db) as inner:
            yield inner

    monkeypatch.setattr(apply, "write", another_migrate_first)
    result = cli(command)
    assert other and other[0].returncode == 0, other[0].stderr if other else "not run"
    assert f"{len(todo)} migration(s) applied: {', '.join(todo)}" in other[0].stdout
    assert result.exit_code == 0, result.output
    assert "0 migration(s) applied" in result.stdout, result.stdout
    assert not any(name in result.stdout for name in todo)
    # Each migration is recorded once, by the run that applied it.
    recorded = [r["name"] for r in query_rows(
        db_path, "SELECT name FROM _sqlite_migrations WHERE migration_set = 'copal'")]
    assert sorted(recorded) == sorted(schema_state.NAMES)

