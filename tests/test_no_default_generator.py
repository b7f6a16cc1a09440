"""No figure comes silently from heuristics: the stages that build a suite never pick a
generator. Without --generator (or COPAL_GENERATOR) they exit 2 naming the option and write
nothing; the COMPASS pre-filter variant needs --prefilter the same way."""

from __future__ import annotations

import json
import sqlite3

import pytest


@pytest.fixture
def bare_env(monkeypatch):
    monkeypatch.delenv("COPAL_GENERATOR", raising=False)
    monkeypatch.delenv("COPAL_PREFILTER", raising=False)


def _runs(db) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("stage", ["ground", "compose", "generate", "select", "project",
                                   "ablate", "compass_generate", "compass_verify"])
def test_a_construction_stage_without_a_generator_exits_2(cli, initialised, samples, bare_env,
                                                          stage):
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    result = cli("run", stage, "--all")
    assert result.exit_code == 2
    assert "--generator" in result.stderr and "COPAL_GENERATOR" in result.stderr
    assert _runs(initialised) == 0  # nothing started


def test_dialogue_variants_and_the_prefilter_need_their_models(cli, initialised, bare_env):
    result = cli("run", "dialogue_variants", "--judge", "offline/judge")
    assert result.exit_code == 2 and "--generator" in result.stderr
    result = cli("run", "compass_respond", "--all", "--model", "offline/refuse-all",
                 "--variant", "pre-filter")
    assert result.exit_code == 2 and "--prefilter" in result.stderr
    assert _runs(initialised) == 0


def test_the_generator_can_come_from_the_environment(cli, initialised, samples, bare_env,
                                                     monkeypatch):
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    monkeypatch.setenv("COPAL_GENERATOR", "offline/heuristic")
    result = cli("run", "ground", "--all")
    assert result.exit_code == 0, result.output
    conn = sqlite3.connect(initialised)
    assert conn.execute("SELECT COUNT(*) FROM clauses").fetchone()[0] > 0
    manifest = json.loads(conn.execute("SELECT manifest FROM runs").fetchone()[0])
    assert manifest["options"]["generator"] == "offline/heuristic"
