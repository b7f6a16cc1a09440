"""`copal cases --suite NAME`: each suite's listing comes from its descriptor (`Suite.cases`);
`--suite` hands the rest of the line to it, a suite without one is refused by name, and a suite
registered after start-up is listed through the hook alone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.suites import register, unregister
from tests import fourth_suite
from tests.tui_label_support import build_db, rows


@click.command("policy-cases")
@click.option("--world", required=True)
@click.pass_context
def policy_cases(ctx: click.Context, world: str) -> None:
    """The policies of a world, one per line."""
    from store.db import connect

    db = connect(ctx.find_root().params["db_path"])
    for (pid,) in db.execute("SELECT id FROM policies WHERE world_id = ? ORDER BY id", (world,)):
        click.echo(pid)


SPEC = replace(fourth_suite.SPEC, cases=f"{__name__}:policy_cases")


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", str(db), "cases", *args])
    return result.exit_code, result.output


def test_a_registered_suites_listing_takes_the_rest_of_the_line(tmp_path: Path) -> None:
    db = build_db(tmp_path)
    world = rows(db, "SELECT id FROM worlds ORDER BY id")[0]["id"]
    expected = [r["id"] for r in rows(db, "SELECT id FROM policies WHERE world_id = ? "
                                          "ORDER BY id", (world,))]
    assert expected
    code, out = run(db, "--suite", fourth_suite.NAME, "--world", world)
    assert code == 2 and "is not one of 'copal', 'compass'" in out
    register(SPEC)
    try:
        code, out = run(db, "--world", world, "--suite", "Policy-Review")
        assert code == 0, out
        assert out.split() == expected
        code, out = run(db, "--suite", fourth_suite.NAME, "--help")
        assert code == 0 and " cases --suite policy_review [OPTIONS]" in out
        assert "--world" in out and "--judge" not in out
    finally:
        unregister(fourth_suite.NAME)


def test_a_suite_without_a_listing_is_refused_naming_those_with_one(tmp_path: Path) -> None:
    db = build_db(tmp_path)
    code, out = run(db, "--suite", "compass")
    assert code == 2
    assert "--suite compass: that suite lists no cases (--suite takes copal or traffic)" in out
    code, out = run(db, "--suite", "traffic", "--category", "mult")
    assert code == 2 and "did you mean multi?" in out
    # The listing is `copal cases --suite traffic`, not a command of the traffic group.
    result = CliRunner().invoke(main, ["--db", str(db), "traffic", "cases"])
    assert result.exit_code == 2 and "No such command" in result.output
