"""Which files copal refuses to open, and how it opens a read-only database, through the CLI.

Every refusal exits 2 with one line naming the file and the cause, and leaves the file (and
its -wal/-shm) byte for byte as it was: a database of a newer copal, an empty file, a file that
is not SQLite, a SQLite database of something else. A read-only database serves the commands
that only read and refuses the ones that write. Tests run as root, whom file modes do not stop:
the read-only tests fake `os.access` in-process (SQLite then really opens the file read-only),
and one runs the CLI in a subprocess whose file capabilities are dropped, so the kernel denies
writes as it would to an ordinary user.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SIDECARS = ("-wal", "-shm", "-journal")


def fingerprint(path: Path) -> dict[str, str | None]:
    """sha256 of the file and of each SQLite sidecar (None when absent)."""
    out: dict[str, str | None] = {}
    for suffix in ("", *SIDECARS):
        f = Path(str(path) + suffix)
        out[suffix] = hashlib.sha256(f.read_bytes()).hexdigest() if f.exists() else None
    return out


def fold_wal(path: Path) -> None:
    """Close the CLI runs' leftover connections and checkpoint, so the main file holds the
    whole database and its -wal is gone (the state the refusals must leave unchanged)."""
    gc.collect()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert not Path(f"{path}-wal").exists()


def row_counts(path: Path) -> dict[str, int]:
    # immutable=1: count without creating a -wal/-shm or taking a lock (after fold_wal the
    # main file is the whole database).
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: conn.execute(f"SELECT COUNT(*) FROM [{t}]").fetchone()[0] for t in tables}
    finally:
        conn.close()


def refused(result: Any, *needles: str) -> str:
    """Assert a one-line refusal with exit 2 that contains every needle; return the line."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def every_command(samples: Path, out: Path) -> list[tuple[str, ...]]:
    return [("import", str(samples)), ("stats",), ("stats", "--json"), ("migrate",), ("init",),
            ("report", "--json"), ("export", "--out", str(out / "x.jsonl")), ("runs",),
            ("tui",), ("label",), ("adjudicate",), ("run", "ground")]


def test_newer_database_is_refused_by_every_command_and_left_untouched(
        cli, initialised, samples, tmp_path):
    conn = sqlite3.connect(initialised)
    conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
                 "VALUES ('copal', 'm999_future', '2099-01-01')")
    conn.commit()
    conn.close()
    fold_wal(initialised)
    before, counts = fingerprint(initialised), row_counts(initialised)
    assert counts["_sqlite_migrations"] > 1
    for args in every_command(samples, tmp_path):
        line = refused(cli(*args), str(initialised), "written by a newer copal",
                       "m999_future", "upgrade copal")
        assert "m001_initial" not in line, args  # only the unknown name is reported
    assert fingerprint(initialised) == before  # no WAL switch, no -wal written or created
    assert row_counts(initialised) == counts
    assert not (tmp_path / "x.jsonl").exists()


def test_empty_file_is_refused_until_init_initialises_it(cli, db_path, samples, tmp_path):
    db_path.write_bytes(b"")
    for args in every_command(samples, tmp_path):
        if args[0] == "init":
            continue
        refused(cli(*args), str(db_path), "is empty, not a copal database",
                "run `copal init` to create one")
    assert db_path.read_bytes() == b"" and fingerprint(db_path)["-wal"] is None
    done = cli("init")
    assert done.exit_code == 0 and "new database" in done.stdout, done.output
    assert json.loads(cli("stats", "--json").stdout)["worlds"] == 0


@pytest.mark.parametrize("content", [b'{"type": "world", "id": "w"}\n', b"hello\n" * 40,
                                     b"SQLite format 2\x00" + bytes(84)])
def test_non_sqlite_file_is_named_and_untouched(cli, tmp_path, samples, content):
    path = tmp_path / "store.jsonl"
    path.write_bytes(content)
    before = fingerprint(path)
    for args in every_command(samples, tmp_path):  # init included: it is not ours to replace
        refused(cli(*args, db=path), f"{path} is not a SQLite database")
    assert fingerprint(path) == before


def test_sqlite_database_of_something_else_is_refused_even_by_init(cli, db_path, samples,
                                                                    tmp_path):
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('mine')")
    conn.commit()
    conn.close()
    before = fingerprint(db_path)
    for args in every_command(samples, tmp_path):
        refused(cli(*args), str(db_path), "not a copal database", "notes")
    assert fingerprint(db_path) == before


def test_sqlite_database_without_tables_is_initialised_only_by_init(cli, db_path, samples,
                                                                     tmp_path):
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 7")  # writes a header: a valid database, no tables
    conn.commit()
    conn.close()
    assert db_path.stat().st_size > 0
    before = fingerprint(db_path)
    for args in (("stats",), ("migrate",), ("import", str(samples))):
        refused(cli(*args), str(db_path), "has no tables", "copal init")
    assert fingerprint(db_path) == before
    assert cli("init").exit_code == 0
    assert cli("import", str(samples / "harbor_clinics.yaml")).exit_code == 0
    assert json.loads(cli("stats", "--json").stdout)["worlds"] == 1


def deny_writes(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> None:
    """Make `os.access` say `paths` are not writable (the root-proof stand-in for chmod)."""
    real: Callable[..., bool] = os.access
    denied = {os.path.abspath(p) for p in paths}

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if mode & os.W_OK and os.path.abspath(path) in denied:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


@pytest.fixture
def imported(cli, initialised, samples) -> Path:
    result = cli("import", str(samples))
    assert result.exit_code == 0, result.output
    fold_wal(initialised)
    return initialised


@pytest.mark.parametrize("denied", ["file", "folder"])
def test_read_only_database_serves_reads_and_refuses_writes(cli, imported, samples, tmp_path,
                                                           monkeypatch, denied):
    out = tmp_path / "elsewhere"
    out.mkdir()
    writable = {"stats": cli("stats", "--json").stdout, "report": cli("report", "--json").stdout}
    assert cli("export", "--out", str(out / "writable.jsonl")).exit_code == 0
    fold_wal(imported)
    before, counts = fingerprint(imported), row_counts(imported)
    deny_writes(monkeypatch, imported if denied == "file" else imported.parent)
    for what in ("stats", "report"):
        result = cli(what, "--json")
        assert result.exit_code == 0, result.output
        assert result.stdout == writable[what]
    assert json.loads(writable["stats"])["worlds"] == counts["worlds"] > 0
    exported = cli("export", "--out", str(out / "read-only.jsonl"))
    assert exported.exit_code == 0, exported.output
    assert (out / "read-only.jsonl").read_bytes() == (out / "writable.jsonl").read_bytes()
    for args in (("import", str(samples)), ("migrate",), ("init",), ("label",),
                 ("run", "ground")):
        refused(cli(*args), str(imported), "is read-only")
    gc.collect()
    assert fingerprint(imported) == before
    assert row_counts(imported) == counts


def test_tui_browse_opens_a_read_only_database_read_only(imported, monkeypatch):
    from copal_tui.tui.app import make_app
    from copal_tui.tui.screens.worlds import WorldsScreen
    from copal_tui.tui.widgets.paged_table import PagedTable
    from tests.test_tui_browse_data import settle

    before = fingerprint(imported)
    worlds = row_counts(imported)["worlds"]
    deny_writes(monkeypatch, imported)

    async def browse() -> tuple[bool, int]:
        app = make_app(imported, mode="browse")
        async with app.run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, WorldsScreen)
            page = app.screen.query_one(PagedTable).page
            assert page is not None
            return app.db.readonly, page.total

    readonly, shown = asyncio.run(browse())
    assert readonly and shown == worlds
    gc.collect()
    assert fingerprint(imported) == before


def _drop_privileges(scratch: Path) -> list[str] | None:
    """A command prefix that runs a child without root's file capabilities, if this machine
    allows it (setpriv from util-linux); None otherwise. Checked on a mode-0444 file."""
    if os.geteuid() != 0:
        return []  # an ordinary user: chmod already binds
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    locked = scratch / "locked"
    locked.write_text("")
    locked.chmod(0o444)
    prefix = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]
    probe = subprocess.run([*prefix, sys.executable, "-c",
                            f"import os, sys; sys.exit(os.access({str(locked)!r}, os.W_OK))"],
                           capture_output=True, check=False)
    return prefix if probe.returncode == 0 else None


def test_read_only_folder_with_real_permissions(cli, imported, samples, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    prefix = _drop_privileges(out)
    if prefix is None:
        pytest.skip("cannot drop root's file capabilities here (no working setpriv)")
    folder = imported.parent

    def copal(*args: str, privileged: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*([] if privileged else prefix), sys.executable, "-m",
                               "copal_tui", "--db", str(imported), *args], capture_output=True,
                              text=True, check=False, env={**os.environ, "COPAL_DEBUG": ""})

    writable = copal("report", "--json", privileged=True).stdout  # same process kind as below
    fold_wal(imported)
    before, counts = fingerprint(imported), row_counts(imported)
    imported.chmod(0o444)
    folder.chmod(0o555)
    try:
        stats = copal("stats", "--json")
        report = copal("report", "--json")
        exported = copal("export", "--out", str(out / "store.jsonl"))
        writes = [copal("import", str(samples)), copal("migrate"), copal("init")]
    finally:
        folder.chmod(0o755)
        imported.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["worlds"] == counts["worlds"]
    assert report.returncode == 0, report.stderr
    assert report.stdout == writable
    assert exported.returncode == 0, exported.stderr
    assert f"wrote {sum(1 for _ in (out / 'store.jsonl').open())} record(s)" in exported.stderr
    for result in writes:
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "is read-only" in lines[0], result.stderr
    assert fingerprint(imported) == before
    assert not any(Path(str(imported) + s).exists() for s in SIDECARS)


def test_a_second_connection_keeps_the_first_ones_locks(initialised, tmp_path):
    # Opening the database again in one process (a worker thread, the label queue's writes)
    # must not drop the POSIX locks of the connection already open: closing any descriptor of
    # the file would, and another process closing its own connection would then take itself
    # for the last one and delete the WAL and -shm from under the live connection.
    import subprocess
    import sys

    from store.db import connect

    first = connect(initialised)
    first.execute("SELECT COUNT(*) FROM worlds").fetchone()
    shm = initialised.with_name(initialised.name + "-shm")
    assert shm.exists()
    connect(initialised).close()  # checks the file again, then closes
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "c.execute('SELECT COUNT(*) FROM worlds').fetchone(); c.close()")
    subprocess.run([sys.executable, "-c", code, str(initialised)], check=True)
    assert shm.exists(), "the other process saw no live connection and removed the -shm"
    assert first.execute("SELECT COUNT(*) FROM worlds").fetchone()[0] == 0
    first.close()
