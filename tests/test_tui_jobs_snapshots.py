"""Snapshots of the jobs screen: the new-job form at 80x24, past runs with a manifest at 120x40,
and a finished two-stage job's progress at 80x24. Every value shown is fixed by the test (run
rows are written with fixed ids and times; the job is built from fixed progress), so the
pictures do not depend on the clock or the machine.

Regenerate with `pytest tests/test_tui_jobs_snapshots.py --snapshot-update` after checking the
screen by eye.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from copal_tui.pipeline.base import Options, Progress
from copal_tui.tui import app as app_module
from copal_tui.tui.app import make_app
from copal_tui.tui.job_manager import Job, JobManager


@pytest.fixture(autouse=True)
def start_on_jobs(monkeypatch):
    monkeypatch.setitem(app_module.START, "browse", "jobs")


@pytest.fixture
def two_worlds(cli, initialised, samples) -> Path:
    result = cli("import", *(str(samples / f"{w}.{ext}") for w in ("harbor_clinics",
                                                                     "meridian_bank")
                             for ext in ("yaml", "jsonl")))
    assert result.exit_code == 0, result.output
    return initialised


def _fixed_runs(db: Path) -> None:
    manifest = {
        "stage": "judge", "tool_version": "0.1.0", "schema_version": "m003",
        "litellm_version": "1.0.0", "pid": 1, "host": "example",
        "options": {"worlds": ["harbor-clinics"], "models": [], "judges": ["offline/judge"],
                    "modes": ["contract"], "generator": "offline/heuristic", "budget": 30,
                    "variants": 2, "concurrency": 8},
        "counts": {"judged": 46}, "prompt_versions": {"judge_contract": "0" * 12},
        "errors": [{"unit": "r7", "reason": "judge_contract: invalid JSON | raw: [b]oops[/b]"},
                   {"unit": "r9", "reason": "judge_contract: timeout"}],
        "error_count": 2,
    }
    rows = [
        ("respond-20260101T090000-aaaaaa", "respond", "done", "2026-01-01T09:00:00.000000Z",
         "2026-01-01T09:00:05.000000Z", 12, 0, 0, 0.0, {**manifest, "stage": "respond",
                                                         "errors": [], "error_count": 0}),
        ("judge-20260101T090010-bbbbbb", "judge", "failed", "2026-01-01T09:00:10.000000Z",
         "2026-01-01T09:00:30.000000Z", 48, 12, 2, 0.0123, manifest),
        ("judge-20260101T090100-cccccc", "judge", "cancelled", "2026-01-01T09:01:00.000000Z",
         "2026-01-01T09:01:03.000000Z", 3, 0, 0, 0.0, {**manifest, "errors": [],
                                                        "error_count": 0}),
    ]
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany("INSERT INTO runs (id, stage, status, started_at, finished_at, calls, "
                         "cache_hits, failures, cost, manifest) VALUES (?,?,?,?,?,?,?,?,?,?)",
                         [(*r[:-1], json.dumps(r[-1])) for r in rows])
    conn.close()


def test_jobs_form_80x24(snap_compare, two_worlds):
    assert snap_compare(make_app(two_worlds), terminal_size=(80, 24))


def test_jobs_runs_with_manifest_120x40(snap_compare, two_worlds):
    _fixed_runs(two_worlds)
    assert snap_compare(make_app(two_worlds), press=["ctrl+o", "down"],
                        terminal_size=(120, 40))


def test_jobs_finished_job_80x24(snap_compare, two_worlds):
    async def add_job(pilot) -> None:
        opts = Options(worlds=["harbor-clinics"], models=["offline/refuse-all"],
                       judges=["offline/judge"])
        job = Job(id=1, stages=["respond", "judge"], opts=opts, status="cancelled")
        job.progress = {
            "respond": Progress("respond", "respond-x", done=12, total=12, calls=12,
                                cache_hits=4, status="done"),
            "judge": Progress("judge", "judge-x", done=20, total=48, failures=1, calls=20,
                              cache_hits=0, cost=0.0042, status="cancelled"),
        }
        JobManager.of(pilot.app).jobs.append(job)
        pilot.app.action_open("jobs")  # type: ignore[attr-defined]
        await pilot.pause()

    assert snap_compare(make_app(two_worlds), run_before=add_job, terminal_size=(80, 24))
