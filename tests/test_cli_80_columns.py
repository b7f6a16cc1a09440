"""CLI tables at 80 (and 120) columns, through the CLI runner with COLUMNS set: no line is wider
than the terminal, every number a table prints is whole on one line (each value of the JSON
report, formatted to 3 decimals, is found in the terminal text), every judge-validity metric is
shown with its interval, and `copal runs` shows every run id whole (or says how to: --wide,
--json).

The store: the metrics fixture with long, realistic model and judge names, a COMPASS suite run
offline, and the CompliBench sample dialogues with their sample judge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir
from tests.test_metrics_fixture import build_fixture, fixture_records

# Names as long as real ones: the columns they head must not push numbers apart.
NAMES = {"A": "anthropic/claude-3-5-sonnet-20241022", "B": "openai/gpt-4o-mini-2024-07-18",
         "J1": "openai/gpt-4.1-judge", "J2": "together/llama-3.3-70b-instruct-judge"}
REPORT = ("report", "--bootstrap", "40", "--seed", "3")


def _renamed(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    for key in ("model", "judge"):
        if key in out:
            out[key] = NAMES.get(out[key], out[key])
    for key in ("id", "response_id"):
        if out.get("type") in ("response", "label", "adjudication", "judgment") and key in out:
            head, sep, tail = str(out[key]).partition(":")
            if sep and head in NAMES:
                out[key] = f"{NAMES[head]}:{tail}"
    return out


def run(db: Path, *args: str, columns: int) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args],
                                env={"COLUMNS": str(columns)}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = build_fixture(tmp_path_factory.mktemp("columns"),
                       [_renamed(r) for r in fixture_records()])
    samples = sample_worlds_dir()
    run(db, "import", "--from", "compass", str(samples / "compass"), columns=80)
    run(db, "run", "compass", "--world", "kestrelpharmacy", "--model", "offline/keyword-guard",
        "--judge", "offline/judge", "--per-policy", "1", "--generator", "offline/heuristic",
        columns=80)
    run(db, "import", "--from", "complibench", str(samples / "complibench"), columns=80)
    run(db, "import", "--from", "complibench-judge", "--judge", "sample-judge",
        str(samples / "complibench"), columns=80)
    return db


def f3(value: Any) -> str | None:
    return None if value is None or value != value else f"{value:.3f}"


def interval(ci: dict[str, Any] | None) -> str | None:
    low, high = f3((ci or {}).get("low")), f3((ci or {}).get("high"))
    return None if low is None or high is None else f"[{low}, {high}]"


VALIDITY = ("agreement", "precision", "recall", "f1", "kappa", "fn_rate", "fp_rate")


def printed_values(doc: dict[str, Any]) -> tuple[set[str], set[str]]:
    """What the terminal report must show whole: single values, and `value [low, high]`
    pairs (every judge-validity metric, overall and by pattern, with its interval)."""
    values: set[str] = set()
    with_ci: set[str] = set()

    def add(*xs: Any) -> None:
        values.update(v for v in map(f3, xs) if v is not None)

    for r in [*doc["error_rates"], doc["overall"]]:
        add(r["error_rate"], r["ci_low"], r["ci_high"])
        for key in ("by_pattern", "by_facet", "by_world"):
            add(*(cell["error_rate"] for cell in r.get(key, {}).values()))
    for a in doc["facet_atlas"].values():
        add(a["under_enforcement_share"], a["over_enforcement_share"], a["mixed_share"])
    for r in doc["paired_contrast"]:
        add(r["single_error_rate"], r["composed_error_rate"], r["composition_induced_rate"])
    for v in doc["judge_validity"]:
        for block in [v, *v["by_pattern"].values()]:
            for key in VALIDITY:
                add(block[key])
                bounds = interval(block["ci"].get(key))
                if f3(block[key]) is not None and bounds is not None:
                    with_ci.add(f"{f3(block[key])} {bounds}")
    add(*(p["kappa"] for p in doc["human_agreement"]["pairwise"]))
    add(*(r["error_rate"] for r in doc["judge_sensitivity"]))
    add(*(m["corrected_error_rate"] for m in doc["corrected_error_rates"]["models"]))
    add(*(r["pas"] for r in doc.get("pas", []) if r["n"]))
    for r in doc.get("dialogue_judging", []):
        add(r["compliant_turn_accuracy"], r["violation_detection_accuracy"],
            r["conversation_accuracy"])
    return values, with_ci


def whole(number: str, text: str) -> bool:
    """`number` printed on one line, not as part of a longer number."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) is not None


def assert_fits(text: str, columns: int) -> None:
    wide = [line for line in text.splitlines() if len(line) > columns]
    assert not wide, f"{len(wide)} line(s) wider than {columns}: {wide[:3]}"


@pytest.mark.parametrize("columns", [80, 120])
def test_report_fits_and_prints_every_number_whole(store, columns):
    text = run(store, *REPORT, columns=columns)
    assert_fits(text, columns)
    doc = json.loads(run(store, *REPORT, "--json", columns=columns))
    values, with_ci = printed_values(doc)
    assert len(values) >= 20 and len(with_ci) >= 20  # the store fills the report
    missing = sorted(v for v in values if not whole(v, text))
    assert not missing, missing
    # Every judge-validity metric with its interval, the two on one line.
    missing = sorted(v for v in with_ci if v not in text)
    assert not missing, missing
    for name in NAMES.values():
        assert name in text  # long names are shown whole (in a table, a legend or a heading)


def test_rich_follows_columns_in_the_runner(store):
    narrow, wide = (run(store, *REPORT, columns=c) for c in (80, 120))
    assert max(map(len, narrow.splitlines())) <= 80 < max(map(len, wide.splitlines())) <= 120


def test_runs_shows_whole_ids_at_80_columns(store):
    runs = json.loads(run(store, "runs", "--json", columns=80))
    ids = [r["id"] for r in runs]
    assert len(ids) == 4 and all(len(i) > 30 for i in ids)  # compass_generate-2026...-abcdef
    text = run(store, "runs", columns=80)
    assert_fits(text, 80)
    assert "\u2026" not in text  # nothing elided
    assert all(any(line.startswith(i) for line in text.splitlines()) for i in ids)
    assert "copal runs --wide" in text and "--json" in text
    for r in runs:
        assert whole(str(r["calls"]), text)
    # --wide: one line per run with every column, however narrow the terminal.
    lines = run(store, "runs", "--wide", columns=80).splitlines()
    for r in runs:
        [line] = [ln for ln in lines if r["id"] in ln]
        assert r["status"] in line and f"${r['cost']:.4f}" in line


def test_runs_is_a_table_where_it_fits(store):
    text = run(store, "runs", columns=160)
    assert_fits(text, 160)
    for r in json.loads(run(store, "runs", "--json", columns=160)):
        [line] = [ln for ln in text.splitlines() if r["id"] in ln]
        assert r["status"] in line and whole(str(r["cache_hits"]), line)
    assert "--wide" not in text


def test_stats_fits_80_columns(store):
    text = run(store, "stats", columns=80)
    assert_fits(text, 80)
    assert "what" in text and "count" in text
