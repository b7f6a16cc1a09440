"""A judged sample store for the command-line tests, built through copal's own CLI: the sample
worlds (items, responses of three sample assistants, human labels), the CompliBench sample
dialogues, and the offline judge in contract and full-policy mode (about 7 s)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir


def copal(db: Path | None, *args: str, env: dict[str, str] | None = None) -> Result:
    """`copal [--db DB] ARGS...` through click's runner (stdout and stderr kept apart)."""
    head = ["--db", str(db)] if db is not None else []
    return CliRunner().invoke(main, [*head, *args], env=env, catch_exceptions=False)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


def build_judged_store(folder: Path) -> Path:
    db = folder / "judged.db"
    samples = sample_worlds_dir()
    ok(copal(db, "init"))
    ok(copal(db, "import", str(samples)))
    ok(copal(db, "import", "--from", "complibench", str(samples / "complibench")))
    ok(copal(db, "run", "judge", "--all", "--judge", "offline/judge", "--mode", "contract",
             "--mode", "full_policy"))
    return db
