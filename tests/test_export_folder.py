"""An output path that names a folder (`bundle/`, or one that exists) is a folder, made with its
manifest when missing, for every export format; never a file under the folder's name. A backup
is one file: a path naming a folder is refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.db_support import query_rows
from tests.test_metrics_fixture import build_fixture

FORMATS = ("jsonl", "csv", "json", "md", "latex")


@pytest.fixture(scope="module")
def fixture_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fixture(tmp_path_factory.mktemp("fixture"))


def _checked_manifest(folder: Path) -> list[str]:
    """The files the manifest lists, each checked against its sha256; returns their paths."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    listed = []
    for entry in manifest["files"]:
        data = (folder / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["path"]
        listed.append(entry["path"])
    return listed


def test_an_out_path_spelled_as_a_folder_is_made_with_its_manifest_for_every_format(
        cli, fixture_db, tmp_path):
    for fmt in FORMATS:
        for spelled in ("/", "/."):  # a folder, whether or not it exists yet
            folder = tmp_path / f"{fmt}-{len(spelled)}" / "bundle"
            quick = [] if fmt == "jsonl" else ["--bootstrap", "0"]  # the report's option
            result = cli("export", "--format", fmt, "--out", f"{folder}{spelled}", *quick,
                         db=fixture_db)
            assert result.exit_code == 0, (fmt, spelled, result.output)
            assert folder.is_dir(), (fmt, spelled)
            listed = _checked_manifest(folder)
            assert listed and sorted(p.name for p in folder.iterdir()) == sorted(
                {*(Path(p).parts[0] for p in listed), "manifest.json"}), (fmt, spelled)
    jsonl = (tmp_path / "jsonl-1" / "bundle" / "store.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in jsonl.splitlines()]
    worlds = query_rows(fixture_db, "SELECT id FROM worlds")
    assert sorted(r["id"] for r in records if r["type"] == "world") == sorted(
        w["id"] for w in worlds)


@pytest.mark.parametrize("spelled", ["/", "/."])
def test_a_backup_to_a_path_naming_a_folder_is_refused_and_writes_nothing(
        cli, fixture_db, tmp_path, spelled):
    target = f"{tmp_path / 'backups'}{spelled}"
    result = cli("backup", target, db=fixture_db)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and target in lines[0] and "folder" in lines[0], result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
