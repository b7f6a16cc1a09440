"""`copal import --from`: the sources are the registered suites' (`Suite.importers`); a suite
registered after start-up adds its own, with its --judge/--replace rules, and the command names
no suite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.commands.suite_import import Importer
from copal_tui.domain.suites import register, unregister
from store.db import Database
from tests import fourth_suite
from tests.tui_label_support import build_db, rows

CALLS: list[tuple[list[str], str | None, bool]] = []


def _notes(db: Database, paths: Sequence[Path], judge: str | None, replace: bool) -> list[str]:
    CALLS.append(([p.name for p in paths], judge, replace))
    worlds = db.execute("SELECT COUNT(*) FROM worlds").fetchone()[0]
    return [f"read {len(paths)} note file(s) against {worlds} world(s)"]


NOTES = Importer(help="policy-notes: reviewers' notes on policies.", run=_notes)
VERDICTS = Importer(help="policy-verdicts: a reviewer's verdicts, with --judge.", run=_notes,
                    judge=True)
SPEC = replace(fourth_suite.SPEC, importers={"policy-notes": f"{__name__}:NOTES",
                                             "policy-verdicts": f"{__name__}:VERDICTS"})


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", str(db), "import", *args])
    return result.exit_code, result.output


def test_a_registered_suites_sources_are_choices_of_copal_import(tmp_path: Path) -> None:
    db = build_db(tmp_path)
    note = tmp_path / "a.txt"
    note.write_text("clear\n")
    CALLS.clear()
    code, out = run(db, "--from", "policy-notes", str(note))
    assert code == 2 and "'policy-notes' is not one of 'copal', 'compass'" in out
    register(SPEC)
    try:
        worlds = rows(db, "SELECT COUNT(*) AS n FROM worlds")[0]["n"]
        code, out = run(db, "--from", "Policy_Notes", str(note))
        assert code == 0, out
        assert out.strip() == f"read 1 note file(s) against {worlds} world(s)"
        assert CALLS == [(["a.txt"], None, False)]
    finally:
        unregister(fourth_suite.NAME)


def test_judge_and_replace_follow_the_sources_own_rules(tmp_path: Path) -> None:
    db = build_db(tmp_path)
    CALLS.clear()
    register(SPEC)
    try:
        code, out = run(db, "--from", "policy-verdicts", "x.jsonl")
        assert code == 2 and "--from policy-verdicts needs --judge NAME" in out
        code, out = run(db, "--from", "policy-notes", "--judge", "j", "x.jsonl")
        assert code == 2
        assert "--judge goes with --from compass-judged or complibench-judge or " \
               "policy-verdicts, not --from policy-notes" in " ".join(out.split())
        code, out = run(db, "--from", "policy-verdicts", "--replace", "--judge", "j", "x")
        assert code == 2 and "--replace goes with --from complibench-judge, not" in out
        assert CALLS == []
    finally:
        unregister(fourth_suite.NAME)
