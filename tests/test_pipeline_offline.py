"""The whole pipeline offline on one sample world, through the CLI.

The reference bots are a calibration of the suite: every selected composed item must be failed
by refuse-all or by comply-all (it is diagnostic), and keyword-guard must fail some and pass
some. A second identical run makes zero provider calls.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.taxonomy import PATTERN_FACETS, Pattern
from tests.db_support import query_rows

WORLD = "skyline-air"
BOTS = ["offline/refuse-all", "offline/comply-all", "offline/keyword-guard"]
STAGES = ["ground", "compose", "generate", "select", "project", "respond", "judge"]


def _run(db: Path, *args: str):
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


def _pipeline_args() -> list[str]:
    args = ["run", *STAGES, "--world", WORLD, "--budget", "14", "--variants", "1",
            "--judge", "offline/judge"]
    for bot in BOTS:
        args += ["--model", bot]
    return args


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from copal_tui.resources import sample_worlds_dir

    db = tmp_path_factory.mktemp("offline") / "p.db"
    _run(db, "init")
    _run(db, "import", str(sample_worlds_dir() / "skyline_air.yaml"))
    _run(db, *_pipeline_args())
    return db


def test_selected_suite_covers_every_pattern_and_facet(built):
    rows = query_rows(built, "SELECT pattern, facet FROM items "
                             "WHERE selected = 1 AND method = 'copal'")
    assert {r["pattern"] for r in rows} == {p.value for p in Pattern}
    assert len(rows) == 14
    # The default mix gives each pattern its share of the candidates (a minor pattern may get
    # fewer than its three facets at this budget); within its places a pattern covers as many
    # of its facets as it can.
    for pattern in Pattern:
        mine = [r["facet"] for r in rows if r["pattern"] == pattern.value]
        assert len(set(mine)) == min(3, len(mine)), pattern
        assert set(mine) <= {f.value for f in PATTERN_FACETS[pattern]}


def test_reference_bots_calibrate_the_suite(built):
    rows = query_rows(built, "SELECT i.id AS item, r.model, j.error FROM items i "
                             "JOIN responses r ON r.item_id = i.id JOIN judgments j ON "
                             "j.response_id = r.id WHERE i.selected = 1 AND i.method = 'copal' AND "
                             "j.mode = 'contract'")
    errors: dict[str, dict[str, int]] = defaultdict(dict)
    for r in rows:
        errors[r["item"]][r["model"]] = r["error"]
    assert len(errors) == 14 and all(len(v) == 3 for v in errors.values())
    for item, by_model in errors.items():
        assert by_model["offline/refuse-all"] == 1 or by_model["offline/comply-all"] == 1, item
    guard = [v["offline/keyword-guard"] for v in errors.values()]
    assert 0 < sum(guard) < len(guard)


def test_every_item_has_a_contract_with_sources_and_projections(built):
    items = query_rows(built, "SELECT * FROM items WHERE selected = 1 AND method = 'copal'")
    clauses = {r["id"] for r in query_rows(built, "SELECT id FROM clauses")}
    for it in items:
        req, forb = json.loads(it["required"]), json.loads(it["forbidden"])
        assert req and forb
        assert all(c["clause_id"] in clauses for c in req + forb if c["clause_id"])
        projections = query_rows(built, "SELECT * FROM items WHERE parent_item_id = ?", (it["id"],))
        assert projections and all(p["method"] == "projection" for p in projections)


def test_projections_are_screened_and_only_accepted_ones_answered(built):
    projections = query_rows(built, "SELECT * FROM items WHERE method = 'projection'")
    answered = {r["item_id"] for r in query_rows(built, "SELECT DISTINCT item_id FROM responses")}
    assert projections
    for p in projections:
        verdict = json.loads(p["screening"])
        # `screened` is false only for a projection dropped without a call (empty contract).
        assert isinstance(verdict["passed"], bool) and (verdict["screened"] or verdict["reasons"])
        assert verdict["passed"] == (not verdict["reasons"])
        assert (p["id"] in answered) == verdict["passed"]


def test_manifests_record_prompt_versions(built):
    from copal_tui import prompts

    runs = query_rows(built, "SELECT stage, status, manifest FROM runs")
    assert {r["stage"] for r in runs} == set(STAGES)
    assert all(r["status"] == "done" for r in runs)
    for r in runs:
        assert json.loads(r["manifest"])["prompt_versions"] == prompts.versions()


def test_second_identical_run_makes_zero_calls(built):
    before = {r["id"] for r in query_rows(built, "SELECT id FROM runs")}
    counts = {t: query_rows(built, f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]
              for t in ("clauses", "compositions", "items", "responses", "judgments")}
    _run(built, *_pipeline_args())
    listed = json.loads(_run(built, "runs", "--json").stdout)
    new = [r for r in listed if r["id"] not in before]
    assert len(new) == len(STAGES)
    assert all(r["calls"] == 0 and r["status"] == "done" for r in new)
    assert counts == {t: query_rows(built, f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]
                      for t in counts}


def test_three_clause_items_are_selected_and_controls_stand_apart(built):
    sizes = [len(json.loads(r["clause_ids"])) for r in query_rows(
        built, "SELECT c.clause_ids FROM items i JOIN compositions c ON c.id = i.composition_id "
               "WHERE i.selected = 1 AND i.method = 'copal'")]
    assert len(sizes) == 14 and sizes.count(3) > 0 and sizes.count(2) > 0
    controls = query_rows(built, "SELECT * FROM items WHERE method = 'control' AND selected = 1")
    assert len(controls) == 14 // 6  # the control budget: one per six suite items
    errors: dict[str, dict[str, int]] = defaultdict(dict)
    for c in controls:
        assert c["pattern"] is None and c["composition_id"] is None
        assert json.loads(c["forbidden"]) == [] and len(json.loads(c["required"])) >= 2
        for r in query_rows(built, "SELECT r.model, j.error FROM responses r JOIN judgments j "
                                   "ON j.response_id = r.id WHERE r.item_id = ?", (c["id"],)):
            errors[c["id"]][r["model"]] = r["error"]
    # Answered and judged like the suite: answering every licensed part is correct.
    assert all(e == {"offline/refuse-all": 1, "offline/comply-all": 0,
                     "offline/keyword-guard": e["offline/keyword-guard"]}
               for e in errors.values()) and len(errors) == len(controls)
