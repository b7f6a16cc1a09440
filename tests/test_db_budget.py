"""Reads with a time budget (`Database.within`): the UI thread tries a cheap query inline and
hands it to a worker when SQLite interrupts it; the connection is left as it was. And bulk
reads as plain tuples (`Database.tuples`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.db import BUSY_TIMEOUT_MS, OverBudget, connect

_COUNT = ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
          "SELECT COUNT(*) FROM c")


def test_a_read_over_its_budget_is_interrupted_and_the_connection_restored(
        tmp_path: Path) -> None:
    db = connect(tmp_path / "budget.db", create=True)
    try:
        with pytest.raises(OverBudget, match="not done within 0.01 s"), db.within(0.01):
            db.execute(_COUNT, (10**9,)).fetchone()  # minutes of work without the budget
        with db.within(5):  # a read within its budget is untouched
            assert db.execute(_COUNT, (1000,)).fetchone()[0] == 1000
        # Afterwards: no progress handler (a long read runs to the end), the usual busy timeout.
        assert db.execute(_COUNT, (300_000,)).fetchone()[0] == 300_000
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    finally:
        db.conn.close()


def test_tuples_gives_plain_tuples_and_leaves_the_connection_s_rows_alone(tmp_path: Path) -> None:
    db = connect(tmp_path / "t.db", create=True)
    db.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    db.conn.executemany("INSERT INTO t VALUES (?, ?)", [(1, "x"), (2, "y")])
    assert db.tuples("SELECT a, b FROM t ORDER BY a").fetchall() == [(1, "x"), (2, "y")]
    assert type(db.tuples("SELECT a FROM t WHERE a = ?", (2,)).fetchone()) is tuple
    # Every other read still gets sqlite3.Row (columns by name).
    assert db.execute("SELECT a, b FROM t ORDER BY a").fetchone()["b"] == "x"
