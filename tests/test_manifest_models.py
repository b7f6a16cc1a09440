"""The export's manifest and the report say the same thing about where the figures come from:
the same runs, and each run's models in the role its stage calls them in (a judge run given a
generator names its judge, never the generator), read from one typed run manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.db_support import query_rows

WORLD = "kestrelpharmacy"
ROLES = ("generator", "verifier", "prefilter", "target", "judge")


@pytest.fixture
def exported(cli, initialised: Path, samples: Path, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    assert cli("import", "--from", "compass", str(samples / "compass")).exit_code == 0
    built = cli("run", "compass_generate", "compass_verify", "compass_respond", "--world",
                WORLD, "--model", "offline/comply-all", "--generator", "offline/heuristic",
                "--per-policy", "1", "--variant", "base", "--variant", "pre-filter",
                "--prefilter", "offline/prefilter")
    assert built.exit_code == 0, built.output
    # A judge run given a generator by COPAL_GENERATOR (its manifest's options record it): it
    # never calls it.
    monkeypatch.setenv("COPAL_GENERATOR", "gen/G")
    judged = cli("run", "compass_judge", "--world", WORLD, "--judge", "offline/judge")
    assert judged.exit_code == 0, judged.output
    out = tmp_path / "export"
    done = cli("export", "--format", "json", "--out", f"{out}/")
    assert done.exit_code == 0, done.output
    return (json.loads((out / "manifest.json").read_text(encoding="utf-8")),
            json.loads((out / "report.json").read_text(encoding="utf-8")))


def test_a_judge_run_is_named_by_its_judge_in_the_manifest(exported, initialised):
    manifest, _report = exported
    [judge_run] = query_rows(initialised,
                             "SELECT id, manifest FROM runs WHERE stage = 'compass_judge'")
    assert json.loads(judge_run["manifest"])["options"]["generator"] == "gen/G"
    [entry] = [r for r in manifest["runs"] if r["id"] == judge_run["id"]]
    assert entry["models"] == ["offline/judge"]
    assert entry["models_by_role"] == {"judge": ["offline/judge"]}
    assert "gen/G" not in manifest["models"]
    assert all("gen/G" not in r["models"] for r in manifest["runs"])
    [respond] = [r for r in manifest["runs"] if r["stage"] == "compass_respond"]
    assert respond["models_by_role"] == {"target": ["offline/comply-all"],
                                         "prefilter": ["offline/prefilter"]}


def test_the_manifest_names_the_runs_and_models_the_report_names(exported, initialised):
    manifest, report = exported
    stored = {r["id"] for r in query_rows(initialised, "SELECT id FROM runs")}
    assert {r["id"] for r in manifest["runs"]} == stored  # every run wrote a row in scope
    provenance = report["scope"]["provenance"]
    for role in ROLES:
        named = sorted({m for suite in provenance.values() for m in suite[role]})
        assert manifest["models_by_role"][role] == named, role
    assert provenance["compass"]["judge"] == ["offline/judge"]
    assert provenance["compass"]["generator"] == ["offline/heuristic"]
