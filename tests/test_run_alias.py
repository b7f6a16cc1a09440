"""`copal run SUITE`: a suite whose descriptor sets `run_alias` is taken by name for all its
stages, in order, and needs a world scope; the shorthand comes from the registry alone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.commands.run_checks import stage_words
from copal_tui.commands.run_cmds import expand_stages
from copal_tui.domain.suites import SUITES, Stage, register, unregister
from tests import fourth_suite
from tests.tui_label_support import build_db, rows

STAGED = replace(fourth_suite.SPEC, name="policy_audit", short="policy audit", run_alias=True,
                 options="copal_tui.pipeline.options:CopalOptions",
                 stages=(Stage("audit_read", "tests.fourth_suite:count_command"),
                         Stage("audit_score", "tests.fourth_suite:count_command")))


def test_a_registered_suite_is_expanded_by_name_to_its_stages_in_order() -> None:
    assert expand_stages(("policy_audit",)) == ["policy_audit"]  # not registered: a stage name
    register(STAGED)
    try:
        assert expand_stages(("policy_audit", "judge", "audit_read")) == [
            "audit_read", "audit_score", "judge"]
        assert stage_words(["audit_read", "audit_score"]) == "the policy audit stages"
    finally:
        unregister("policy_audit")


def test_the_shorthand_may_not_take_a_stages_name() -> None:
    with pytest.raises(ValueError, match="would name a stage"):
        register(replace(STAGED, name="judge"))
    assert "judge" not in SUITES


def test_copal_run_compass_takes_the_compass_descriptors_stages(tmp_path: Path) -> None:
    assert expand_stages(("compass",)) == list(SUITES["compass"].stage_names())
    db = build_db(tmp_path)
    result = CliRunner().invoke(main, ["--db", str(db), "run", "compass", "--model", "m",
                                       "--judge", "j", "--generator", "offline/heuristic"])
    assert result.exit_code == 2
    assert "compass needs --world ID (or --all)" in result.output
    assert rows(db, "SELECT id FROM runs") == []
