"""`copal report --json` with dialogues: `dialogue_judging` and `dialogue_error_taxonomy`,
checked against the hand-worked figures in sample_worlds/complibench/README.md."""

from __future__ import annotations

import json

import pytest

from copal_tui.domain.dialogue import ERROR_TYPES


@pytest.fixture
def judged(cli, initialised, samples):
    root = str(samples / "complibench")
    assert cli("import", "--from", "complibench", root).exit_code == 0
    assert cli("import", "--from", "complibench-judge", "--judge", "sample-judge",
               root).exit_code == 0
    return initialised


def test_report_has_the_readme_figures(cli, judged):
    doc = json.loads(cli("report", "--json").stdout)
    rows = {r["domain"]: r for r in doc["dialogue_judging"]}
    assert set(rows) == {"telecom", "clinic", "all"}
    for r in rows.values():
        assert {"judge", "domain", "conversations", "compliant_turn_accuracy",
                "violation_detection_accuracy", "conversation_accuracy", "attempts"} <= set(r)
        assert r["judge"] == "sample-judge" and r["attempts"] == 2
    # The sample README's hand count: every tagged turn, both attempts' files pooled.
    assert rows["telecom"]["compliant_turn_accuracy"] == pytest.approx(29 / 32)
    assert rows["clinic"]["compliant_turn_accuracy"] == pytest.approx(24 / 26)
    assert rows["all"]["compliant_turn_accuracy"] == pytest.approx(53 / 58)
    assert rows["all"]["violation_detection_accuracy"] == pytest.approx(4 / 6)
    assert rows["all"]["strict_violation_detection_accuracy"] == pytest.approx(0.5)
    assert rows["all"]["conversation_accuracy"] == pytest.approx(0.25)
    assert rows["all"]["conversations"] == 6
    # No reviews yet: every error type is listed with a zero count.
    tax = [t for t in doc["dialogue_error_taxonomy"] if t["domain"] == "all"]
    assert {t["error_type"] for t in tax} == set(ERROR_TYPES)
    assert all(t["count"] == 0 for t in tax)


def test_report_without_dialogues_has_no_dialogue_keys(cli, initialised, samples):
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    doc = json.loads(cli("report", "--json").stdout)
    assert "dialogue_judging" not in doc and "dialogue_error_taxonomy" not in doc


def test_failed_attempt_is_an_exclusion_not_a_score(cli, judged):
    from store.db import connect, write

    db = connect(judged)
    with write(db):
        db.execute("UPDATE dialogue_attempts SET failure = 'timeout' WHERE attempt = 2")
    doc = json.loads(cli("report", "--json").stdout)
    rows = {r["domain"]: r for r in doc["dialogue_judging"]}
    assert rows["all"]["attempts"] == 1
    # attempt 1 alone (README): compliant 27/29, conversation accuracy 2/6
    assert rows["all"]["compliant_turn_accuracy"] == pytest.approx(27 / 29)
    assert rows["all"]["conversation_accuracy"] == pytest.approx(2 / 6)
    ex = [e for e in doc["exclusions"] if e["section"] == "dialogue_judging"]
    assert ex and ex[0]["reason"] == "timeout" and ex[0]["count"] == 6


def test_terminal_report_and_markdown_export_show_the_dialogue_tables(cli, judged, tmp_path):
    shown = cli("report")
    assert shown.exit_code == 0 and "Dialogue judging" in shown.stdout
    assert "sample-judge" in shown.stdout
    out = tmp_path / "md"
    assert cli("export", "--format", "md", "--out", str(out)).exit_code == 0
    text = "".join(f.read_text(encoding="utf-8") for f in out.rglob("*.md"))
    assert "Dialogue judging" in text and "scope_misattribution" in text
