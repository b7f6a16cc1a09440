"""`copal demo` takes every registered suite's part (`Suite.demo`): a suite registered after
start-up gets its samples imported, its runs made with the demo's offline settings, and its table
in the summary, in registration order after the built-in suites, the command naming none."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.commands.suite_demo import DemoRun, DemoSettings, SuiteDemo
from copal_tui.domain.suites import SUITES, register, unregister
from copal_tui.pipeline.base import Options
from store.db import Database
from tests import fourth_suite
from tests.db_support import query_rows

SEEN: list[str] = []


def _seed(db: Database) -> dict[str, int]:
    SEEN.append("seed")
    return {"policies to review": db.execute("SELECT COUNT(*) FROM policies").fetchone()[0]}


def _runs(base: Options, settings: DemoSettings) -> list[DemoRun]:
    return [(["judge"], replace(base, worlds=["harbor-clinics"], judges=["offline/other"]))]


def _summary(console: Any, db: Database, settings: DemoSettings) -> None:
    console.print(f"policy review by {settings.judge}, budget {settings.budget}")


DEMO = SuiteDemo(seed=_seed, runs=_runs, summary=_summary)
SPEC = replace(fourth_suite.SPEC, demo=f"{__name__}:DEMO")


def test_a_registered_suites_demo_part_is_seeded_run_and_summarised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from copal_tui.pipeline import runner

    made: list[tuple[list[str], Options]] = []

    def recorded(path: Path, stages: list[str], options: Options, **_kw: Any) -> list[Any]:
        made.append((list(stages), options))
        return []

    monkeypatch.setattr(runner, "run_stages", recorded)
    SEEN.clear()
    target = tmp_path / "demo.db"
    register(SPEC)
    try:
        result = CliRunner().invoke(main, ["--db", str(target), "demo", "--no-tui",
                                           "--budget", "3"], catch_exceptions=False)
    finally:
        unregister(fourth_suite.NAME)
    assert result.exit_code == 0, result.output
    assert SEEN == ["seed"]
    policies = query_rows(target, "SELECT COUNT(*) AS n FROM policies")[0]["n"]
    assert policies > 0 and f"{policies} policies to review" in result.output
    # The built-in suites' runs first, in registration order, then this suite's own, with the
    # demo's shared settings (targets, generator) under the options it set.
    first_stages = [stages[0] for stages, _ in made]
    assert first_stages[:2] == [SUITES["copal"].stage_names()[0], "judge"]
    assert "traffic_judge" in first_stages
    stages, options = made[-1]
    assert stages == ["judge"] and options.worlds == ["harbor-clinics"]
    assert options.judges == ["offline/other"] and options.generator == "offline/heuristic"
    assert options.models == ["offline/refuse-all", "offline/comply-all",
                              "offline/keyword-guard"]
    assert "policy review by offline/judge, budget 3" in result.output
    # The built-in suites' tables are still there, this one's after them.
    assert result.output.index("COMPASS Policy Alignment") < result.output.index("policy review by")
