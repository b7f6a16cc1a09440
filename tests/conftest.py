"""Shared fixtures: a fresh migrated database and a CLI runner bound to it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir

# Never let a test reach a real provider or the network for litellm's cost map.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The suite-building stages have no default generator; the tests name the offline engine
# through the documented variables (subprocesses inherit them). Tests of the refusal unset them.
os.environ.setdefault("COPAL_GENERATOR", "offline/heuristic")
os.environ.setdefault("COPAL_PREFILTER", "offline/heuristic")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "copal.db"


@pytest.fixture
def cli(db_path: Path):
    runner = CliRunner()

    def run(*args: str, db: Path | None = None, input: str | None = None) -> Result:
        return runner.invoke(main, ["--db", str(db or db_path), *args], input=input,
                             catch_exceptions=False)

    return run


@pytest.fixture
def initialised(cli, db_path: Path) -> Path:
    result = cli("init")
    assert result.exit_code == 0, result.output
    return db_path


@pytest.fixture
def samples() -> Path:
    return sample_worlds_dir()
