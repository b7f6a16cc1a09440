"""A database damaged past the pages `copal` checks as it opens it: every way into the terminal
app (`copal tui`, `copal label` of each suite, `copal adjudicate`, the command `copal serve`
starts for each kind of URL, the app `copal demo` opens) stops at its first read with one line
on stderr and exit status 2, no traceback (Textual's would print the SQL and response ids it
was handling), and the file as it was.

The apps run in real processes with Textual's headless driver (the demo's in-process, its stages
stubbed): the damage is met wherever the first screen happens to read, in a handler or a worker.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.serve.auth import Grant
from copal_tui.serve.server import CopalServer
from copal_tui.tui.app import CopalApp
from tests.db_support import copy_db
from tests.tui_label_support import build_db

# What `copal` reads as it opens a database (the schema and the migrations record): kept whole.
KEPT = frozenset({"_sqlite_migrations", "idx__sqlite_migrations_migration_set_name"})
HEADLESS = {**os.environ, "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver"}
DEADLINE_S = 60


@pytest.fixture(scope="module")
def clean_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("clean"), extra_responses=3)


@pytest.fixture
def damaged(clean_db: Path, tmp_path: Path) -> Path:
    db = copy_db(clean_db, tmp_path / "damaged.db")
    corrupt(db)
    return db


def corrupt(db: Path) -> None:
    """Garbage over the first page of every table and index but the migrations record: the
    checks `copal` makes as it opens the file pass, any read of the data meets the damage."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [r[1] for r in conn.execute(
            "SELECT name, rootpage FROM sqlite_master WHERE type IN ('table', 'index') "
            "AND rootpage > 0") if r[0] not in KEPT]
    assert roots and not Path(f"{db}-wal").exists()
    with db.open("r+b") as f:  # no connection is open on it now
        for page in roots:
            f.seek((page - 1) * size)
            f.write(b"\xde\xad\xbe\xef" * (size // 4))


def digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def one_line_refusal(stderr: str, db: Path) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == [f"copal: error: cannot read {db} as a SQLite database: "
                     "database disk image is malformed"], stderr[-3000:]


def run_app(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=HEADLESS,
                          timeout=DEADLINE_S, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", [
    ["tui"],
    ["label", "--annotator", "zed"],
    ["label", "--suite", "compass", "--annotator", "zed"],
    ["label", "--suite", "dialogue", "--annotator", "zed"],
    ["adjudicate", "--adjudicator", "lead"],
], ids=lambda c: " ".join(c[:3]))
def test_every_command_stops_with_one_line_and_exit_2(damaged: Path, command: list[str]):
    before = digest(damaged)
    done = run_app([sys.executable, "-m", "copal_tui", "--db", str(damaged), *command])
    assert done.returncode == 2, done.stderr[-3000:]
    one_line_refusal(done.stderr, damaged)
    assert "Traceback" not in done.stdout + done.stderr
    assert "SELECT" not in done.stdout + done.stderr
    assert digest(damaged) == before


@pytest.mark.parametrize(("mode", "suite", "user"), [
    ("browse", "copal", None), ("label", "copal", "zed"), ("label", "compass", "zed"),
    ("label", "dialogue", "zed"), ("adjudicate", "copal", "lead"),
])
def test_every_served_app_stops_with_one_line_and_exit_2(damaged: Path, mode: str, suite: str,
                                                        user: str | None):
    # The very command the server starts for a browser that opens this kind of URL.
    server = CopalServer(damaged, mode=mode, suite=suite)
    command = shlex.split(server.command_for(Grant(mode, user)))
    before = digest(damaged)
    done = run_app(command)
    assert done.returncode == 2, done.stderr[-3000:]
    one_line_refusal(done.stderr, damaged)
    assert "Traceback" not in done.stderr
    assert digest(damaged) == before


def test_the_demo_app_stops_with_one_line_and_exit_2(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    """`copal demo` builds its database (the sample imports, for real), then the stages, here
    a stub that damages the file, then opens the browse app on it."""
    from copal_tui.commands import demo_cmd
    from copal_tui.pipeline import runner

    def damaging_stages(path: Path, *_args: Any, **_kwargs: Any) -> list[Any]:
        corrupt(Path(path))
        return []

    monkeypatch.setattr(runner, "run_stages", damaging_stages)
    monkeypatch.setattr(demo_cmd, "_summary", lambda *_args: None)
    original = CopalApp.run

    async def until_it_stops(pilot: Any) -> None:
        # Bounded: an app that goes on over the damage is quit after a while (exit 0).
        for _ in range(DEADLINE_S * 10):
            if pilot.app.return_code is not None:
                return
            await pilot.pause(0.1)
        pilot.app.exit()

    def headless(self: CopalApp, **_kwargs: Any) -> Any:
        return original(self, headless=True, size=(100, 30), auto_pilot=until_it_stops)

    monkeypatch.setattr(CopalApp, "run", headless)
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--db", str(db)])
    assert result.exit_code == 2, result.output
    one_line_refusal(result.stderr, db)
