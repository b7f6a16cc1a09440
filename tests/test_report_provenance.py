"""No figure comes silently from heuristics: a suite built and judged by the offline engine is
named, with a visible "heuristic" caveat, in every report form; a language-model judge is
preferred as the primary judge, and reference bots are not pooled with real targets.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

GEN = ("--generator", "offline/heuristic")


@pytest.fixture
def offline_db(cli, initialised, samples):
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    for args in (("run", "ground", "compose", "generate", "select", "--all", *GEN),
                 ("run", "respond", "--all", "--model", "offline/keyword-guard"),
                 ("run", "judge", "--all", "--judge", "offline/judge")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    return initialised


def test_every_report_form_names_the_heuristic_models(cli, offline_db, tmp_path):
    doc = json.loads(cli("report", "--json").stdout)
    prov = doc["scope"]["provenance"]["copal"]
    assert prov["generator"] == ["offline/heuristic"]
    assert prov["judge"] == ["offline/judge"] and prov["target"] == ["offline/keyword-guard"]
    assert "HEURISTIC" in prov["caveat"]
    assert "offline heuristic judge" in doc["scope"]["primary_judge_reason"]
    terminal = cli("report").stdout
    assert "HEURISTIC" in terminal and "generator: offline/heuristic (heuristic)" in terminal
    for fmt in ("md", "csv", "latex"):
        out = cli("report", "--format", fmt).stdout
        assert "HEURISTIC" in out and "offline/heuristic" in out, fmt
    assert cli("export", "--format", "json", "--out", str(tmp_path / "e")).exit_code == 0
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert "HEURISTIC" in manifest["scope"]["provenance"]["copal"]["caveat"]


def test_a_language_model_judge_is_primary_and_bots_are_not_pooled(cli, offline_db):
    # A real target and a language-model judge, written as if imported: the bot's responses
    # copied under a real model's name, and a judge that judged only those (fewer judgments
    # than the offline judge, which judged the bot's).
    conn = sqlite3.connect(offline_db)
    conn.execute("INSERT INTO responses (id, item_id, model, variant, text, created_at) "
                 "SELECT id || '+real', item_id, 'acme/real-bot', variant, text, created_at "
                 "FROM responses")
    conn.execute("INSERT INTO judgments (id, response_id, judge, mode, observed, error, "
                 "direction, created_at) SELECT id || '+lm', response_id || '+real', "
                 "'acme/judge-lm', mode, observed, error, direction, created_at FROM judgments "
                 "WHERE judge = 'offline/judge' AND rowid % 2 = 0")
    conn.execute("INSERT INTO judgments (id, response_id, judge, mode, observed, error, "
                 "direction, created_at) SELECT id || '+lm2', response_id, 'acme/judge-lm', "
                 "mode, observed, error, direction, created_at FROM judgments "
                 "WHERE judge = 'offline/judge' AND rowid % 2 = 0")
    conn.commit()
    conn.close()
    doc = json.loads(cli("report", "--json").stdout)
    usable = {s["judge"]: s["usable"] for s in doc["scope"]["judge_settings"]}
    assert usable["acme/judge-lm"] < usable["offline/judge"]
    # Fewer judgments, yet the language-model judge is primary, and the report says why.
    assert doc["scope"]["primary_judge"]["judge"] == "acme/judge-lm"
    assert "preferred over the offline heuristic judge" in doc["scope"]["primary_judge_reason"]
    rows = {r["model"]: r for r in doc["error_rates"]}
    assert rows["offline/keyword-guard"]["reference_bot"] is True
    assert rows["acme/real-bot"]["reference_bot"] is False
    # Pooled rows are the real target's alone.
    assert doc["overall"]["models"] == ["acme/real-bot"]
    assert doc["overall"]["n"] == rows["acme/real-bot"]["n"]
    assert any(e["section"] == "overall" and "reference bot" in e["reason"]
               for e in doc["exclusions"])
