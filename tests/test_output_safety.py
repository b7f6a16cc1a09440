"""No export or backup replaces a file it was not asked to create (copal_tui.export.safe_paths).

Through the public CLI: the database, its -wal/-shm files (also through a symbolic or hard link)
are never written, not even with --force; FIFOs, directories and dangling links are never
written; an existing regular file only with --force; the folder export checks every file it
would write before writing any; a refusal is one line on stderr, exit 2, naming the path, with
the database and the target untouched; a write that fails midway leaves no file (and no
temporary) behind, so the retry succeeds without --force.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from copal_tui.interchange import exporter
from copal_tui.services import export as export_service
from copal_tui.services import store_admin

EXPORT_JSONL = ("export", "--format", "jsonl", "--out")
BACKUP = ("backup",)


@pytest.fixture
def populated(cli, initialised: Path, samples: Path) -> Path:
    result = cli("import", str(samples / "harbor_clinics.yaml"))
    assert result.exit_code == 0, result.output
    return initialised


@pytest.fixture
def held_open(populated: Path) -> Iterator[sqlite3.Connection]:
    """Another connection reading the database, so its -wal and -shm files exist."""
    conn = sqlite3.connect(populated)
    conn.execute("SELECT COUNT(*) FROM policies").fetchone()
    yield conn
    conn.close()


def _state(db: Path) -> dict[str, object]:
    """What must not change: every table's row count and the integrity check."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        counts: dict[str, object] = {
            t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        counts["quick_check"] = conn.execute("PRAGMA quick_check").fetchone()[0]
        return counts
    finally:
        conn.close()


def _refused(result, path: Path | str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("copal: error: "), result.stderr
    assert str(path) in lines[0]
    assert "Traceback" not in result.output


def _listing(folder: Path) -> set[str]:
    # SQLite's own -wal/-shm come and go with connections to a database kept in the folder.
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if not p.name.endswith(("-wal", "-shm"))}


@pytest.mark.parametrize("command", [EXPORT_JSONL, BACKUP], ids=["export", "backup"])
@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize("which", ["db", "wal", "shm", "symlink", "hardlink"])
def test_database_and_its_wal_shm_are_never_written(cli, populated, held_open, tmp_path,
                                                    command, force, which):
    wal, shm = Path(f"{populated}-wal"), Path(f"{populated}-shm")
    assert wal.exists() and shm.exists()  # the held connection keeps them there
    target = {"db": populated, "wal": wal, "shm": shm,
              "symlink": tmp_path / "looks-harmless.jsonl",
              "hardlink": tmp_path / "same-inode.db"}[which]
    if which == "symlink":
        target.symlink_to(populated)
    elif which == "hardlink":
        os.link(populated, target)
    before = _state(populated)
    result = cli(*command, str(target), *(["--force"] if force else []))
    _refused(result, target)
    if which in ("db", "symlink", "hardlink") or force:
        assert "database" in result.stderr  # not merely "it already exists"
    assert _state(populated) == before
    assert not list(tmp_path.glob(".*.partial"))


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_wal_and_shm_names_are_refused_even_when_absent(cli, populated, tmp_path, suffix):
    # A copy no connection has open: SQLite removed its -wal and -shm at the last close.
    db = tmp_path / "copy.db"
    with sqlite3.connect(populated) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    target = Path(f"{db}{suffix}")
    assert not target.exists()
    before = _state(db)
    _refused(cli(*EXPORT_JSONL, str(target), "--force", db=db), target)
    # It may exist now, made by SQLite itself when the command opened the database.
    assert not target.exists() or b'"type":' not in target.read_bytes()
    assert _state(db) == before


@pytest.mark.parametrize("fmt", ["json", "csv", "jsonl"])
def test_folder_export_onto_the_database_path_is_refused(cli, populated, fmt):
    before = _state(populated)
    _refused(cli("export", "--format", fmt, "--out", str(populated), "--force"), populated)
    assert _state(populated) == before


@pytest.mark.parametrize(("fmt", "name"), [("json", "report.json"), ("jsonl", "store.jsonl"),
                                          ("md", "manifest.json")])
def test_folder_export_never_writes_a_database_inside_the_folder(cli, tmp_path, fmt, name):
    # The database sits in the output folder under a name the export writes.
    folder = tmp_path / "out"
    db = folder / name
    assert cli("init", db=db).exit_code == 0
    before, listing = _state(db), _listing(folder)
    _refused(cli("export", "--format", fmt, "--out", str(folder), "--force", db=db),
             folder / name)
    assert _state(db) == before and _listing(folder) == listing


def test_existing_file_needs_force_for_jsonl_export(cli, populated, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("keep me\n")
    before = _state(populated)
    result = cli(*EXPORT_JSONL, str(target))
    _refused(result, target)
    assert "already exists" in result.stderr and "--force" in result.stderr
    assert target.read_text() == "keep me\n" and _state(populated) == before
    assert cli(*EXPORT_JSONL, str(target), "--force").exit_code == 0
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert records and records[0]["type"] == "world"
    assert not list(tmp_path.glob(".*.partial"))


def test_force_through_a_symlink_replaces_the_file_it_points_at(cli, populated, tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    _refused(cli(*EXPORT_JSONL, str(link)), link)
    assert cli(*EXPORT_JSONL, str(link), "--force").exit_code == 0
    assert link.is_symlink() and real.read_text() != "old\n"
    assert json.loads(real.read_text().splitlines()[0])["type"] == "world"


def test_stdout_export_is_still_allowed(cli, populated):
    result = cli(*EXPORT_JSONL, "-")
    assert result.exit_code == 0
    assert json.loads(result.stdout.splitlines()[0])["type"] == "world"


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("command", [EXPORT_JSONL, BACKUP], ids=["export", "backup"])
@pytest.mark.parametrize("which", ["fifo", "symlink-to-fifo", "dangling-symlink"])
def test_non_regular_targets_are_refused_even_with_force(cli, populated, tmp_path, command,
                                                        which):
    # A FIFO (a stand-in for a device: never opened, else the test would hang), a link to
    # one, and a link to nothing.
    if which == "fifo":
        target = _fifo(tmp_path)
    else:
        target = tmp_path / "link"
        target.symlink_to(_fifo(tmp_path) if which == "symlink-to-fifo" else tmp_path / "gone")
    before = _state(populated)
    _refused(cli(*command, str(target), "--force"), target)
    assert _state(populated) == before
    assert os.path.lexists(target) and not (tmp_path / "gone").exists()
    assert not list(tmp_path.glob(".*.partial"))


@pytest.mark.parametrize("via_link", [False, True], ids=["directory", "link-to-directory"])
def test_backup_onto_a_directory_is_refused(cli, populated, tmp_path, via_link):
    folder = tmp_path / "somewhere"
    folder.mkdir()
    target = folder
    if via_link:
        target = tmp_path / "link"
        target.symlink_to(folder)
    _refused(cli("backup", str(target), "--force"), target)
    assert _listing(folder) == set() and os.path.lexists(target)


def test_backup_onto_an_existing_file_needs_force(cli, populated, tmp_path):
    target = tmp_path / "old-backup.db"
    target.write_bytes(b"not a database")
    before = _state(populated)
    result = cli("backup", str(target))
    _refused(result, target)
    assert "already exists" in result.stderr
    assert target.read_bytes() == b"not a database" and _state(populated) == before
    result = cli("backup", str(target), "--force")
    assert result.exit_code == 0 and "quick_check: ok" in result.stdout
    assert _state(target) == before
    assert not list(tmp_path.glob(".*.partial*"))


def test_folder_export_with_an_existing_report_needs_force(cli, populated, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("hand edited\n")
    before = _state(populated)
    _refused(cli("export", "--format", "json", "--out", str(out)), out / "report.json")
    assert _listing(out) == {"report.json"}  # no manifest, nothing else either
    assert (out / "report.json").read_text() == "hand edited\n" and _state(populated) == before
    assert cli("export", "--format", "json", "--out", str(out), "--force").exit_code == 0
    assert _listing(out) == {"report.json", "validity_cases.jsonl", "manifest.json"}
    assert "scope" in json.loads((out / "report.json").read_text())


def test_folder_export_refuses_a_directory_where_a_file_goes(cli, populated, tmp_path):
    out = tmp_path / "out"
    (out / "manifest.json").mkdir(parents=True)
    _refused(cli("export", "--format", "json", "--out", str(out), "--force"),
             out / "manifest.json")
    assert _listing(out) == {"manifest.json"}


def test_folder_export_with_plots_checks_the_figures_too(cli, tmp_path):
    pytest.importorskip("matplotlib")
    from tests.test_metrics_fixture import build_fixture

    db = build_fixture(tmp_path / "fx")
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    (out / "plots" / "facet_atlas.svg").write_text("<svg/>")
    args = ("export", "--format", "md", "--plots", "--bootstrap", "0", "--out", str(out))
    _refused(cli(*args, db=db), out / "plots" / "facet_atlas.svg")
    assert _listing(out) == {"plots", "plots/facet_atlas.svg"}
    assert cli(*args, "--force", db=db).exit_code == 0
    assert (out / "plots" / "facet_atlas.svg").read_text() != "<svg/>"
    assert (out / "manifest.json").exists()


def _boom_after_some_output(_db, fh):
    fh.write('{"type":"world"}\n')
    raise RuntimeError("disk on fire")


def test_failed_jsonl_export_leaves_nothing_and_the_retry_works(cli, populated, tmp_path,
                                                               monkeypatch):
    monkeypatch.delenv("COPAL_DEBUG", raising=False)
    out = tmp_path / "exports"
    out.mkdir()
    target = out / "store.jsonl"
    with monkeypatch.context() as patch:
        patch.setattr(exporter, "write_jsonl", _boom_after_some_output)
        result = cli(*EXPORT_JSONL, str(target))
    assert result.exit_code == 1 and "disk on fire" in result.stderr
    assert _listing(out) == set()  # neither the target nor a temporary
    assert cli(*EXPORT_JSONL, str(target)).exit_code == 0
    assert target.read_text().count("\n") > 10


def test_failed_folder_export_leaves_none_of_its_files(cli, populated, tmp_path, monkeypatch):
    monkeypatch.delenv("COPAL_DEBUG", raising=False)
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        # Fails after report.json is complete (in its temporary), before the manifest.
        patch.setattr(export_service, "build_manifest", lambda *a, **k: 1 / 0)
        result = cli("export", "--format", "json", "--out", str(out))
        assert result.exit_code == 1 and "ZeroDivisionError" in result.stderr
        assert _listing(out) == set()
        patch.setattr(exporter, "write_jsonl", _boom_after_some_output)
        assert cli("export", "--format", "jsonl", "--out", str(out)).exit_code == 1
        assert _listing(out) == set()
    assert cli("export", "--format", "json", "--out", str(out)).exit_code == 0
    assert _listing(out) == {"report.json", "validity_cases.jsonl", "manifest.json"}


class _FailingCheck(sqlite3.Connection):
    """The backup's destination: the copy completes, then the check fails."""

    def execute(self, sql, *args):  # type: ignore[override]
        if "quick_check" in sql:
            raise RuntimeError("disk on fire")
        return super().execute(sql, *args)


def test_failed_backup_leaves_nothing_and_the_retry_works(cli, populated, tmp_path,
                                                         monkeypatch):
    monkeypatch.delenv("COPAL_DEBUG", raising=False)
    folder = tmp_path / "backups"
    folder.mkdir()
    target = folder / "copy.db"
    real_connect = sqlite3.connect

    def connect(path, *args, **kwargs):
        if str(path).endswith(".partial"):  # the temporary the backup writes into
            kwargs["factory"] = _FailingCheck
        return real_connect(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(store_admin.sqlite3, "connect", connect)
        result = cli("backup", str(target))
    assert result.exit_code == 1 and "disk on fire" in result.stderr
    assert _listing(folder) == set()  # no copy, no temporary, no -journal/-wal/-shm
    before = _state(populated)
    assert cli("backup", str(target)).exit_code == 0
    assert _state(target) == before
