"""A suite's provenance in the report comes from its descriptor alone: the roles its runs'
options give (`Suite.provenance_roles`, with the value a run that recorded its options but not
that one used) and what its stored rows say besides the runs (`Report.provenance`: models they
name in a role, rows imported without a run), read with the report's world scope.

The probe suite below is the fourth suite (`tests/fourth_suite.py`) given one stage and those
two parts; its runs are written into the store as a stage would leave them, and the report is
read through `copal report --json`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.report_rows import SuiteExtras
from copal_tui.domain.suites import Report, Stage, Suite, register, unregister
from store.db import Database
from store.report.scope import world_scope
from tests import fourth_suite
from tests.db_support import query_rows
from tests.test_metrics_fixture import W, build_fixture, fixture_records
from tests.test_metrics_provenance_scope import W2, _second_world

NAME = "provenance_probe"
STAGE = "provenance_probe_write"
ROLES = {STAGE: {"probe.writer": ("edge_writer", "earlier")}}


def extras(db: Database, worlds: list[str] | None) -> SuiteExtras:
    """The probe's stored provenance: the models its worlds' responses name, read as
    pre-filters, and its worlds' policies, counted as imported."""
    i_where, i_params = world_scope(worlds, "i.world_id")
    models = [r[0] for r in db.execute(
        "SELECT DISTINCT r.model FROM responses r JOIN items i ON i.id = r.item_id "
        f"WHERE 1 = 1{i_where} ORDER BY 1", i_params).fetchall()]
    p_where, p_params = world_scope(worlds, "world_id")
    policies = db.execute(f"SELECT COUNT(*) FROM policies WHERE 1 = 1{p_where}",
                          p_params).fetchone()[0]
    return SuiteExtras({"prefilter": models}, {"policies": int(policies)})


def probe(**parts: Any) -> Suite:
    return replace(fourth_suite.SPEC, name=NAME, commands={},
                   stages=(Stage(STAGE, f"{__name__}:never_run"),),
                   options=f"{__name__}:NoOptions", **parts)


@pytest.fixture
def registered(request: pytest.FixtureRequest) -> Iterator[None]:
    register(probe(**request.param))
    try:
        yield
    finally:
        unregister(NAME)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Two worlds imported without runs; three of w1's items written by probe runs: one that
    recorded its writer, one that recorded its options without the writer (an earlier run),
    one that recorded no options of the suite."""
    db = build_fixture(tmp_path, fixture_records() + _second_world())
    with closing(sqlite3.connect(db)) as conn, conn:
        items = [r[0] for r in conn.execute(
            "SELECT id FROM items WHERE world_id = ? ORDER BY id LIMIT 3", (W,))]
        manifests = ({"probe": {"writer": "w-new"}}, {"probe": {}}, {})
        for n, (item, options) in enumerate(zip(items, manifests, strict=True)):
            conn.execute("INSERT INTO runs (id, stage, status, started_at, manifest) "
                         "VALUES (?, ?, 'done', ?, ?)",
                         (f"run{n}", STAGE, f"2026-01-0{n + 1}",
                          json.dumps({"options": options})))
            conn.execute("UPDATE items SET run_id = ? WHERE id = ?", (f"run{n}", item))
    return db


def provenance(db: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["--db", str(db), "report", "--json", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["scope"]["provenance"]


def _models(db: Path, world: str) -> list[str]:
    return [r["model"] for r in query_rows(
        db, "SELECT DISTINCT r.model FROM responses r JOIN items i ON i.id = r.item_id "
            "WHERE i.world_id = ? ORDER BY 1", (world,))]


HOOKS = {"provenance_roles": ROLES, "report": Report(sections=("probe",),
                                                     provenance=f"{__name__}:extras")}


@pytest.mark.parametrize("registered", [HOOKS], indirect=True)
def test_a_suite_names_its_roles_and_stored_models_through_its_descriptor(registered, store):
    found = provenance(store)[NAME]
    # The run without the suite's options names no writer; the earlier run the earlier way.
    assert found["edge_writer"] == ["earlier", "w-new"]
    assert found["prefilter"] == sorted({*_models(store, W), *_models(store, W2)})
    assert found["imported"] == {f"{NAME}:policies": 5}  # w1's four policies and w2's one
    assert found["sections"] == ["probe"]
    # Scoped to w2, which the probe runs wrote nothing in: its rows alone.
    scoped = provenance(store, "--world", W2)[NAME]
    assert "edge_writer" not in scoped
    assert scoped["prefilter"] == _models(store, W2) == ["A"]
    assert scoped["imported"] == {f"{NAME}:policies": 1}


@pytest.mark.parametrize("registered", [{"report": Report(sections=("probe",))}], indirect=True)
def test_without_the_descriptor_parts_the_same_runs_name_no_role(registered, store):
    found = provenance(store)[NAME]
    assert "edge_writer" not in found
    assert found["prefilter"] == [] and found["imported"] == {}
