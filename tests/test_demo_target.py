"""`copal demo` builds where every command looks (`copal --db`, `$COPAL_DB`, else demo.db in the
data directory), never removes a database it did not build unless `--replace` is given, and
builds in a temporary file renamed into place once complete: an interrupted demo leaves
nothing, and the file it was to replace as it was."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from tests.db_support import query_dicts, query_rows

# A database with someone's work in it: a world, its responses and labels, and a campaign.
ROWS = {"worlds": "SELECT COUNT(*) AS n FROM worlds",
        "labels": "SELECT COUNT(*) AS n FROM annotations",
        "campaigns": "SELECT COUNT(*) AS n FROM campaigns WHERE kind = 'sample'"}


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The per-user data directory, here (platformdirs reads XDG_DATA_HOME on Linux)."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("COPAL_DB", raising=False)
    return home / "copal"


def _someones_store(path: Path, samples: Path) -> dict[str, int]:
    runner = CliRunner()
    for args in (["init"], ["import", str(samples / "harbor_clinics.yaml"),
                            str(samples / "harbor_clinics.jsonl")],
                 ["campaign", "create", "mine", "--world", "harbor-clinics"]):
        result = runner.invoke(main, ["--db", str(path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return _state(path)


def _state(path: Path) -> dict[str, int]:
    counts = {k: query_rows(path, sql)[0]["n"] for k, sql in ROWS.items()}
    assert all(counts.values()), counts
    return counts


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line_naming(result_stderr: str, path: Path) -> None:
    lines = result_stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("copal: error: "), result_stderr
    assert str(path) in lines[0] and "--replace" in lines[0]


@pytest.mark.parametrize("how", ["global --db", "COPAL_DB", "demo --db", "data directory"])
def test_an_existing_database_is_refused_and_kept(tmp_path, data_dir, samples, how):
    target = data_dir / "demo.db" if how == "data directory" else tmp_path / "mine.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    before = _someones_store(target, samples)
    digest = _digest(target)
    args = {"global --db": ["--db", str(target), "demo"],
            "demo --db": ["demo", "--db", str(target)]}.get(how, ["demo"])
    env = {"COPAL_DB": str(target)} if how == "COPAL_DB" else {}
    result = CliRunner().invoke(main, [*args, "--no-tui"], env=env)
    assert result.exit_code == 2, result.output
    _one_line_naming(result.stderr, target)
    assert _state(target) == before and _digest(target) == digest
    # Nothing was built beside it, nor in the data directory.
    assert [p.name for p in target.parent.iterdir()] == [target.name]
    if how != "data directory":
        assert not data_dir.exists()


def _demo(tmp_path: Path, target: Path, *extra: str) -> tuple[subprocess.Popen[bytes], Path]:
    """`copal --db TARGET demo` in its own process; its output goes to a file beside tmp_path's
    (never into the target's folder, which the tests list)."""
    log = tmp_path / "demo.log"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}
    env.pop("COPAL_DB", None)
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "copal_tui", "--db", str(target), "demo",
                                 "--no-tui", *extra], stdout=out, stderr=subprocess.STDOUT,
                                env=env)
    return proc, log


def _wait_for(proc: subprocess.Popen[bytes], log: Path, text: str, timeout: float = 300) -> None:
    """Until the demo's output holds `text` (failing if it ends first)."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(encoding="utf-8", errors="replace"):
        assert proc.poll() is None, log.read_text(encoding="utf-8", errors="replace")
        assert time.monotonic() < deadline, f"no {text!r} in {timeout} s"
        time.sleep(0.2)


def _building(folder: Path, name: str) -> list[Path]:
    """The demo's temporary database beside `name` in `folder` (and SQLite's side files)."""
    return [p for p in folder.iterdir() if p.name.startswith(f".{name}.")]


def test_ctrl_c_twice_leaves_nothing(tmp_path):
    folder = tmp_path / "new"
    folder.mkdir()
    proc, log = _demo(tmp_path, folder / "demo.db")
    try:
        _wait_for(proc, log, "offline engine")  # imported; the stages are starting
        assert _building(folder, "demo.db")  # built beside the target, under another name
        proc.send_signal(signal.SIGINT)
        _wait_for(proc, log, "Ctrl-C again")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=300) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(folder.iterdir()) == []
    assert not (tmp_path / "xdg").exists()


def test_ctrl_c_during_a_replace_keeps_the_old_database(tmp_path, samples):
    folder = tmp_path / "store"
    folder.mkdir()
    target = folder / "mine.db"
    before = _someones_store(target, samples)
    digest = _digest(target)
    proc, log = _demo(tmp_path, target, "--replace")
    try:
        _wait_for(proc, log, "offline engine")
        proc.send_signal(signal.SIGINT)  # once: the stages stop after the units under way
        assert proc.wait(timeout=600) == 130, log.read_text(encoding="utf-8")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "nothing was written" in log.read_text(encoding="utf-8")
    assert _state(target) == before and _digest(target) == digest
    assert sorted(p.name for p in folder.iterdir()) == ["mine.db"]


def test_the_demo_builds_at_the_global_db_and_replaces_only_with_replace(tmp_path, data_dir,
                                                                       samples):
    target = tmp_path / "store" / "mine.db"
    target.parent.mkdir()
    _someones_store(target, samples)
    result = CliRunner().invoke(main, ["--db", str(target), "demo", "--no-tui", "--replace",
                                       "--budget", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # The demo's database, whole, in place of the old one (its campaign is gone), alone in
    # its folder (no temporary, no log left beside it), and nothing in the data directory.
    assert sorted(p.name for p in target.parent.iterdir()) == ["mine.db"]
    assert not data_dir.exists()
    counts = {t: query_rows(target, f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]
              for t in ("worlds", "judgments", "compass_judgments", "dialogue_attempts",
                        "traffic_pairs", "traffic_judgments")}
    assert counts["worlds"] > 1 and all(counts.values()), counts
    # The sample traffic: every pair labelled by the offline labeller, 200 of them drawn into
    # the demo's audit campaign (the only campaign: the old store's is gone).
    assert counts["traffic_judgments"] == counts["traffic_pairs"]
    assert query_dicts(target, "SELECT c.name, COUNT(*) AS size FROM campaigns c JOIN "
                               "campaign_subjects s ON s.campaign = c.name WHERE c.kind = "
                               "'sample' GROUP BY c.name") == \
        [{"name": "traffic-audit", "size": 200}]
    assert "real-traffic audit (Table 11)" in result.stdout and "HEURISTIC" in result.stdout
    runs = query_rows(target, "SELECT status, COUNT(*) AS n FROM runs GROUP BY status")
    assert {r["status"] for r in runs} == {"done"}
    # It says where it built, and how to point the other commands at it.
    assert f"export COPAL_DB={target}" in result.stdout
    stats = CliRunner().invoke(main, ["stats", "--json"], env={"COPAL_DB": str(target)})
    assert stats.exit_code == 0 and json.loads(stats.stdout)["judgments"] == counts["judgments"]
